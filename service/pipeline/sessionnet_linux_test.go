package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// sessionFixture is a bubblewrap fixture whose executor has session
// networks, as the service's does.
func sessionFixture(t *testing.T, mutate func(*policy.Config)) (*fixture, *SessionNets) {
	t.Helper()
	if _, err := exec.LookPath("nsenter"); err != nil {
		if sandboxtest.Required() {
			t.Fatal("REQUIRE_SANDBOX=1 and no nsenter: install util-linux")
		}
		t.Skip("no nsenter (util-linux)")
	}
	f := bwrapFixture(t, mutate)
	nets := NewSessionNets(nil)
	f.ex.SetSessions(nets)
	t.Cleanup(nets.Close)
	return f, nets
}

func inSession(id string) func(*api.ExecRequest) {
	return func(r *api.ExecRequest) { r.SessionID = id }
}

// freeHostPort is a port free on the host's loopback now.
func freeHostPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// fetchLoop fetches http://127.0.0.1:PORT/ from a command, trying tries
// times (the server may still be starting); exit 3 when unreachable.
func fetchLoop(port, tries int) string {
	return fmt.Sprintf(`python3 - <<'PY'
import sys, time, urllib.request
h = urllib.request.ProxyHandler({})
o = urllib.request.build_opener(h)
for i in range(%d):
    try:
        print(o.open("http://127.0.0.1:%d/served.txt", timeout=2).read().decode().strip()); sys.exit(0)
    except Exception as e:
        err = e
        time.sleep(0.05)
print("unreachable", err); sys.exit(3)
PY`, tries, port)
}

