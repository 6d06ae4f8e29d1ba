package main

// The egress section: a download from a host-loopback server through the
// bridge and the proxy against the same download by curl on the host, and
// the time to first byte of a small HTTPS request through the proxy
// against direct. Both sides run curl; the sandboxed side runs it under
// gatehouse exec with the proxy variables the sandbox sets.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func runEgress(gh string, nbytes int64, rounds, n int) error {
	dir, err := os.MkdirTemp("/var/tmp", "gatehouse-bench-egress-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}

	zeros := make([]byte, 1<<20)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for size > 0 {
			k := min(size, int64(len(zeros)))
			if _, err := w.Write(zeros[:k]); err != nil {
				return
			}
			size -= k
		}
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	quiet := log.New(io.Discard, "", 0)

	plainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go (&http.Server{Handler: mux, ErrorLog: quiet}).Serve(plainLn)
	defer plainLn.Close()

	caPEM, cert, err := benchCert()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "ca.pem"), caPEM, 0o644); err != nil {
		return err
	}
	tlsLn, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return err
	}
	go (&http.Server{Handler: mux, ErrorLog: quiet}).Serve(tlsLn)
	defer tlsLn.Close()
	plain, secure := plainLn.Addr().String(), tlsLn.Addr().String()

	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("exec:\n  default_cwd: %s\npolicy:\n  egress_allowlist: [%q, %q]\n", ws, plain, secure)), 0o644)
	env := append(os.Environ(), "GATEHOUSE_CONFIG="+cfg)
	// The host side must not go through any proxy of the caller's.
	hostEnv := append([]string{}, env...)
	hostEnv = append(hostEnv, "http_proxy=", "https_proxy=", "HTTPS_PROXY=", "ALL_PROXY=", "all_proxy=", "NO_PROXY=*", "no_proxy=*")

	run := func(sandboxed bool, script string) (string, error) {
		var cmd *exec.Cmd
		if sandboxed {
			cmd = exec.Command(gh, "exec", "--cwd", ws, "--", script)
			cmd.Env = env
		} else {
			cmd = exec.Command("/bin/bash", "--noprofile", "--norc", "-c", script)
			cmd.Env = hostEnv
		}
		cmd.Dir = ws
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("%s: %v: %s%s", script, err, out, stderr.String())
		}
		return string(out), nil
	}

	// Throughput: curl's own measure of the download, interleaved.
	get := fmt.Sprintf(`curl -sS -o /dev/null -w '%%{size_download} %%{speed_download}\n' 'http://%s/big?n=%d'`, plain, nbytes)
	var through, direct []float64
	for range rounds {
		for _, sandboxed := range []bool{true, false} {
			out, err := run(sandboxed, get)
			if err != nil {
				return err
			}
			var size int64
			var speed float64
			if _, err := fmt.Sscan(out, &size, &speed); err != nil || size != nbytes {
				return fmt.Errorf("download (sandboxed %v): %q", sandboxed, out)
			}
			if sandboxed {
				through = append(through, speed/(1<<20))
			} else {
				direct = append(direct, speed/(1<<20))
			}
		}
	}
	mt, md := medianF(through), medianF(direct)
	fmt.Printf("egress download, %d MiB from host loopback, %d runs each (median):\n", nbytes>>20, rounds)
	fmt.Printf("  %-40s %8.0f MiB/s  (%s)\n", "curl in sandbox, via bridge and proxy", mt, list(through))
	fmt.Printf("  %-40s %8.0f MiB/s  (%s)\n", "curl on the host, direct", md, list(direct))
	ratios := make([]float64, len(through))
	for i := range through {
		ratios[i] = through[i] / direct[i]
	}
	fmt.Printf("  ratio: %.0f%% of direct (target >= 50%%); per round: median %.0f%%, min %.0f%%, max %.0f%%\n",
		100*mt/md, 100*medianF(ratios), 100*slices.Min(ratios), 100*slices.Max(ratios))

	// Time to first byte: each sample is a new curl process, so a new
	// connection (through the proxy: bridge, CONNECT, then TLS).
	const batch = 10
	ttfb := fmt.Sprintf(`for i in $(seq %d); do curl -sS -o /dev/null --cacert ca.pem -w '%%{time_starttransfer}\n' https://%s/small || exit 1; done`, batch, secure)
	var viaProxy, noProxy []time.Duration
	for len(viaProxy) < n {
		for _, sandboxed := range []bool{true, false} {
			out, err := run(sandboxed, ttfb)
			if err != nil {
				return err
			}
			for _, f := range strings.Fields(out) {
				s, err := strconv.ParseFloat(f, 64)
				if err != nil {
					return fmt.Errorf("time to first byte: %q", out)
				}
				d := time.Duration(s * float64(time.Second))
				if sandboxed {
					viaProxy = append(viaProxy, d)
				} else {
					noProxy = append(noProxy, d)
				}
			}
		}
	}
	mp, mn := median(viaProxy), median(noProxy)
	fmt.Printf("time to first byte of a small HTTPS request, new connection each, %d each (median, min, max):\n", len(viaProxy))
	fmt.Printf("  %-40s %8.2f ms  (%.2f .. %.2f)\n", "curl in sandbox, via bridge and proxy", ms(mp), ms(minOf(viaProxy)), ms(maxOf(viaProxy)))
	fmt.Printf("  %-40s %8.2f ms  (%.2f .. %.2f)\n", "curl on the host, direct", ms(mn), ms(minOf(noProxy)), ms(maxOf(noProxy)))
	fmt.Printf("  added: %.2f ms (target <= 2 ms)\n", ms(mp-mn))
	return nil
}

func list(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(s, ", ")
}

// benchCert returns a fresh CA (PEM) and a certificate it issued for
// 127.0.0.1.
func benchCert() ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gatehouse-bench CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
