package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// A ticket is live for the agent session the hook asked for, and only
// while it is pending: not for another session or agent, not once its
// relay redeemed it, not once it expired, never for one this service did
// not issue. Checking redeems nothing.
func TestCheckTicket(t *testing.T) {
	f := start(t, func(c *policy.Config) { c.Exec.Limits.TicketTTLSeconds = 2 })
	check := func(ticket, agent, session string) api.TicketCheckResponse {
		t.Helper()
		r, err := f.c.CheckTicket(context.Background(), api.TicketCheckRequest{Ticket: ticket, Agent: agent, SessionID: session})
		if err != nil {
			t.Fatal(err)
		}
		return *r
	}
	tk := f.decide("echo checked").Ticket
	for _, tc := range []struct {
		agent, session, why string
		live                bool
	}{
		{"claude-code", "sess", "", true},
		{"claude-code", "sess", "", true}, // a second check: still pending
		{"claude-code", "other", "another agent session", false},
		{"claude-code", "", "another agent session", false},
		{"cli", "sess", "another agent session", false},
	} {
		if r := check(tk, tc.agent, tc.session); r.Live != tc.live || !strings.Contains(r.Reason, tc.why) {
			t.Errorf("%s/%s: %+v, want live %v (%q)", tc.agent, tc.session, r, tc.live, tc.why)
		}
	}
	if code, out, errs := f.runRelay(tk); code != 0 || strings.TrimSpace(out) != "checked" {
		t.Fatalf("relay after checks: exit %d, %q %q", code, out, errs)
	}
	if r := check(tk, "claude-code", "sess"); r.Live || !strings.Contains(r.Reason, "already used") {
		t.Errorf("a used ticket: %+v", r)
	}
	if r := check("ght1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "claude-code", "sess"); r.Live || !strings.Contains(r.Reason, "unknown") {
		t.Errorf("a guessed ticket: %+v", r)
	}
	if r := check("ght1.short", "claude-code", "sess"); r.Live || !strings.Contains(r.Reason, "malformed") {
		t.Errorf("a malformed ticket: %+v", r)
	}
	late := f.decide("true").Ticket
	f.waitEvent(30*time.Second, func(e api.Event) bool { return e.StatusReason == api.StatusReasonTicketExpired })
	if r := check(late, "claude-code", "sess"); r.Live || !strings.Contains(r.Reason, "expired") {
		t.Errorf("an expired ticket: %+v", r)
	}
}
