package sandboxinit

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
)

// fakeProxy answers one CONNECT on a loopback port: for allowed, 200 and,
// in the same write, the destination's greeting, then it echoes what it
// reads in upper case until the client half-closes; otherwise the egress
// proxy's 403. It sends the request line it got on the channel.
func fakeProxy(t *testing.T, allowed string) (string, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		for {
			l, err := br.ReadString('\n')
			if err != nil || l == "\r\n" {
				break
			}
		}
		got <- strings.TrimSpace(line)
		if !strings.HasPrefix(line, "CONNECT "+allowed+" ") {
			body := "gatehouse egress: refused " + strings.Fields(line)[1] + ": not in policy.egress_allowlist\n"
			io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nX-Gatehouse-Egress-Rule: not_allowlisted\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
			return
		}
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-fake\r\n")
		rest, _ := io.ReadAll(br)
		c.Write(bytes.ToUpper(rest))
	}()
	return ln.Addr().String(), got
}

// captureStderr sends what the stages write to stderr to a buffer for
// the rest of t.
func captureStderr(t *testing.T) *bytes.Buffer {
	var b bytes.Buffer
	old := stderr
	stderr = &b
	t.Cleanup(func() { stderr = old })
	return &b
}

func TestConnectTunnel(t *testing.T) {
	addr, got := fakeProxy(t, "git.example:22")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br, err := tunnel(c, "git.example:22")
	if err != nil {
		t.Fatal(err)
	}
	if line := <-got; line != "CONNECT git.example:22 HTTP/1.1" {
		t.Errorf("request line %q", line)
	}
	var out bytes.Buffer
	if rc := relay(c, br, strings.NewReader("hello\n"), &out); rc != 0 {
		t.Errorf("relay = %d", rc)
	}
	// The greeting that came with the answer is not lost, and the end of
	// input reached the destination (it answered after it).
	if want := "SSH-2.0-fake\r\nHELLO\n"; out.String() != want {
		t.Errorf("out %q, want %q", out.String(), want)
	}
}

func TestConnectRefused(t *testing.T) {
	addr, _ := fakeProxy(t, "git.example:22")
	errb := captureStderr(t)
	if rc := Connect([]string{addr, "::1", "2222"}); rc != 1 {
		t.Errorf("Connect = %d, want 1", rc)
	}
	want := "gatehouse: connect: no tunnel to [::1]:2222: gatehouse egress: refused [::1]:2222: not in policy.egress_allowlist\n"
	if errb.String() != want {
		t.Errorf("stderr %q\nwant   %q", errb.String(), want)
	}
}

func TestConnectArgs(t *testing.T) {
	captureStderr(t)
	for _, args := range [][]string{
		{"127.0.0.1:3128", "h"},
		{"127.0.0.1:3128", "h", "0"},
		{"127.0.0.1:3128", "h", "022"},
		{"127.0.0.1:3128", "h", "70000"},
		{"127.0.0.1:3128", "a b", "22"},
		{"127.0.0.1:3128", "", "22"},
	} {
		if rc := Connect(args); rc != 2 {
			t.Errorf("Connect(%q) = %d, want 2", args, rc)
		}
	}
}
