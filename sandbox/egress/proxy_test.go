package egress

// End-to-end tests of the proxy on the host: clients reach it over a unix
// socket, as the bridge does, and every destination is a server the test
// starts on loopback. Nothing here leaves the machine: names resolve
// through a fake resolver, and names that map elsewhere are refused
// before any dial.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	xproxy "golang.org/x/net/proxy"
)

// loopbackResolver maps the test names to loopback, besides testNames.
var loopbackResolver = func() fakeResolver {
	r := fakeResolver{}
	for k, v := range testNames {
		r[k] = v
	}
	for _, n := range []string{"allowed.test", "other.test", "example.com", "public.test"} {
		r[n] = []string{"127.0.0.1"}
	}
	return r
}()

type testProxy struct {
	*Proxy
	sock string
}

// startProxy serves a proxy on a unix socket; names in loop may reach
// loopback.
func startProxy(t testing.TB, entries []string, mod func(*Options)) *testProxy {
	t.Helper()
	a, err := ParseAllowlist(entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Allowlist:         a,
		Resolver:          loopbackResolver,
		TestLoopbackNames: []string{"allowed.test", "other.test", "example.com"},
	}
	if mod != nil {
		mod(&opts)
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "egress-test-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "p.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(ln) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-served; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve returned %v, want ErrClosed", err)
		}
		os.RemoveAll(dir)
	})
	return &testProxy{p, sock}
}

func (tp *testProxy) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", tp.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// client returns an http.Client that uses the proxy for http and https.
func (tp *testProxy) client(roots *x509.CertPool) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.invalid:3128"}),
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", tp.sock)
			},
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			DisableKeepAlives: true,
		},
		Timeout: 10 * time.Second,
	}
}

// raw sends a request head and returns the response status line, the
// X-Gatehouse-Egress-Rule header and the body.
func (tp *testProxy) raw(t *testing.T, head string) (status, rule, body string) {
	t.Helper()
	c := tp.dial(t)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", head, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, resp.Header.Get("X-Gatehouse-Egress-Rule"), string(b)
}

// echoServer answers with what it saw.
func echoServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s uri=%s conn=%s pa=%s", r.Host, r.RequestURI, r.Header.Get("Connection"), r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(s.Close)
	return s, s.Listener.Addr().(*net.TCPAddr).AddrPort().String()
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlainHTTP(t *testing.T) {
	t.Parallel()
	_, addr := echoServer(t)
	port := portOf(t, addr)
	tp := startProxy(t, []string{"allowed.test:" + port, addr}, nil)
	for _, u := range []string{"http://allowed.test:" + port + "/x?y=1", "http://" + addr + "/z"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
		resp, err := tp.client(nil).Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pu, _ := url.Parse(u)
		want := fmt.Sprintf("host=%s uri=%s conn=close pa=", pu.Host, pu.RequestURI())
		if resp.StatusCode != 200 || string(b) != want {
			t.Errorf("GET %s = %d %q, want 200 %q", u, resp.StatusCode, b, want)
		}
	}
	if st := tp.Stats(); st.Allowed != 2 || st.Denied != 0 {
		t.Errorf("stats = %+v, want 2 allowed", st)
	}
}

// A request body, and bytes sent right behind the head, reach the server.
func TestPlainHTTPBody(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %d", r.Method, len(b))
	}))
	t.Cleanup(s.Close)
	addr := s.Listener.Addr().String()
	tp := startProxy(t, []string{addr}, nil)
	body := strings.Repeat("b", 300000)
	resp, err := tp.client(nil).Post("http://"+addr+"/", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "POST 300000" {
		t.Errorf("server saw %q", b)
	}
}

func TestConnectTLS(t *testing.T) {
	t.Parallel()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls host=%s", r.Host)
	}))
	t.Cleanup(s.Close)
	port := portOf(t, s.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(s.Certificate())
	// httptest's certificate is for example.com (and 127.0.0.1): the name
	// is checked by the client through the tunnel.
	tp := startProxy(t, []string{"*.example.com:" + port}, nil)
	resp, err := tp.client(roots).Get("https://example.com:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "tls host=example.com:" + port; string(b) != want {
		t.Errorf("body = %q, want %q", b, want)
	}
	// A certificate for another name fails the client's check.
	if _, err := tp.client(x509.NewCertPool()).Get("https://example.com:" + port + "/"); err == nil {
		t.Error("a client without the test CA accepted the server")
	}
	if st := tp.Stats(); st.Allowed != 2 || st.Denied != 0 {
		t.Errorf("stats = %+v, want 2 allowed", st)
	}
}

