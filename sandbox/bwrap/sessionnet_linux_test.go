package bwrap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// sessionSpec is a spec running command in ws, in network n (nil: its own).
func sessionSpec(t *testing.T, ws, command string, n *sandbox.Network) (*sandbox.Spec, RunOptions) {
	t.Helper()
	bw := sandboxtest.RequireBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := &sandbox.Spec{
		Shell: "/bin/bash", Command: command, Dir: ws,
		Env:            []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + ws, "LC_ALL=C"},
		WorkspaceRoots: []string{ws}, WriteDeny: sandbox.DefaultWriteDeny,
		Seccomp: sandbox.SeccompPreferred, Timeout: 60 * time.Second, OutputMax: 1 << 20,
		InitPath: exe, BwrapPath: bw, Network: n,
	}
	opt := RunOptions{CgroupFD: -1, BlockedSuffix: "t1"}
	opt.DisableUserns = probe.BwrapAtLeast(probe.Gather(bw), 0, 8, 0)
	return spec, opt
}

func startSessionNet(t *testing.T) *SessionNet {
	t.Helper()
	bw := sandboxtest.RequireBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		if sandboxtest.Required() {
			t.Fatal("REQUIRE_SANDBOX=1 and no nsenter: install util-linux")
		}
		t.Skip("no nsenter (util-linux)")
	}
	n, err := StartSessionNet(bw, exe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// freePort is a port free on the host now (the session's loopback is
// empty: any port is free there).
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

const fetchScript = `python3 - <<'PY'
import sys, time, urllib.request
for i in range(200):
    try:
        print(urllib.request.urlopen("http://127.0.0.1:%d/", timeout=2).read().decode().strip()); sys.exit(0)
    except Exception as e:
        err = e
        time.sleep(0.05)
print("unreachable", err); sys.exit(3)
PY`

// A server one execution of a session serves is reachable from the
// session's next execution on the loopback, from nothing else: not an
// execution with a network of its own, not the host; through a forward
// the person opens, the host reaches it.
func TestSessionNetShared(t *testing.T) {
	sn := startSessionNet(t)
	netw := sn.Network("session s1")
	ws := t.TempDir()
	port := freePort(t)
	if err := os.WriteFile(ws+"/index.html", []byte("served-in-session\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Call 1: the server, running until the test ends it.
	ctx, cancel := context.WithCancel(context.Background())
	serverDone := make(chan *sandbox.Result, 1)
	var serverErr bytes.Buffer
	go func() {
		spec, opt := sessionSpec(t, ws, fmt.Sprintf("exec python3 -m http.server %d --bind 127.0.0.1", port), netw)
		serverDone <- Run(ctx, spec, sandbox.Streams{Stdout: io.Discard, Stderr: &serverErr}, opt)
	}()
	defer func() {
		cancel()
		<-serverDone
	}()

	run := func(n *sandbox.Network) (*sandbox.Result, string) {
		spec, opt := sessionSpec(t, ws, fmt.Sprintf(fetchScript, port), n)
		if n != netw {
			// The server is up (call 2 reached it): a few tries do.
			spec.Command = strings.Replace(spec.Command, "range(200)", "range(10)", 1)
		}
		var out, errb bytes.Buffer
		res := Run(context.Background(), spec, sandbox.Streams{Stdout: &out, Stderr: &errb}, opt)
		if res.Status != sandbox.StatusCompleted {
			t.Fatalf("status %s (%s): %s; stderr %q", res.Status, res.StatusReason, res.Error, errb.String())
		}
		return res, out.String()
	}
	// Call 2 of the same session.
	if res, out := run(netw); res.ExitCode != 0 || strings.TrimSpace(out) != "served-in-session" {
		t.Fatalf("the session's next call: exit %d, %q (server stderr %q)", res.ExitCode, out, serverErr.String())
	}
	ls, err := sn.Listening()
	if err != nil || !slices.Contains(ls, Listener{Addr: "127.0.0.1", Port: port}) {
		t.Fatalf("Listening() = %v, %v; want 127.0.0.1:%d among them", ls, err, port)
	}
	// A call with a network of its own, and another session's.
	if res, out := run(nil); res.ExitCode != 3 {
		t.Fatalf("a private network reached the session's server: exit %d, %q", res.ExitCode, out)
	}
	other := startSessionNet(t)
	if res, out := run(other.Network("session s2")); res.ExitCode != 3 {
		t.Fatalf("another session reached the server: exit %d, %q", res.ExitCode, out)
	}
	// The host: nothing on its loopback.
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Fatalf("the host reached the session's server without a forward")
	}

	// A forward: the host's connection handed to the holder.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sn.Forward(c.(*net.TCPConn), port)
		}
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatalf("through the forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "served-in-session" {
		t.Fatalf("through the forward: %q", body)
	}
	// A port nothing listens on: the host's connection is closed.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln2.Close()
	go func() {
		c, err := ln2.Accept()
		if err == nil {
			sn.Forward(c.(*net.TCPConn), freePort(t))
		}
	}()
	c, err := net.Dial("tcp", ln2.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil || n != 0 {
		t.Fatalf("a forward to a closed port: read %d, %v", n, err)
	}
	c.Close()

	// Ending the holder ends nothing running: the server still answers
	// its session's calls.
	sn.Close()
	if sn.Alive() {
		t.Fatal("the holder outlived Close")
	}
	if _, err := sn.Listening(); err == nil {
		t.Fatal("Listening() after Close succeeded")
	}
}

// The namespace files nsenter left open do not reach the command.
func TestSessionNetFilesClosed(t *testing.T) {
	sn := startSessionNet(t)
	ws := t.TempDir()
	spec, opt := sessionSpec(t, ws, `for f in /proc/self/fd/*; do readlink "$f"; done; readlink /proc/self/ns/net`, sn.Network("session s"))
	var out, errb bytes.Buffer
	res := Run(context.Background(), spec, sandbox.Streams{Stdout: &out, Stderr: &errb}, opt)
	if res.Status != sandbox.StatusCompleted || res.ExitCode != 0 {
		t.Fatalf("status %s exit %d: %s %q", res.Status, res.ExitCode, res.Error, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", sn.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if lines[len(lines)-1] != want {
		t.Fatalf("the command's network is %s, the session's %s", lines[len(lines)-1], want)
	}
	for _, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, "user:[") || strings.HasPrefix(l, "net:[") {
			t.Fatalf("a namespace file reached the command: %q", out.String())
		}
	}
}

// A session's network is ready to be joined when StartSessionNet returns:
// its user namespace has its uid and gid maps (bwrap reports the holder's
// pid before it writes them, and a bwrap joining a namespace without maps
// fails to start).
func TestSessionNetReadyWhenStarted(t *testing.T) {
	for range 10 {
		sn := startSessionNet(t)
		for _, m := range []string{"uid_map", "gid_map"} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", sn.Pid(), m))
			if err != nil || strings.TrimSpace(string(b)) == "" {
				t.Fatalf("%s of the holder when StartSessionNet returned: %q, %v", m, b, err)
			}
		}
		sn.Close()
	}
}

