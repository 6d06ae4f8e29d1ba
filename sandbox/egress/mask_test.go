package egress

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	xproxy "golang.org/x/net/proxy"
)

const (
	maskValue       = "ghp_realvalue0123456789abcdefghijABCDEF"
	maskPlaceholder = "ghp_PLACEHOLDERzyxwvutsrqponmlkji987654"
)

// testCA returns a CA for the proxy's certificates.
func testCA(t testing.TB) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test egress CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, key
}

// seen is what a test server received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []string
}

func (s *seen) last() (*http.Request, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return nil, ""
	}
	return s.reqs[len(s.reqs)-1], s.body[len(s.body)-1]
}

// echoServer records each request, and answers with the request's
// Authorization header in a header and in its body, the body written in
// two halves with a flush between (a value split across reads).
func maskEchoServer(t *testing.T, h2 bool) (*httptest.Server, *seen) {
	s := &seen{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.body = append(s.body, string(b))
		s.mu.Unlock()
		echo := "auth=" + r.Header.Get("Authorization") + " x=" + r.Header.Get("X-Token") + " q=" + r.URL.Query().Get("token") + "\n"
		w.Header().Set("X-Echo", r.Header.Get("X-Token"))
		w.Header().Set("X-Proto", r.Proto)
		half := len(echo) / 3
		io.WriteString(w, echo[:half])
		w.(http.Flusher).Flush()
		time.Sleep(10 * time.Millisecond)
		io.WriteString(w, echo[half:])
	}))
	srv.EnableHTTP2 = h2
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, s
}

// maskProxy starts a proxy on which maskValue is bound to example.com
// (the test server's name) on port.
func maskProxy(t testing.TB, port string, upstream *x509.CertPool) (*testProxy, *x509.CertPool) {
	ca, key := testCA(t)
	hosts, err := ParseAllowlist([]string{"example.com:" + port}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tp := startProxy(t, []string{"example.com:" + port, "allowed.test:" + port, "127.0.0.1:" + port}, func(o *Options) {
		o.Masking = &Masking{CA: ca, CAKey: key, UpstreamRoots: upstream, Credentials: []MaskedCredential{
			{ID: "github_token", Value: maskValue, Placeholder: maskPlaceholder, Hosts: hosts},
		}}
	})
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return tp, roots
}

func serverRoots(srv *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}

func maskPort(srv *httptest.Server) string {
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

func TestMaskSwaps(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%v", h2), func(t *testing.T) {
			t.Parallel()
			srv, got := maskEchoServer(t, h2)
			port := maskPort(srv)
			tp, roots := maskProxy(t, port, serverRoots(srv))
			c := tp.client(roots)
			c.Transport.(*http.Transport).ForceAttemptHTTP2 = h2
			base := "https://example.com:" + port

			check := func(name string, req *http.Request, wantServer func(*http.Request, string) bool) string {
				t.Helper()
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("%s: %s %s", name, resp.Status, body)
				}
				if strings.Contains(string(body), maskValue) || strings.Contains(fmt.Sprint(resp.Header), maskValue) {
					t.Errorf("%s: the value came back to the client: %q %v", name, body, resp.Header)
				}
				if h2 && resp.Proto != "HTTP/2.0" {
					t.Errorf("%s: client side %s, want HTTP/2.0", name, resp.Proto)
				}
				if want := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2]; resp.Header.Get("X-Proto") != want {
					t.Errorf("%s: upstream spoke %s, want %s", name, resp.Header.Get("X-Proto"), want)
				}
				r, b := got.last()
				if !wantServer(r, b) {
					t.Errorf("%s: the server got %v body %q", name, r.Header, b)
				}
				return string(body)
			}

			req, _ := http.NewRequest("GET", base+"/user", nil)
			req.Header.Set("Authorization", "Bearer "+maskPlaceholder)
			body := check("bearer", req, func(r *http.Request, _ string) bool { return r.Header.Get("Authorization") == "Bearer "+maskValue })
			if body != "auth=Bearer "+maskPlaceholder+" x= q=\n" {
				t.Errorf("echoed body %q, want the placeholder back", body)
			}

			req, _ = http.NewRequest("GET", base+"/basic", nil)
			req.SetBasicAuth("x-access-token", maskPlaceholder)
			check("basic", req, func(r *http.Request, _ string) bool {
				u, p, ok := r.BasicAuth()
				return ok && u == "x-access-token" && p == maskValue
			})

			req, _ = http.NewRequest("GET", base+"/q?token="+url.QueryEscape(maskPlaceholder)+"&a=b", nil)
			req.Header.Set("X-Token", maskPlaceholder)
			check("query and header", req, func(r *http.Request, _ string) bool {
				return r.URL.Query().Get("token") == maskValue && r.Header.Get("X-Token") == maskValue
			})

			// The body goes as written.
			req, _ = http.NewRequest("POST", base+"/post", strings.NewReader("token="+maskPlaceholder))
			check("body", req, func(_ *http.Request, b string) bool { return b == "token="+maskPlaceholder })

			st := tp.Stats()
			if u := st.Placeholders["github_token"]; u.Bound != 3 || u.Elsewhere != 0 {
				t.Errorf("placeholder counts %+v, want 3 bound", u)
			}
		})
	}
}