func TestSOCKS5(t *testing.T) {
	t.Parallel()
	_, addr := echoServer(t)
	port := portOf(t, addr)
	tp := startProxy(t, []string{"allowed.test:" + port, addr}, nil)
	d, err := xproxy.SOCKS5("unix", tp.sock, nil, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	get := func(target string) (string, error) {
		c, err := d.Dial("tcp", target)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
		b, err := io.ReadAll(c)
		return string(b), err
	}
	for _, target := range []string{"allowed.test:" + port, addr} {
		b, err := get(target)
		if err != nil || !strings.Contains(b, "host="+target+" uri=/s") {
			t.Errorf("SOCKS5 to %s: %q %v", target, b, err)
		}
	}
	for _, target := range []string{"unlisted.test:" + port, "127.0.0.2:" + port, "allowed.test:1", "meta.test:80"} {
		if _, err := get(target); err == nil || !strings.Contains(err.Error(), "not allowed by ruleset") {
			t.Errorf("SOCKS5 to %s: %v, want not allowed by ruleset", target, err)
		}
	}
	st := tp.Stats()
	want := []string{"unlisted.test:" + port, "127.0.0.2:" + port, "allowed.test:1", "meta.test:80"}
	if st.Allowed != 2 || st.Denied != 4 || !slices.Equal(st.DeniedHosts, want) {
		t.Errorf("stats = %+v, want 2 allowed, denied %v", st, want)
	}
}

func TestSOCKS5IPv6(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "v6")
	})}}
	s.Start()
	t.Cleanup(s.Close)
	addr := ln.Addr().String()
	tp := startProxy(t, []string{addr}, nil)
	c := tp.dial(t)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	ap := ln.Addr().(*net.TCPAddr).AddrPort()
	ip := ap.Addr().As16()
	req := append([]byte{5, 1, 0, 5, 1, 0, socksIPv6}, ip[:]...)
	req = append(req, byte(ap.Port()>>8), byte(ap.Port()))
	c.Write(req)
	reply := make([]byte, 12)
	if _, err := io.ReadFull(c, reply); err != nil || reply[3] != socksSucceeded {
		t.Fatalf("SOCKS5 IPv6 reply %v %v", reply, err)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(c)
	if !strings.HasSuffix(string(b), "v6") {
		t.Errorf("response %q", b)
	}
}