// What listens in a session is read from the holder's diagnostics socket,
// made in the session's network: the same listeners, addresses and ports
// /proc/PID/net/tcp and tcp6 show, IPv4 and IPv6, one address or all; a
// listener of the host's is in neither; a closed one leaves both.
func TestSessionNetListeningFromDiag(t *testing.T) {
	sn := startSessionNet(t)
	if sn.diag == nil {
		t.Fatal("the holder handed over no diagnostics socket")
	}
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()

	ws := t.TempDir()
	ports := []int{freePort(t), freePort(t), freePort(t), freePort(t)}
	// Four listeners; the first closes when the file "close" appears.
	script := fmt.Sprintf(`python3 - <<'PY'
import os, socket, time
socks = []
for fam, addr, port in ((socket.AF_INET, "127.0.0.1", %d), (socket.AF_INET, "0.0.0.0", %d), (socket.AF_INET6, "::1", %d), (socket.AF_INET6, "::", %d)):
    s = socket.socket(fam, socket.SOCK_STREAM)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, port)); s.listen()
    socks.append(s)
open("up", "w").close()
while not os.path.exists("close"):
    time.sleep(0.02)
socks[0].close()
open("closed", "w").close()
time.sleep(60)
PY`, ports[0], ports[1], ports[2], ports[3])
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *sandbox.Result, 1)
	var errb bytes.Buffer
	go func() {
		spec, opt := sessionSpec(t, ws, script, sn.Network("session diag"))
		done <- Run(ctx, spec, sandbox.Streams{Stdout: io.Discard, Stderr: &errb}, opt)
	}()
	defer func() {
		cancel()
		<-done
	}()
	waitFile := func(name string) {
		t.Helper()
		for i := 0; ; i++ {
			if _, err := os.Stat(ws + "/" + name); err == nil {
				return
			}
			select {
			case res := <-done:
				done <- res
				t.Fatalf("the listeners ended: %s %s: %q", res.Status, res.Error, errb.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	check := func(want []Listener) {
		t.Helper()
		got, err := sn.Listening()
		if err != nil {
			t.Fatal(err)
		}
		proc, err := sn.procListening()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || !slices.Equal(proc, want) {
			t.Fatalf("listening: from the diagnostics socket %v, from /proc %v; want %v", got, proc, want)
		}
	}
	waitFile("up")
	// The host's listener is on the host's loopback only: exact equality
	// says it is in neither list (its port, in use, is none of ports).
	rest := []Listener{{"0.0.0.0", ports[1]}, {"::1", ports[2]}, {"::", ports[3]}}
	check(sortListeners(append([]Listener{{"127.0.0.1", ports[0]}}, rest...)))
	os.WriteFile(ws+"/close", nil, 0o644)
	waitFile("closed")
	check(sortListeners(rest))
}

// What an execution joining a session pays to learn what listens there:
// the diagnostics socket's dump of listening sockets against /proc's two
// files, which walk the host's whole table of connections.
func BenchmarkSessionNetListening(b *testing.B) {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("no bwrap")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	sn, err := StartSessionNet(bw, exe)
	if err != nil {
		b.Skip(err)
	}
	defer sn.Close()
	b.Run("diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := sn.diag.listening(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			if _, err := sn.procListening(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Once EndForwards returns, a connection carried to the port gets nothing
// more: the holder has shut it down (it says so), so a byte written right
// after is never echoed back.
func TestSessionNetEndForwards(t *testing.T) {
	sn := startSessionNet(t)
	ws := t.TempDir()
	port := freePort(t)
	echo := fmt.Sprintf(`python3 - <<'PY'
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", %d)); s.listen()
open("up", "w").close()
def serve(c):
    while True:
        b = c.recv(1)
        if not b:
            return
        c.sendall(b)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY`, port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		spec, opt := sessionSpec(t, ws, echo, sn.Network("session end"))
		Run(ctx, spec, sandbox.Streams{Stdout: io.Discard, Stderr: io.Discard}, opt)
	}()
	defer func() {
		cancel()
		<-done
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(ws + "/up"); err == nil {
			break
		}
		if i == 500 {
			t.Fatal("the echo server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for round := range 20 {
		go func() {
			if c, err := ln.Accept(); err == nil {
				sn.Forward(c.(*net.TCPConn), port)
			}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 1)
		if _, err := c.Write([]byte("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, b); err != nil || b[0] != 'a' {
			t.Fatalf("round %d: through the forward: %q %v", round, b, err)
		}
		if err := sn.EndForwards(port); err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("b"))
		if n, err := c.Read(b); err == nil || n != 0 {
			t.Fatalf("round %d: after EndForwards returned the connection still answered %q", round, b[:n])
		}
		c.Close()
	}
}