// A host no masked credential is bound to is tunnelled: its own
// certificate reaches the client, and the placeholder goes as written.
func TestMaskUnboundTunnel(t *testing.T) {
	t.Parallel()
	srv, got := maskEchoServer(t, false)
	port := maskPort(srv)
	tp, _ := maskProxy(t, port, serverRoots(srv))
	// 127.0.0.1 is not bound: the server's own certificate, trusted by its
	// own root alone, is what the client sees.
	c := tp.client(serverRoots(srv))
	req, _ := http.NewRequest("GET", "https://127.0.0.1:"+port+"/", nil)
	req.Header.Set("Authorization", "Bearer "+maskPlaceholder)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !resp.TLS.PeerCertificates[0].Equal(srv.Certificate()) {
		t.Error("the client did not get the server's own certificate")
	}
	if r, _ := got.last(); r.Header.Get("Authorization") != "Bearer "+maskPlaceholder {
		t.Errorf("the unbound host got %q, want the placeholder", r.Header.Get("Authorization"))
	}
	// Over plain http the proxy sees the placeholder go elsewhere.
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	tp2 := startProxy(t, []string{"allowed.test:" + maskPort(plain)}, func(o *Options) { o.Masking = tp.opts.Masking })
	req, _ = http.NewRequest("POST", "http://allowed.test:"+maskPort(plain)+"/", strings.NewReader(strings.Repeat("x", 100)+maskPlaceholder))
	resp, err = tp2.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if u := tp2.Stats().Placeholders["github_token"]; u.Elsewhere != 1 || u.Bound != 0 {
		t.Errorf("placeholder counts %+v, want 1 elsewhere", u)
	}
}

// A bound host whose certificate the upstream roots do not trust is
// refused with a clear error, and gets nothing.
func TestMaskUntrustedUpstream(t *testing.T) {
	t.Parallel()
	srv, got := maskEchoServer(t, false)
	port := maskPort(srv)
	tp, roots := maskProxy(t, port, x509.NewCertPool())
	req, _ := http.NewRequest("GET", "https://example.com:"+port+"/", nil)
	req.Header.Set("Authorization", "Bearer "+maskPlaceholder)
	resp, err := tp.client(roots).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || !strings.Contains(string(body), "presented a certificate the proxy does not trust") || !strings.Contains(string(body), "exec.egress.upstream_ca_files") {
		t.Errorf("got %s %q", resp.Status, body)
	}
	if r, _ := got.last(); r != nil {
		t.Errorf("the untrusted host got a request: %v", r.Header)
	}
}

// A Host header naming another destination than the connection's is
// refused: the value goes to the host decided, never another.
func TestMaskHostMismatch(t *testing.T) {
	t.Parallel()
	srv, got := maskEchoServer(t, false)
	port := maskPort(srv)
	tp, roots := maskProxy(t, port, serverRoots(srv))
	conn := tp.dial(t)
	fmt.Fprintf(conn, "CONNECT example.com:%s HTTP/1.1\r\nHost: example.com:%s\r\n\r\n", port, port)
	buf := make([]byte, 39)
	if _, err := io.ReadFull(conn, buf); err != nil || !bytes.HasPrefix(buf, []byte("HTTP/1.1 200")) {
		t.Fatalf("CONNECT: %q %v", buf, err)
	}
	tc := tls.Client(conn, &tls.Config{ServerName: "example.com", RootCAs: roots})
	fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", maskPlaceholder)
	out, _ := io.ReadAll(tc)
	if !strings.HasPrefix(string(out), "HTTP/1.1 403") || !strings.Contains(string(out), "host_mismatch") {
		t.Errorf("got %q", out)
	}
	if r, _ := got.last(); r != nil {
		t.Errorf("the server got a request: %v", r.Header)
	}
}