func TestSOCKS5Commands(t *testing.T) {
	t.Parallel()
	tp := startProxy(t, []string{"*"}, nil)
	for _, tc := range []struct {
		name  string
		req   []byte
		reply byte
	}{
		{"bind", []byte{5, 2, 0, 1, 127, 0, 0, 1, 0, 80}, socksCmdNotSupported},
		{"udp associate", []byte{5, 3, 0, 1, 0, 0, 0, 0, 0, 0}, socksCmdNotSupported},
		{"bad address type", []byte{5, 1, 0, 9, 0, 0}, socksAddrTypeNotSupport},
		{"NUL in name", append([]byte{5, 1, 0, 3, 8}, []byte("a\x00b.test\x00\x50")...), socksNotAllowed},
		{"trailing dot", append([]byte{5, 1, 0, 3, 12}, []byte("public.test.\x00\x50")...), socksNotAllowed},
		{"port zero", append([]byte{5, 1, 0, 3, 11}, []byte("public.test\x00\x00")...), socksNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tp.dial(t)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(append([]byte{5, 1, 0}, tc.req...))
			b := make([]byte, 4)
			if _, err := io.ReadFull(c, b); err != nil {
				t.Fatal(err)
			}
			if b[0] != 5 || b[1] != 0 || b[2] != 5 || b[3] != tc.reply {
				t.Errorf("reply %v, want code %d", b, tc.reply)
			}
		})
	}
	// No acceptable method: only username/password offered.
	c := tp.dial(t)
	c.Write([]byte{5, 1, 2})
	b := make([]byte, 2)
	io.ReadFull(c, b)
	if b[1] != socksNoAcceptable {
		t.Errorf("method reply %v, want 0xff", b)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	var hits sync.Map
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.Host, true)
	}))
	t.Cleanup(s.Close)
	addr := s.Listener.Addr().String()
	port := portOf(t, addr)
	tp := startProxy(t, []string{"allowed.test:" + port, addr}, nil)
	for _, tc := range []struct {
		name, head, rule, record string
	}{
		{"unlisted name", "CONNECT unlisted.test:443 HTTP/1.1\r\n\r\n", "not_allowlisted", "unlisted.test:443"},
		{"unlisted port", "CONNECT allowed.test:1 HTTP/1.1\r\n\r\n", "port_not_allowed", "allowed.test:1"},
		{"unlisted literal", "CONNECT 127.0.0.2:" + port + " HTTP/1.1\r\n\r\n", "ip_literal", "127.0.0.2:" + port},
		{"decimal address", "GET http://2130706433/ HTTP/1.1\r\nHost: 2130706433\r\n\r\n", "invalid_destination", `"2130706433"`},
		{"hex address", "GET http://0x7f.1/ HTTP/1.1\r\nHost: 0x7f.1\r\n\r\n", "invalid_destination", `"0x7f.1"`},
		{"v6 loopback", "GET http://[::1]/ HTTP/1.1\r\nHost: [::1]\r\n\r\n", "ip_literal", "[::1]:80"},
		{"unspecified", "GET http://0.0.0.0/ HTTP/1.1\r\nHost: 0.0.0.0\r\n\r\n", "ip_literal", "0.0.0.0:80"},
		{"trailing dot", "CONNECT allowed.test.:" + port + " HTTP/1.1\r\n\r\n", "invalid_destination", `"allowed.test.:` + port + `"`},
		{"percent", "GET http://allowed%2etest:" + port + "/ HTTP/1.1\r\n\r\n", "invalid_destination", `"allowed%2etest:` + port + `"`},
		{"userinfo-like", "CONNECT allowed.test:" + port + "@evil.test:443 HTTP/1.1\r\n\r\n", "invalid_destination", `"allowed.test:` + port + `@evil.test:443"`},
		{"name to loopback", "CONNECT lo.test:443 HTTP/1.1\r\n\r\n", "not_allowlisted", "lo.test:443"},
		{"host header mismatch", "GET http://allowed.test:" + port + "/ HTTP/1.1\r\nHost: unlisted.test\r\n\r\n", "host_mismatch", "unlisted.test:80"},
		{"host header mismatch port", "GET http://allowed.test:" + port + "/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "host_mismatch", "allowed.test:80"},
		{"connect with allowed host header", "CONNECT unlisted2.test:" + port + " HTTP/1.1\r\nHost: allowed.test:" + port + "\r\n\r\n", "not_allowlisted", "unlisted2.test:" + port},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, rule, body := tp.raw(t, tc.head)
			if !strings.HasPrefix(status, "403") || rule != tc.rule {
				t.Errorf("answer %q rule %q, want 403 rule %s (%s)", status, rule, tc.rule, body)
			}
			if !strings.HasPrefix(body, "gatehouse egress: refused ") || strings.Count(body, "\n") != 1 {
				t.Errorf("body %q is not one line naming the refusal", body)
			}
			if st := tp.Stats(); !slices.Contains(st.DeniedHosts, tc.record) {
				t.Errorf("denied hosts %q lack %q", st.DeniedHosts, tc.record)
			}
		})
	}
	n := 0
	hits.Range(func(k, v any) bool { n++; t.Errorf("the server was reached as %v", k); return true })
	if st := tp.Stats(); st.Allowed != 0 {
		t.Errorf("stats = %+v, want nothing allowed", st)
	}
}

