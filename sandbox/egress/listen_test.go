package egress

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// The proxy serves a loopback TCP listener as it serves the unix socket:
// a destination off the allowlist is refused, and counted.
func TestListenLoopback(t *testing.T) {
	t.Parallel()
	ln, err := ListenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() || addr.Port == 0 {
		t.Fatalf("listening on %v, want a port of 127.0.0.1", addr)
	}
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()

	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, " 403 ") {
		t.Errorf("got %q, want a 403 refusal", status)
	}
	p.Close()
	if err := <-done; err != ErrClosed {
		t.Errorf("Serve: got %v, want ErrClosed", err)
	}
	if st := p.Stats(); st.Denied != 1 || len(st.DeniedHosts) != 1 || st.DeniedHosts[0] != "example.com:443" {
		t.Errorf("stats %+v, want one refusal of example.com:443", st)
	}
}