func TestUnswapWriter(t *testing.T) {
	t.Parallel()
	creds := []MaskedCredential{{ID: "a", Value: maskValue, Placeholder: maskPlaceholder}, {ID: "b", Value: "sk-abcdefgh", Placeholder: "sk-ZYXWVUTS"}}
	in := "pre " + maskValue + " mid sk-abcdefgh " + maskValue + maskValue + " end sk-abcdefg"
	want := "pre " + maskPlaceholder + " mid sk-ZYXWVUTS " + maskPlaceholder + maskPlaceholder + " end sk-abcdefg"
	for size := 1; size <= len(in); size++ {
		var out bytes.Buffer
		w := &unswapWriter{w: &out, creds: creds}
		for i := 0; i < len(in); i += size {
			w.Write([]byte(in[i:min(i+size, len(in))]))
		}
		w.Close()
		if out.String() != want {
			t.Fatalf("writes of %d bytes: got %q, want %q", size, out.String(), want)
		}
	}
	// Only what may begin a value is held back.
	var out bytes.Buffer
	w := &unswapWriter{w: &out, creds: creds}
	w.Write([]byte("data: {\"ok\":true}\n\n"))
	if out.String() != "data: {\"ok\":true}\n\n" {
		t.Errorf("held back %q", strings.TrimPrefix("data: {\"ok\":true}\n\n", out.String()))
	}
}

func TestSwapHeader(t *testing.T) {
	t.Parallel()
	creds := []MaskedCredential{{ID: "a", Value: maskValue, Placeholder: maskPlaceholder}}
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + maskPlaceholder))
	h := http.Header{
		"Authorization": {"Basic " + basic},
		"X-Api-Key":     {maskPlaceholder},
		"Cookie":        {"a=1; t=" + maskPlaceholder},
		"X-Other":       {"nothing"},
	}
	used := map[string]bool{}
	swapHeader(h, creds, used)
	if d := decodeBasic(h.Get("Authorization")); d != "user:"+maskValue {
		t.Errorf("basic %q", d)
	}
	if h.Get("X-Api-Key") != maskValue || h.Get("Cookie") != "a=1; t="+maskValue || h.Get("X-Other") != "nothing" || !used["a"] {
		t.Errorf("headers %v", h)
	}
}

// A client that does not open with TLS to a bound host's port is
// tunnelled: plain http through CONNECT reaches the server as written.
func TestMaskPlainThroughConnect(t *testing.T) {
	t.Parallel()
	var got http.Header
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, "plain ok")
	}))
	defer plain.Close()
	port := maskPort(plain)
	tp, _ := maskProxy(t, port, nil)
	conn := tp.dial(t)
	fmt.Fprintf(conn, "CONNECT example.com:%s HTTP/1.1\r\n\r\n", port)
	buf := make([]byte, 39)
	if _, err := io.ReadFull(conn, buf); err != nil || !bytes.HasPrefix(buf, []byte("HTTP/1.1 200")) {
		t.Fatalf("CONNECT: %q %v", buf, err)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", maskPlaceholder)
	out, _ := io.ReadAll(conn)
	if !strings.HasSuffix(string(out), "plain ok") || got.Get("Authorization") != "Bearer "+maskPlaceholder {
		t.Errorf("got %q; the server got %v", out, got)
	}
	if u := tp.Stats().Placeholders["github_token"]; u.Elsewhere != 1 || u.Bound != 0 {
		t.Errorf("placeholder counts %+v, want 1 elsewhere", u)
	}
}

