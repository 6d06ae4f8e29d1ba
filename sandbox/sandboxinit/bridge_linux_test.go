package sandboxinit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

// startBridge serves an egress proxy allowing allow on a unix socket and a
// bridge in front of it; it returns the bridge's address.
func startBridge(t *testing.T, allow ...string) (string, *egress.Proxy) {
	t.Helper()
	a, err := egress.ParseAllowlist(allow, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := egress.New(egress.Options{Allowlist: a})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "p.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	b := &Bridge{Listen: []string{"127.0.0.1:0"}, Socket: sock}
	lns, err := b.ListenAll()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lns[0].Close() })
	go b.Serve(lns[0])
	return lns[0].Addr().String(), p
}

// A connection handed over by the bridge is served by the proxy, half-close
// included.
func TestBridgeHandsOver(t *testing.T) {
	t.Parallel()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c) // until the client's half-close
				io.WriteString(c, "upstream saw "+string(b))
			}()
		}
	}()
	addr, p := startBridge(t, up.Addr().String())
	for i := range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", up.Addr())
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		br.ReadString('\n')
		if !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("CONNECT through the bridge: %q", line)
		}
		fmt.Fprintf(c, "hello %d", i)
		c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(br)
		if want := fmt.Sprintf("upstream saw hello %d", i); string(got) != want {
			t.Errorf("got %q %v, want %q", got, err, want)
		}
		c.Close()
	}
	if st := p.Stats(); st.Allowed != 3 {
		t.Errorf("stats %+v, want 3 allowed", st)
	}
}

// The proxy's refusals reach the client through the bridge.
func TestBridgeRefusal(t *testing.T) {
	t.Parallel()
	addr, p := startBridge(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 403 {
		t.Fatalf("answer %+v %v", resp, err)
	}
	if st := p.Stats(); st.Denied != 1 || st.DeniedHosts[0] != "example.com:80" {
		t.Errorf("stats %+v", st)
	}
}

// Closing the proxy ends the connections it was handed.
func TestBridgeProxyClose(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	addr, p := startBridge(t, srv.Listener.Addr().String())
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", srv.Listener.Addr())
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, _ := br.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", line)
	}
	br.ReadString('\n')
	p.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) || err == nil {
		t.Errorf("read after Close = %v, want the connection closed", err)
	}
}

// Without the proxy the client's connection is closed at once.
func TestBridgeNoProxy(t *testing.T) {
	t.Parallel()
	b := &Bridge{Listen: []string{"127.0.0.1:0"}, Socket: filepath.Join(t.TempDir(), "missing.sock")}
	lns, err := b.ListenAll()
	if err != nil {
		t.Fatal(err)
	}
	defer lns[0].Close()
	go b.Serve(lns[0])
	c, err := net.Dial("tcp", lns[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read = %v, want the connection closed", err)
	}
}