// A CONNECT to an allowed destination whose Host header names another
// reaches the allowed destination only.
func TestConnectHostHeaderIgnored(t *testing.T) {
	t.Parallel()
	s, addr := echoServer(t)
	_ = s
	tp := startProxy(t, []string{addr}, nil)
	c := tp.dial(t)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: unlisted.test:443\r\n\r\n", addr)
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("CONNECT answer %q", line)
	}
	br.ReadString('\n')
	fmt.Fprintf(c, "GET /in HTTP/1.1\r\nHost: unlisted.test\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(br)
	if !strings.Contains(string(b), "host=unlisted.test uri=/in") {
		t.Errorf("tunnel answer %q", b)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	tp := startProxy(t, []string{"*"}, nil)
	for _, tc := range []struct{ name, head, status string }{
		{"origin form", "GET / HTTP/1.1\r\nHost: public.test\r\n\r\n", "400"},
		{"https absolute", "GET https://public.test/ HTTP/1.1\r\n\r\n", "400"},
		{"ftp", "GET ftp://public.test/ HTTP/1.1\r\n\r\n", "400"},
		{"NUL in line", "CONNECT public.test:443\x00 HTTP/1.1\r\n\r\n", "400"},
		{"two spaces", "CONNECT  public.test:443 HTTP/1.1\r\n\r\n", "400"},
		{"HTTP/2", "CONNECT public.test:443 HTTP/2.0\r\n\r\n", "400"},
		{"folded header", "GET http://public.test/ HTTP/1.1\r\nHost: public.test\r\n x\r\n\r\n", "400"},
		{"space before colon", "GET http://public.test/ HTTP/1.1\r\nHost : public.test\r\n\r\n", "400"},
		{"two Host headers", "GET http://public.test/ HTTP/1.1\r\nHost: public.test\r\nHost: public.test\r\n\r\n", "400"},
		{"fragment", "GET http://public.test/#x HTTP/1.1\r\n\r\n", "400"},
		{"user info", "GET http://u@public.test/ HTTP/1.1\r\n\r\n", "400"},
		{"too large", "GET http://public.test/ HTTP/1.1\r\nX: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\n", "431"},
		{"garbage", "\x16\x03\x01\x02\x00\r\n\r\n", "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := tp.raw(t, tc.head)
			if !strings.HasPrefix(status, tc.status) {
				t.Errorf("answer %q (%s), want %s", status, body, tc.status)
			}
		})
	}
	if st := tp.Stats(); st.Allowed != 0 {
		t.Errorf("stats = %+v, want nothing allowed", st)
	}
}

func TestEmptyAllowlist(t *testing.T) {
	t.Parallel()
	_, addr := echoServer(t)
	tp := startProxy(t, nil, nil)
	status, rule, body := tp.raw(t, "GET http://"+addr+"/ HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	if !strings.HasPrefix(status, "403") || rule != "no_egress" || !strings.Contains(body, "no egress") {
		t.Errorf("answer %q %q %q", status, rule, body)
	}
}

func TestDeniedHostsFirst16(t *testing.T) {
	t.Parallel()
	tp := startProxy(t, []string{"allowed.test"}, nil)
	var want []string
	for i := range 20 {
		h := fmt.Sprintf("d%02d.test:443", i)
		if i < MaxDeniedHosts {
			want = append(want, h)
		}
		tp.raw(t, "CONNECT "+h+" HTTP/1.1\r\n\r\n")
		if i == 3 {
			tp.raw(t, "CONNECT d00.test:443 HTTP/1.1\r\n\r\n") // a repeat is counted, not listed twice
		}
	}
	st := tp.Stats()
	if st.Denied != 21 || !slices.Equal(st.DeniedHosts, want) {
		t.Errorf("stats = %+v, want 21 denied and %v", st, want)
	}
}

// holdServer accepts connections and keeps them open until closed; it
// reports each accepted connection.
func holdServer(t *testing.T) (addr string, accepted chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), accepted
}