// Over SOCKS5 a bound host is terminated the same way.
func TestMaskSOCKS(t *testing.T) {
	t.Parallel()
	srv, got := maskEchoServer(t, false)
	port := maskPort(srv)
	tp, roots := maskProxy(t, port, serverRoots(srv))
	d, err := xproxy.SOCKS5("unix", tp.sock, nil, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{
		DialContext:     func(_ context.Context, network, addr string) (net.Conn, error) { return d.Dial(network, addr) },
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
	req, _ := http.NewRequest("GET", "https://example.com:"+port+"/socks", nil)
	req.Header.Set("Authorization", "Bearer "+maskPlaceholder)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if r, _ := got.last(); r == nil || r.Header.Get("Authorization") != "Bearer "+maskValue {
		t.Errorf("the server did not get the value: %v", r)
	}
	if string(body) != "auth=Bearer "+maskPlaceholder+" x= q=\n" {
		t.Errorf("body %q", body)
	}
}

// A streamed response reaches the client as it comes, full records
// included: the server waits for the client to have its first bytes
// before it sends the rest.
func TestMaskStreams(t *testing.T) {
	t.Parallel()
	got := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("a"), 64<<10)) // four full records
		w.(http.Flusher).Flush()
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			return // the client never saw them
		}
		io.WriteString(w, "end")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	port := maskPort(srv)
	tp, roots := maskProxy(t, port, serverRoots(srv))
	for _, h2 := range []bool{false, true} {
		c := tp.client(roots)
		c.Transport.(*http.Transport).ForceAttemptHTTP2 = h2
		resp, err := c.Get("https://example.com:" + port + "/")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := io.ReadFull(resp.Body, make([]byte, 64<<10)); err != nil {
			t.Fatalf("h2=%v: %v", h2, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("h2=%v: the first bytes took %v", h2, d)
		}
		got <- struct{}{}
		rest, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(rest) != "end" {
			t.Errorf("h2=%v: rest %q", h2, rest)
		}
	}
}

func TestSeenPlaceholders(t *testing.T) {
	t.Parallel()
	p := &Proxy{opts: Options{Masking: &Masking{Credentials: []MaskedCredential{
		{ID: "a", Placeholder: maskPlaceholder}, {ID: "b", Placeholder: "sk-ZYXWVUTS"},
	}}}}
	in := strings.Repeat("x", 100) + maskPlaceholder + strings.Repeat("y", 7) + "sk-ZYXWVUTS" + "z"
	for size := 1; size <= len(in); size++ {
		p.stats = Stats{}
		s := p.newSeen()
		for i := 0; i < len(in); i += size {
			s.scan([]byte(in[i:min(i+size, len(in))]))
		}
		if got := p.stats.Placeholders; got["a"].Elsewhere != 1 || got["b"].Elsewhere != 1 {
			t.Fatalf("reads of %d bytes: %+v", size, got)
		}
	}
	// Nothing is counted where there is none.
	p.stats = Stats{}
	s := p.newSeen()
	s.scan([]byte(maskPlaceholder[:20]))
	s.scan([]byte("different" + maskPlaceholder[20:]))
	if len(p.stats.Placeholders) != 0 {
		t.Errorf("counted %+v", p.stats.Placeholders)
	}
}

