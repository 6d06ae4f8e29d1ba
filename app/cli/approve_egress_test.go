package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// gatehouse approvals shows an egress request's *.domain picks, the
// preset answer with the hosts it allows and for whom, and, for a service
// on this machine, the warning naming --local-service.
func TestPrintApprovalEgress(t *testing.T) {
	var out strings.Builder
	printApproval(&Env{Stdout: &out}, api.Approval{ID: "e1", Kind: api.ApprovalEgress, Agent: "claude-code", Surface: "agent_hook",
		Command: "npm install", Cwd: "/home/u/src", Question: "claude-code wants to reach registry.npmjs.org:443", Reason: "not on the list",
		Host: "registry.npmjs.org", Port: 443, SaveEntry: "registry.npmjs.org:443", Preset: "npm", Entries: []string{"*.npmjs.org:443"},
		Answers: []string{api.AnswerOnce, api.AnswerAlways, api.AnswerPreset, api.AnswerDeny, api.AnswerDenyAlways}, Expires: time.Now().Add(time.Minute)})
	for _, want := range []string{
		"\n  or save: *.npmjs.org:443 (gatehouse approve e1 --always --entry ENTRY)\n",
		"\n  preset:  one of the npm registry's hosts; gatehouse approve e1 --preset allows them all (registry.npmjs.org:443) for claude-code\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "warning:") {
		t.Errorf("a warning for a name:\n%s", out.String())
	}
	out.Reset()
	printApproval(&Env{Stdout: &out}, api.Approval{ID: "e2", Kind: api.ApprovalEgress, Agent: "cli", Host: "127.0.0.1", Port: 8765,
		SaveEntry: "127.0.0.1:8765", Literal: true, HostLoopback: true, Answers: []string{api.AnswerOnce, api.AnswerDeny}, Expires: time.Now().Add(time.Minute)})
	if want := "\n  warning: 127.0.0.1:8765 is a service on this machine (its own loopback), outside the sandbox; approve it only if you mean the command to reach it, with --local-service (gatehouse approve e2 --local-service)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("missing the warning in:\n%s", out.String())
	}
	if strings.Contains(out.String(), "or save:") {
		t.Errorf("picks for an address:\n%s", out.String())
	}
}
