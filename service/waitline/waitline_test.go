package waitline

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The line a held call's caller shows: the approval's id, how long at
// most, the command on one line and how to answer, the same on every face.
func TestWaitingLine(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	got := Line(api.Approval{ID: "6e50a7b2", Kind: api.ApprovalCommand, Command: "git push\norigin feat", Rule: "ask-push", Expires: now.Add(120 * time.Second)}, now)
	if want := `gatehouse: waiting up to 120s for approval 6e50a7b2 of "git push origin feat": ask-push (gatehouse approve 6e50a7b2, or the tray)` + "\n"; got != want {
		t.Errorf("WaitingLine =\n%q, want\n%q", got, want)
	}
	got = Line(api.Approval{ID: "a1", Kind: api.ApprovalWorkspace, Workspace: "/home/u/work\x1b[2J", Expires: now.Add(30 * time.Second)}, now)
	if !strings.HasPrefix(got, "gatehouse: waiting up to 30s for approval a1: to work in /home/u/work\\x1b[2J, which is in no workspace root (gatehouse approve a1 for this call, --trust") {
		t.Errorf("WaitingLine (workspace) = %q", got)
	}
	got = Line(api.Approval{ID: "e1", Kind: api.ApprovalEgress, Host: "registry.npmjs.org", Port: 443, SaveEntry: "registry.npmjs.org:443", Command: "npm install", Expires: now.Add(60 * time.Second)}, now)
	if want := "gatehouse: waiting up to 60s for approval e1: registry.npmjs.org:443, not on the egress allowlist (gatehouse approve e1 for this command, --session or --always; or the tray)\n"; got != want {
		t.Errorf("WaitingLine (egress) =\n%q, want\n%q", got, want)
	}
	got = Line(api.Approval{ID: "e2", Kind: api.ApprovalEgress, Host: "127.0.0.1", Port: 8080, Literal: true, HostLoopback: true, SaveEntry: "127.0.0.1:8080", Expires: now.Add(60 * time.Second)}, now)
	if want := "gatehouse: waiting up to 60s for approval e2: 127.0.0.1:8080, a service on this machine outside the sandbox (gatehouse approve e2 --local-service if it is yours; or the tray)\n"; got != want {
		t.Errorf("WaitingLine (host loopback) =\n%q, want\n%q", got, want)
	}
	got = Line(api.Approval{ID: "e3", Kind: api.ApprovalEgress, Host: "registry.npmjs.org", Port: 443, SaveEntry: "registry.npmjs.org:443", Preset: "npm", Answers: []string{api.AnswerOnce, api.AnswerPreset}, Expires: now.Add(60 * time.Second)}, now)
	if !strings.Contains(got, "--session or --always or --preset (the npm hosts)") {
		t.Errorf("WaitingLine (preset) = %q", got)
	}
	long := Line(api.Approval{ID: "a2", Command: strings.Repeat("é", 100), Expires: now}, now)
	if !strings.Contains(long, `..."`) || strings.Count(long, "é") > 60 {
		t.Errorf("a long command is not abbreviated: %q", long)
	}
}