// A bound host that compresses its response though the proxy asked for
// none: a coding the standard library decodes (gzip, deflate as zlib or
// raw, stacked) reaches the client decoded and swapped; any other
// (br, zstd, compress) is refused with a 502 naming it; a body that
// stops decoding is cut off. The value never reaches the client.
func TestMaskCompressedRegardless(t *testing.T) {
	t.Parallel()
	// The decoded body: the value the server got, many times over, so
	// that it spans reads of the decoder.
	echo := func(r *http.Request) []byte {
		var b bytes.Buffer
		for i := 0; b.Len() < 200<<10; i++ {
			fmt.Fprintf(&b, "line %d: %s\n", i, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		}
		return b.Bytes()
	}
	encode := func(coding string, b []byte) []byte {
		var out bytes.Buffer
		var w io.WriteCloser
		switch coding {
		case "gzip", "x-gzip":
			w = gzip.NewWriter(&out)
		case "deflate":
			w, _ = zlib.NewWriterLevel(&out, zlib.BestSpeed)
		case "raw-deflate":
			w, _ = flate.NewWriter(&out, flate.BestSpeed)
		default: // not compressed at all: the label alone must stop it
			return b
		}
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /c/<coding>[/<coding>…]: applied in that order, Accept-Encoding
		// or not.
		cs := strings.Split(strings.TrimPrefix(r.URL.Path, "/c/"), "/")
		body := echo(r)
		for _, c := range cs {
			body = encode(c, body)
		}
		if r.URL.Query().Get("corrupt") != "" {
			body = append(body[:len(body)/2], bytes.Repeat([]byte{0xff}, 4096)...)
		}
		w.Header().Set("Content-Encoding", strings.ReplaceAll(strings.Join(cs, ", "), "raw-deflate", "deflate"))
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	port := maskPort(srv)
	tp, roots := maskProxy(t, port, serverRoots(srv))

	// plain is what the client can read out of resp: its body, decoded
	// as its Content-Encoding says, as any HTTP client would.
	plain := func(resp *http.Response) ([]byte, error) {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return b, err
		}
		cs := codings(resp.Header)
		for i := len(cs) - 1; i >= 0; i-- {
			var r io.Reader
			switch cs[i] {
			case "gzip", "x-gzip":
				r, err = gzip.NewReader(bytes.NewReader(b))
			case "deflate":
				if r, err = zlib.NewReader(bytes.NewReader(b)); err != nil {
					r, err = flate.NewReader(bytes.NewReader(b)), nil
				}
			default:
				return b, nil
			}
			if err != nil {
				return b, nil
			}
			if b, err = io.ReadAll(r); err != nil {
				return b, err
			}
		}
		return b, nil
	}

	for _, h2 := range []bool{false, true} {
		c := tp.client(roots)
		tr := c.Transport.(*http.Transport)
		tr.ForceAttemptHTTP2, tr.DisableCompression = h2, true
		get := func(method, path string) (*http.Response, []byte, error) {
			req, _ := http.NewRequest(method, "https://example.com:"+port+path, nil)
			req.Header.Set("Authorization", "Bearer "+maskPlaceholder)
			req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
			resp, err := c.Do(req)
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			b, err := plain(resp)
			if bytes.Contains(b, []byte(maskValue)) || strings.Contains(fmt.Sprint(resp.Header), maskValue) {
				t.Errorf("h2=%v %s %s: the value reached the client", h2, method, path)
			}
			return resp, b, err
		}
		for _, cs := range []string{"gzip", "x-gzip", "deflate", "raw-deflate", "deflate/gzip", "gzip/gzip"} {
			resp, b, err := get("GET", "/c/"+cs)
			if err != nil {
				t.Errorf("h2=%v %s: %v", h2, cs, err)
				continue
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || len(b) < 200<<10 ||
				!bytes.Contains(b, []byte("line 3: "+maskPlaceholder+"\n")) {
				t.Errorf("h2=%v %s: %s, Content-Encoding %q, %d bytes: want 200, decoded, the placeholder back",
					h2, cs, resp.Status, resp.Header.Get("Content-Encoding"), len(b))
			}
		}
		for _, cs := range []string{"br", "zstd", "compress", "gzip/br", "x-unknown"} {
			resp, b, err := get("GET", "/c/"+cs)
			if err != nil {
				t.Errorf("h2=%v %s: %v", h2, cs, err)
				continue
			}
			last := cs[strings.LastIndex(cs, "/")+1:]
			if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("X-Gatehouse-Egress-Rule") != ruleUnrequestedEncoding ||
				!strings.Contains(string(b), fmt.Sprintf("Content-Encoding %q", last)) {
				t.Errorf("h2=%v %s: %s rule %q body %.200q: want 502 %s naming the coding", h2, cs, resp.Status,
					resp.Header.Get("X-Gatehouse-Egress-Rule"), b, ruleUnrequestedEncoding)
			}
		}
		// A body that stops decoding half-way fails at the client.
		if _, b, err := get("GET", "/c/gzip?corrupt=1"); err == nil {
			t.Errorf("h2=%v: a corrupt gzip body read to its end (%d bytes)", h2, len(b))
		}
		// No body, nothing to decode: a HEAD is answered as it came.
		if resp, _, err := get("HEAD", "/c/br"); err != nil || resp.StatusCode != 200 {
			t.Errorf("h2=%v HEAD: %v %v", h2, resp, err)
		}
	}
}
