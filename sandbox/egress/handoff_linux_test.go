package egress

import (
	"bufio"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeBridge accepts TCP connections and hands each to tp over one unix
// connection, as the init's bridge does; it returns the address clients
// connect to.
func fakeBridge(t *testing.T, tp *testProxy) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ctl, err := net.Dial("unix", tp.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f, _ := c.(*net.TCPConn).File()
			ctl.(*net.UnixConn).WriteMsgUnix([]byte{BridgeHandoff}, syscall.UnixRights(int(f.Fd())), nil)
			f.Close()
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func TestHandoff(t *testing.T) {
	t.Parallel()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls host=%s", r.Host)
	}))
	t.Cleanup(s.Close)
	port := portOf(t, s.Listener.Addr().String())
	tp := startProxy(t, []string{"example.com:" + port}, nil)
	addr := fakeBridge(t, tp)
	roots := x509.NewCertPool()
	roots.AddCert(s.Certificate())
	client := tp.client(roots)
	client.Transport.(*http.Transport).DialContext = nil
	client.Transport.(*http.Transport).Proxy = http.ProxyURL(mustURL(t, "http://"+addr))
	for i := range 5 {
		resp, err := client.Get("https://example.com:" + port + "/")
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "tls host=example.com:"+port {
			t.Errorf("body %q", b)
		}
	}
	// A refusal, through the same bridge.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "CONNECT unlisted.test:443 HTTP/1.1\r\n\r\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 403") {
		t.Errorf("refusal through the bridge: %q", line)
	}
	if st := tp.Stats(); st.Allowed != 5 || st.Denied != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Only TCP sockets are adopted: anything else a bridge (or a command
// without the seccomp filter) attaches is closed unread.
func TestHandoffOnlyTCP(t *testing.T) {
	t.Parallel()
	tp := startProxy(t, []string{"*"}, nil)
	ctl, err := net.Dial("unix", tp.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	io.WriteString(w, "GET http://public.test/ HTTP/1.1\r\n\r\n")
	ctl.(*net.UnixConn).WriteMsgUnix([]byte{BridgeHandoff}, syscall.UnixRights(int(w.Fd())), nil)
	w.Close()
	// The proxy closes its copy of the write end: the read end sees only
	// what the test wrote, never an answer.
	r.SetReadDeadline(time.Now().Add(2 * time.Second))
	b, _ := io.ReadAll(r)
	if string(b) != "GET http://public.test/ HTTP/1.1\r\n\r\n" {
		t.Errorf("pipe holds %q", b)
	}
	if st := tp.Stats(); st.Allowed+st.Denied != 0 {
		t.Errorf("stats %+v: a pipe was served", st)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
