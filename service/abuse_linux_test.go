package service

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
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
	if err != nil || st.Pending != max {
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
