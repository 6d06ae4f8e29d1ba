package notify

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A request about a service on this machine (the host's loopback) is
// never approved from a notification: approving needs the local-service
// tick, which only the CLI's flag and the tray's or dashboard's box give.
// The notification offers Deny, and its text names the flag.
func TestApprovalActionsHostLoopback(t *testing.T) {
	a := api.Approval{ID: "e1", Kind: api.ApprovalEgress, Agent: "cli", Command: "curl http://127.0.0.1:8765/",
		SaveEntry: "127.0.0.1:8765", Literal: true, HostLoopback: true,
		Question: "cli wants to reach 127.0.0.1:8765 (during `curl`, in ~/src); warning: it is this machine's own loopback",
		Answers:  []string{api.AnswerOnce, api.AnswerAlways, api.AnswerDeny, api.AnswerDenyAlways}}
	_, body, whole := ApprovalText(a)
	if !whole || !strings.HasSuffix(body, "gatehouse approve e1 --local-service") {
		t.Errorf("body %q whole %v", body, whole)
	}
	if got := strings.Join(approvalActions(a, whole, false), ","); got != "deny,Deny" {
		t.Errorf("actions %q, want deny only", got)
	}
	a.HostLoopback = false
	if got := strings.Join(approvalActions(a, whole, false), ","); got != "approve-once,Approve once,deny,Deny" {
		t.Errorf("another destination: actions %q", got)
	}
}
