package service

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// osThreads is the number of OS threads of this process.
func osThreads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// Decisions that are never redeemed wait for their relay without an OS
// thread each, and beyond exec.limits.max_pending_tickets they are
// refused (concurrency_limit) while every other client is served.
func TestPendingTicketsBounded(t *testing.T) {
	const max = 64
	f := start(t, func(c *policy.Config) { c.Exec.Limits.MaxPendingTickets = max })
	before := osThreads(t)
	var first string
	allowed, refused := 0, 0
	for i := 0; i < 4*max; i++ {
		r, err := f.c.Decide(context.Background(), api.DecideRequest{Route: true, Request: api.ExecRequest{
			Command: "echo " + strconv.Itoa(i), Cwd: f.ws, Agent: "claude-code", Surface: api.SurfaceAgentHook,
		}})
		switch {
		case err != nil:
			t.Fatalf("decision %d: %v", i, err)
		case r.Decision == "allow" && r.Ticket != "":
			allowed++
			if first == "" {
				first = r.Ticket
			}
		case r.Decision == "deny" && r.BlockedBy == ReasonConcurrency && r.Ticket == "" &&
			strings.Contains(r.Reason, "exec.limits.max_pending_tickets"):
			refused++
		default:
			t.Fatalf("decision %d: %+v", i, r)
		}
	}
	if allowed != max || refused != 3*max {
		t.Errorf("%d allowed, %d refused; want %d and %d", allowed, refused, max, 3*max)
	}
	if n := osThreads(t); n > before+max/2 {
		t.Errorf("%d pending tickets took the service from %d to %d OS threads", max, before, n)
	}
	// A refusal is on the record as an execution that never ran.
	recorded := 0
	for _, e := range f.svc.Events(0) {
		if e.ParentID != "" && e.Status == "never_ran" && e.StatusReason == ReasonConcurrency && e.BlockedBy == ReasonConcurrency {
			recorded++
		}
	}
	if recorded != 3*max {
		t.Errorf("%d refusals recorded as never run, want %d", recorded, 3*max)
	}

	// Every other client is still served.
	st, err := f.c.Status(context.Background())
	if err != nil || st.Pending != max || st.Policy.MaxPendingTickets != max {
		t.Fatalf("status with the tickets pending: %+v %v", st, err)
	}
	var out bytes.Buffer
	end, err := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: "echo served", Agent: "cli", Surface: api.SurfaceCLI}}, &out, &out)
	if err != nil || end.Exit != 0 || out.String() != "served\n" {
		t.Errorf("execute with the tickets pending: %+v %v %q", end, err, out.String())
	}
	// A pending ticket still runs, and frees its place.
	if code, stdout, stderr := f.runRelay(first); code != 0 || stdout != "0\n" {
		t.Errorf("relay of a pending ticket: exit %d %q %q", code, stdout, stderr)
	}
	f.decide("true")
}

// A client trickling its body is cut off by the read timeout; a request
// that arrives whole is served, and its streamed answer may outlast the
// timeout.
func TestSlowBodyCutOff(t *testing.T) {
	f := startWith(t, nil, func(o *Options) { o.ReadTimeout = 300 * time.Millisecond })
	c, err := net.Dial("unix", f.svc.opts.SocketPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(c)
		closed <- string(b)
	}()
	io.WriteString(c, "POST "+api.PathDecide+" HTTP/1.1\r\nHost: gatehouse\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	var answer string
	cut := false
	for i := 0; i < 200 && !cut; i++ { // up to 10 s, a byte every 50 ms
		select {
		case answer = <-closed:
			cut = true
		case <-time.After(50 * time.Millisecond):
			c.Write([]byte(" "))
		}
	}
	if !cut {
		t.Fatal("a client trickling its body kept its connection")
	}
	if !strings.Contains(answer, "400 Bad Request") {
		t.Errorf("the trickling client was answered %q", answer)
	}
	// A command streaming longer than the read timeout is not cut.
	var out bytes.Buffer
	end, err := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: "sleep 1; echo done", Agent: "cli", Surface: api.SurfaceCLI}}, &out, &out)
	if err != nil || end.Exit != 0 || out.String() != "done\n" {
		t.Errorf("a command outlasting the read timeout: %+v %v %q", end, err, out.String())
	}
}

// At most MaxConns connections are served at once; the next waits until
// one closes.
func TestConnectionCap(t *testing.T) {
	const max = 4
	f := startWith(t, nil, func(o *Options) { o.MaxConns = max })
	var held []net.Conn
	for i := 0; i < max; i++ {
		c, err := net.Dial("unix", f.svc.opts.SocketPath)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	c := localapi.NewClient(f.svc.opts.SocketPath)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := c.Status(ctx)
	cancel()
	if err == nil {
		t.Fatalf("a connection beyond the cap of %d was served", max)
	}
	if !strings.Contains(f.log.String(), "connection limit reached") {
		t.Errorf("the cap was not logged:\n%s", f.log.String())
	}
	for _, h := range held {
		h.Close()
	}
	if _, err := c.Status(context.Background()); err != nil {
		t.Errorf("status once the connections closed: %v", err)
	}
}

// GET /v1/status reuses its sandbox probe for ProbeTTL, and probes again
// for a new configuration.
func TestStatusProbeCached(t *testing.T) {
	f := startWith(t, nil, func(o *Options) { o.ProbeTTL = time.Hour })
	probes := func() int {
		f.svc.probe.Lock()
		defer f.svc.probe.Unlock()
		return f.svc.probe.testOnlyRuns
	}
	before := probes()
	for i := 0; i < 20; i++ {
		st, err := f.c.Status(context.Background())
		if err != nil || st.Sandbox.Mode == "" {
			t.Fatalf("status: %+v %v", st, err)
		}
	}
	if n := probes() - before; n > 1 {
		t.Errorf("20 status calls ran %d sandbox probes", n)
	}
	if r, err := f.c.Reload(context.Background()); err != nil || !r.OK {
		t.Fatalf("reload: %+v %v", r, err)
	}
	n := probes()
	f.c.Status(context.Background())
	if probes() != n+1 {
		t.Error("status after a reload did not probe the new configuration")
	}
}
