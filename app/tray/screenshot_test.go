package tray_test

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// TestServeForScreenshot is not a test: .ci/tray-screenshot.sh runs it to
// serve the fake service, with an approval waiting and a few recent
// executions, on the socket $GATEHOUSE_TRAY_SHOT_SOCKET until it is
// interrupted, for the tray that docs/tray.png shows.
func TestServeForScreenshot(t *testing.T) {
	sock := os.Getenv("GATEHOUSE_TRAY_SHOT_SOCKET")
	if sock == "" {
		t.Skip("serves the screenshot's fake service for .ci/tray-screenshot.sh only")
	}
	code := func(n int) *int { return &n }
	now := time.Now()
	svc := newFakeService(t, sock)
	svc.status = api.Status{Version: "docs", Sandbox: api.SandboxStatus{Backend: "bubblewrap", Mode: "bubblewrap"},
		Policy: api.PolicySummary{Routing: "governed_shell"}, Workspaces: 2}
	svc.workspaces = []api.Workspace{{Path: "/home/dev/src", Origin: api.WorkspacePolicy}, {Path: "/home/dev/work/site", Origin: api.WorkspaceTrusted, By: "tray"}}
	event := func(id string, ago time.Duration, status string, exit *int, cmds ...string) api.Event {
		return api.Event{ID: id, Time: now.Add(-ago), Agent: "claude", Surface: api.SurfaceAgentHook, ActionType: api.ActionShellExecute,
			Decision: "allow", Status: status, ExitCode: exit, SandboxMode: "bubblewrap", ResolvedCmds: cmds}
	}
	deny := event("e5", 40*time.Second, "never_ran", nil, "/usr/bin/curl", "/bin/sh")
	deny.Decision, deny.BlockedBy = "deny", "policy"
	svc.events = []api.Event{
		deny,
		event("e4", 2*time.Minute, "completed", code(0), "/usr/local/go/bin/go"),
		event("e3", 6*time.Minute, "completed", code(1), "/usr/bin/npm"),
		event("e2", 25*time.Minute, "timed_out", nil, "/usr/bin/make"),
		event("e1", 3*time.Hour, "completed", code(0), "/usr/bin/git"),
	}
	svc.approvals = []api.Approval{{
		ID: "ap1", Kind: api.ApprovalCommand, Agent: "claude", Cwd: "/home/dev/src/app",
		Command: "git push --force origin main", Rule: "ask-force-push", Question: "claude wants to run `git push --force origin main`",
		Answers: []string{api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny},
		// The rule "always" saves, as the service proposes it
		// (policy.ProposeRule, policy.RuleYAML).
		SaveRule: "name: approved-git-5c1f09ad\naction: allow\nreason: approved always by a person\ncommand: [/usr/bin/git]\nargs: [{exact: [push, --force, origin, main]}]\nwhere: top_level\n",
		Created:  now, Expires: now.Add(5 * time.Minute),
	}}
	svc.start()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
}
