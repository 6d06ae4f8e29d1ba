package egress

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// downloadSize is the body of one download in BenchmarkMaskDownload.
const downloadSize = 100 << 20

// BenchmarkMaskDownload compares a 100 MiB HTTPS download from a bound
// host, through the terminating proxy (TLS to the client, TLS upstream,
// the response scanned for the value), with the same download through a
// plain tunnel, in one run: the same server, reached by the name a masked
// credential is bound to, or by its address, which no credential is.
// Each download is a new connection.
//
//	go test -run '^$' -bench BenchmarkMask -benchtime 5x ./sandbox/egress
func BenchmarkMaskDownload(b *testing.B) {
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(downloadSize))
		for range downloadSize / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	srv.TLS = &tls.Config{}
	srv.StartTLS()
	b.Cleanup(srv.Close)
	benchMask(b, srv, func(b *testing.B, c *http.Client, url string) {
		b.SetBytes(downloadSize)
		for b.Loop() {
			resp, err := c.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != downloadSize {
				b.Fatalf("read %d bytes: %v", n, err)
			}
		}
	})
}

// BenchmarkMaskFirstByte compares the time to the first byte of a small
// HTTPS response on a new connection, terminated and tunnelled.
func BenchmarkMaskFirstByte(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	srv.TLS = &tls.Config{}
	srv.StartTLS()
	b.Cleanup(srv.Close)
	benchMask(b, srv, func(b *testing.B, c *http.Client, url string) {
		buf := make([]byte, 1)
		for b.Loop() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+maskPlaceholder)
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
}

func benchMask(b *testing.B, srv *httptest.Server, run func(*testing.B, *http.Client, string)) {
	port := maskPort(srv)
	tp, roots := maskProxy(b, port, serverRoots(srv))
	roots.AddCert(srv.Certificate())
	for _, bc := range []struct{ name, host string }{
		{"tunnel", "127.0.0.1"},
		{"terminated", "example.com"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := tp.client(roots)
			c.Timeout = 0
			run(b, c, "https://"+bc.host+":"+port+"/")
		})
	}
}