func connect(t *testing.T, tp *testProxy, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c := tp.dial(t)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", addr)
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("CONNECT %s: %q %v", addr, line, err)
	}
	br.ReadString('\n')
	c.SetReadDeadline(time.Time{})
	return c, br
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	addr, accepted := holdServer(t)
	tp := startProxy(t, []string{addr}, func(o *Options) { o.IdleTimeout = 400 * time.Millisecond })
	// A connection that keeps talking outlives the idle timeout.
	c, br := connect(t, tp, addr)
	up := <-accepted
	for range 8 {
		time.Sleep(150 * time.Millisecond)
		up.Write([]byte("x"))
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := br.ReadByte(); err != nil {
			t.Fatalf("busy tunnel cut after activity: %v", err)
		}
	}
	// Then it goes idle and is closed.
	t0 := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle tunnel not closed: %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("idle tunnel closed after %v", d)
	}
}

func TestMaxLifetime(t *testing.T) {
	t.Parallel()
	addr, accepted := holdServer(t)
	tp := startProxy(t, []string{addr}, func(o *Options) { o.MaxLifetime = 500 * time.Millisecond; o.IdleTimeout = 200 * time.Millisecond })
	c, br := connect(t, tp, addr)
	up := <-accepted
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				up.Write([]byte("x"))
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	_, err := io.Copy(io.Discard, br)
	if errors.Is(err, os.ErrDeadlineExceeded) || time.Since(t0) > 2*time.Second {
		t.Errorf("tunnel lived past its lifetime: %v after %v", err, time.Since(t0))
	}
}

func TestHandshakeTimeout(t *testing.T) {
	t.Parallel()
	tp := startProxy(t, []string{"*"}, func(o *Options) { o.HandshakeTimeout = 200 * time.Millisecond })
	c := tp.dial(t)
	c.Write([]byte("CONNECT public.te"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	b, err := io.ReadAll(c)
	if err != nil || time.Since(t0) > 2*time.Second {
		t.Errorf("slow client kept: %q %v after %v", b, err, time.Since(t0))
	}
}

func TestMaxConns(t *testing.T) {
	t.Parallel()
	addr, accepted := holdServer(t)
	tp := startProxy(t, []string{addr}, func(o *Options) { o.MaxConns = 2 })
	c1, _ := connect(t, tp, addr)
	connect(t, tp, addr)
	up1 := <-accepted
	<-accepted
	// The third waits for a slot.
	c3 := tp.dial(t)
	fmt.Fprintf(c3, "CONNECT %s HTTP/1.1\r\n\r\n", addr)
	c3.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := c3.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("third connection served beyond MaxConns: %v", err)
	}
	c1.Close()
	up1.Close()
	c3.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c3).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Errorf("third connection after a slot freed: %q %v", line, err)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	t.Parallel()
	addr, accepted := holdServer(t)
	tp := startProxy(t, []string{addr}, nil)
	c, br := connect(t, tp, addr)
	up := <-accepted
	done := make(chan struct{})
	go func() {
		tp.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := br.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("client still connected after Close")
	}
	up.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := up.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("upstream still connected after Close")
	}
	if _, err := net.Dial("unix", tp.sock); err == nil {
		t.Error("the socket still accepts after Close")
	}
}

// A half-close from the client reaches the server, whose answer still
// comes back.
func TestHalfClose(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c) // until the client's half-close
		io.WriteString(c, "got "+strconv.Itoa(len(b)))
	}()
	tp := startProxy(t, []string{ln.Addr().String()}, nil)
	c, br := connect(t, tp, ln.Addr().String())
	c.Write([]byte("hello"))
	c.(*net.UnixConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(br)
	if string(b) != "got 5" {
		t.Errorf("answer %q %v, want %q", b, err, "got 5")
	}
}

// Unreachable but allowed destinations answer 502, and are counted as
// allowed (the allowlist let them through).
func TestBadGateway(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	tp := startProxy(t, []string{addr, "*.example.com"}, nil)
	status, _, body := tp.raw(t, "CONNECT "+addr+" HTTP/1.1\r\n\r\n")
	if !strings.HasPrefix(status, "502") || !strings.Contains(body, "refused") {
		t.Errorf("answer %q %q", status, body)
	}
	status, _, _ = tp.raw(t, "CONNECT nowhere.example.com:443 HTTP/1.1\r\n\r\n")
	if !strings.HasPrefix(status, "502") {
		t.Errorf("unresolvable: %q", status)
	}
}
