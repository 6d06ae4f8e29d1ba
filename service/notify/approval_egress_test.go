package notify

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// An egress request's notification shows the destination whole, and only
// then may offer an approving answer.
func TestApprovalTextEgress(t *testing.T) {
	a := api.Approval{ID: "e1", Kind: api.ApprovalEgress, Agent: "claude-code", Command: "npm install",
		SaveEntry: "registry.npmjs.org:443", Question: "claude-code wants to reach registry.npmjs.org:443 (during `npm install`, in ~/src/app)"}
	title, body, whole := ApprovalText(a)
	if title != "Approval needed: claude-code wants to reach registry.npmjs.org:443" || !whole || !strings.Contains(body, "gatehouse approve e1") {
		t.Errorf("%q %q %v", title, body, whole)
	}
	a.SaveEntry = strings.Repeat("a", 90) + ".test:443"
	if title, _, whole := ApprovalText(a); whole || strings.Contains(title, "aaaa") {
		t.Errorf("a long destination: %q whole %v", title, whole)
	}
}