// serveInSession starts a server in session's network (call 1, left
// running; HTTP/1.1, so that a connection stays open across requests)
// and waits until the session's next call reaches it.
func serveInSession(t *testing.T, f *fixture, session string, port int) (stop func() *Outcome) {
	t.Helper()
	f.write("home/src/served.txt", "served-in-"+session+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Outcome, 1)
	go func() {
		o, err := f.ex.Execute(ctx, api.ExecRequest{Command: fmt.Sprintf(`exec python3 -c 'import http.server as h; h.test(HandlerClass=h.SimpleHTTPRequestHandler, protocol="HTTP/1.1", port=%d, bind="127.0.0.1")'`, port),
			Agent: "cli", Surface: api.SurfaceCLI, SessionID: session}, sandbox.Streams{})
		if err != nil {
			t.Errorf("the server's call: %v", err)
		}
		done <- o
	}()
	o := f.run(fetchLoop(port, 400), inSession(session))
	if exitOf(o) != 0 || strings.TrimSpace(o.Result.Stdout) != "served-in-"+session {
		cancel()
		t.Fatalf("the session's next call: exit %d, %q %q", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	var once *Outcome
	return func() *Outcome {
		if once == nil {
			cancel()
			once = <-done
		}
		return once
	}
}

// A server one call of a session leaves running is reachable from the
// session's next calls on localhost, and from nothing else: not another
// session's calls, not a call without a session, not the host. The
// events say which network each ran in.
func TestSessionNetworkShared(t *testing.T) {
	f, nets := sessionFixture(t, nil)
	port := freeHostPort(t)
	stop := serveInSession(t, f, "s1", port)
	defer stop()

	o := f.run(fetchLoop(port, 400), inSession("s1"))
	if exitOf(o) != 0 || o.Event.Network != "session s1" || o.Event.SessionID != "s1" {
		t.Fatalf("s1: exit %d, network %q (%s), stdout %q", exitOf(o), o.Event.Network, o.Event.NetworkReason, o.Result.Stdout)
	}
	o = f.run(fetchLoop(port, 5), inSession("s2"))
	if exitOf(o) != 3 || o.Event.Network != "session s2" {
		t.Fatalf("another session: exit %d, network %q, stdout %q", exitOf(o), o.Event.Network, o.Result.Stdout)
	}
	o = f.run(fetchLoop(port, 5))
	if exitOf(o) != 3 || o.Event.Network != api.NetworkPrivate || o.Event.NetworkReason != "" {
		t.Fatalf("no session: exit %d, network %q (%s), stdout %q", exitOf(o), o.Event.Network, o.Event.NetworkReason, o.Result.Stdout)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		c.Close()
		t.Fatal("the host reached the session's server without a forward")
	}

	// The list: s1 with the server's port and a running execution; the
	// server's own egress bridge is not listed.
	var s1 *api.SessionNetwork
	for _, s := range nets.List() {
		if s.SessionID == "s1" {
			s1 = &s
		}
	}
	if s1 == nil || s1.Agent != "cli" || s1.Running != 1 {
		t.Fatalf("List() = %+v; want s1 of cli with one execution running", nets.List())
	}
	bridge := bridgesOf(nets, "s1")
	if len(bridge) != 1 {
		t.Fatalf("s1's bridges %v, want the server's one", bridge)
	}
	if !slices.Contains(s1.Listening, api.ListeningPort{Port: port, Addr: "127.0.0.1"}) || slices.ContainsFunc(s1.Listening, func(l api.ListeningPort) bool { return l.Port == bridge[0] }) {
		t.Fatalf("s1 listening %+v; want %d and not the bridge %d", s1.Listening, port, bridge[0])
	}

	// The person's forward, on the host's loopback.
	r := nets.OpenPort(api.PortRequest{SessionID: "s1", Port: port, By: "cli"})
	if r.Error != "" || r.Forward == nil || r.Forward.Port != port || r.Forward.HostPort == 0 {
		t.Fatalf("OpenPort = %+v", r)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/served.txt", r.Forward.HostPort)
	if body, err := hostGet(url); err != nil || strings.TrimSpace(body) != "served-in-s1" {
		t.Fatalf("through the forward: %q, %v", body, err)
	}
	if again := nets.OpenPort(api.PortRequest{SessionID: "s1", Agent: "cli", Port: port}); again.Forward == nil || again.Forward.HostPort != r.Forward.HostPort {
		t.Fatalf("opening it again: %+v, want the same forward", again)
	}
	if l := nets.List(); len(l) == 0 || !slices.ContainsFunc(l, func(s api.SessionNetwork) bool { return len(s.Forwards) == 1 && s.Forwards[0].By == "cli" }) {
		t.Fatalf("List() after open: %+v", l)
	}
	for _, bad := range []struct {
		req  api.PortRequest
		want string
	}{
		{api.PortRequest{SessionID: "s1", Port: 0}, "port: 0 is not a port"},
		{api.PortRequest{SessionID: "s1", Port: 70000}, "port: 70000 is not a port"},
		{api.PortRequest{SessionID: "nope", Port: port}, `no session network "nope"`},
		{api.PortRequest{SessionID: "s1", Agent: "codex", Port: port}, `no session network "s1" of agent "codex"`},
		{api.PortRequest{SessionID: "", Port: port}, "session_id: name a session"},
		{api.PortRequest{SessionID: "s", Port: port + 1}, "names more than one session"},
		{api.PortRequest{SessionID: "s1", Port: freeHostPort(t)}, "nothing listens on"},
		{api.PortRequest{SessionID: "s1", Port: bridge[0]}, "egress bridge"},
	} {
		if got := nets.OpenPort(bad.req); got.Forward != nil || !strings.Contains(got.Error, bad.want) {
			t.Errorf("OpenPort(%+v) = %+v, want an error with %q", bad.req, got, bad.want)
		}
	}
	// A connection kept alive across the close ends with it.
	kept, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", r.Forward.HostPort))
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	kept.SetDeadline(time.Now().Add(30 * time.Second))
	get := "GET /served.txt HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"
	br := bufio.NewReader(kept)
	if _, err := io.WriteString(kept, get); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a kept-alive request through the forward: %v %v", resp, err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if c := nets.ClosePort(api.PortRequest{SessionID: "s1", Port: port}); c.Error != "" {
		t.Fatalf("ClosePort: %s", c.Error)
	}
	if _, err := hostGet(url); err == nil {
		t.Fatal("the forward still answered after ClosePort")
	}
	io.WriteString(kept, get)
	if resp, err := http.ReadResponse(br, nil); err == nil {
		t.Fatalf("a connection kept alive across ClosePort was still answered: %s", resp.Status)
	}
	if c := nets.ClosePort(api.PortRequest{SessionID: "s1", Port: port}); !strings.Contains(c.Error, "no forward of port") {
		t.Fatalf("closing it twice: %+v", c)
	}

	// The server's call ends killed when its caller goes; its event is in
	// the session's network too.
	if so := stop(); so.Event.Network != "session s1" {
		t.Fatalf("the server's call: network %q", so.Event.Network)
	}
}

// bridgesOf returns the bridge ports of session's running executions.
func bridgesOf(nets *SessionNets, session string) []int {
	nets.mu.Lock()
	defer nets.mu.Unlock()
	var out []int
	for k, sn := range nets.m {
		if k.id == session {
			for p := range sn.bridges {
				out = append(out, p)
			}
		}
	}
	return out
}

func hostGet(url string) (string, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// Two executions of one session at once have bridges of their own, each
// reaching its own proxy (the egress of each is its own).
func TestSessionNetworkBridges(t *testing.T) {
	f, nets := sessionFixture(t, nil)
	s := startServers(t, f)
	f.cfg.Policy.EgressAllowlist = []string{"allowed.test:" + s.port}
	egressTest.Store(f.ex, &egressTestOptions{resolver: testResolver{"allowed.test": "127.0.0.1"}, loopbackNames: []string{"allowed.test"}})
	t.Cleanup(func() { egressTest.Delete(f.ex) })
	port := freeHostPort(t)
	stop := serveInSession(t, f, "s1", port)
	defer stop()
	server := bridgesOf(nets, "s1")
	if len(server) != 1 {
		t.Fatalf("s1's bridges %v, want the server's one", server)
	}
	o := f.run(`echo "$HTTP_PROXY"; curl -sS http://allowed.test:`+s.port+`/x; cat "$GATEHOUSE_SSH_CONFIG" | grep ProxyCommand`, inSession("s1"))
	lines := strings.Split(o.Result.Stdout, "\n")
	if exitOf(o) != 0 || len(lines) < 3 || lines[0] == "http://127.0.0.1:"+strconv.Itoa(server[0]) || !strings.HasPrefix(lines[0], "http://127.0.0.1:") ||
		lines[1] != "hello host=allowed.test:"+s.port+" uri=/x" || !strings.Contains(lines[2], strings.TrimPrefix(lines[0], "http://")) {
		t.Fatalf("a second execution's egress: exit %d, stdout %q, stderr %q, network %q (%s), sessions %+v", exitOf(o), o.Result.Stdout, o.Result.Stderr, o.Event.Network, o.Event.NetworkReason, nets.List())
	}
	if o.Event.Egress.Allowed == 0 {
		t.Errorf("the egress is not on the second execution's event: %+v", o.Event.Egress)
	}
}

// The warm pool starts its slots in the session's network of the agent
// that ran last: the session's next command runs warm, in its network.
func TestSessionNetworkWarm(t *testing.T) {
	f, _ := sessionFixture(t, nil)
	f.ex.ClosePool()
	f.ex.StartPool(1, "cli")
	p := f.ex.pool.Load()
	p.mu.Lock()
	p.force = false
	p.mu.Unlock()
	p.fill()
	t.Cleanup(f.ex.ClosePool)
	f.waitReady(1)
	port := freeHostPort(t)
	stop := serveInSession(t, f, "s1", port)
	defer stop()
	var o *Outcome
	for i := 0; i < 3; i++ {
		f.waitReady(1)
		if o = f.run(fetchLoop(port, 100), inSession("s1")); o.Event.SandboxStart == StartWarm {
			break
		}
	}
	if o.Event.SandboxStart != StartWarm || exitOf(o) != 0 || o.Event.Network != "session s1" {
		t.Fatalf("start %q (%s), exit %d, network %q, stdout %q", o.Event.SandboxStart, o.Event.SandboxStartReason, exitOf(o), o.Event.Network, o.Result.Stdout)
	}
	// A slot of s1's network does not serve a command without a session.
	f.waitReady(1)
	o = f.run(fetchLoop(port, 3))
	if exitOf(o) != 3 || o.Event.Network != api.NetworkPrivate {
		t.Fatalf("no session after s1: exit %d, network %q, start %q", exitOf(o), o.Event.Network, o.Event.SandboxStart)
	}
}

// A session's network closes session_idle_seconds after its last
// execution ended, and at once when the agent says the session ended; a
// later call of the session gets a new one.
func TestSessionNetworkCloses(t *testing.T) {
	f, nets := sessionFixture(t, func(c *policy.Config) { c.Exec.Sandbox.SessionIdleSeconds = 1 })
	f.run("true", inSession("idle"))
	if len(nets.List()) != 1 {
		t.Fatalf("List() = %+v, want the idle session", nets.List())
	}
	for i := 0; len(nets.List()) > 0; i++ {
		if i == 1000 {
			t.Fatalf("the network outlived its idle time: %+v", nets.List())
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.cfg.Exec.Sandbox.SessionIdleSeconds = 1800
	f.run("true", inSession("ended"))
	if len(nets.List()) != 1 {
		t.Fatalf("List() = %+v", nets.List())
	}
	nets.EndSession("cli", "ended")
	if l := nets.List(); len(l) != 0 {
		t.Fatalf("List() after the session ended: %+v", l)
	}
	f.cfg.Exec.Sandbox.SessionIdleSeconds = 0
	if o := f.run("true", inSession("off")); o.Event.Network != api.NetworkPrivate || !strings.Contains(o.Event.NetworkReason, "session_idle_seconds is 0") {
		t.Fatalf("with session networks off: network %q (%s)", o.Event.Network, o.Event.NetworkReason)
	}
}

// Past maxSessionNets open at once, a new session's execution has a
// network of its own, and its event says why; one that closes makes room.
func TestSessionNetworkBound(t *testing.T) {
	f, nets := sessionFixture(t, nil)
	old := maxSessionNets
	maxSessionNets = 2
	t.Cleanup(func() { maxSessionNets = old })
	for _, id := range []string{"b1", "b2"} {
		if o := f.run("true", inSession(id)); o.Event.Network != "session "+id {
			t.Fatalf("%s: network %q (%s)", id, o.Event.Network, o.Event.NetworkReason)
		}
	}
	o := f.run("true", inSession("b3"))
	if o.Event.Network != api.NetworkPrivate || !strings.Contains(o.Event.NetworkReason, "2 session networks are open") {
		t.Fatalf("a third session: network %q (%s)", o.Event.Network, o.Event.NetworkReason)
	}
	if o := f.run("true", inSession("b1")); o.Event.Network != "session b1" {
		t.Fatalf("an open session past the bound: network %q (%s)", o.Event.Network, o.Event.NetworkReason)
	}
	nets.EndSession("cli", "b2")
	if o := f.run("true", inSession("b3")); o.Event.Network != "session b3" {
		t.Fatalf("after one closed: network %q (%s)", o.Event.Network, o.Event.NetworkReason)
	}
}
