// Package cardtest holds the events every face's card golden is fed, and
// the check that a face carries the card's fields in the card's order.
package cardtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/card"
)

// Now is the time the cases are shown at; their events are a little older.
var Now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// A Case is one event as the trail keeps it.
type Case struct {
	Name string
	In   card.Input
}

func exit(n int) *int { return &n }

// base is an execution of go build that completed under bubblewrap.
func base(id string) api.Event {
	return api.Event{
		ID: id, Time: Now.Add(-2 * time.Minute), Agent: "claude-code", Surface: api.SurfaceMCP, SessionID: "s-1",
		ActionType: api.ActionShellExecute, Decision: "allow", Dialect: "bash",
		CommandHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Cwd:         "/home/u/src/app", ResolvedCmds: []string{"/usr/bin/go"},
		Status: "completed", SandboxMode: "bubblewrap", ExitCode: exit(0), DurationMS: 1250, TimeoutSeconds: 120,
		Output:        api.Output{StdoutBytes: 3, SHA256: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
		PinnedScripts: []api.Pin{}, Credentials: []string{},
		Egress:       api.Egress{Allowed: 1, DeniedHosts: []string{}},
		Limits:       &api.Limits{Pids: true, NProc: true, Memory: true, Tmpfs: true, FileSize: true, DaemonKill: true},
		SandboxStart: "warm", ReadPosture: "host",
	}
}

// Cases are the events of the card goldens: completed, denied, held then
// approved, timed out, masked credentials, read posture workspace.
func Cases() []Case {
	completed := base("0123abcd0123abcd0123abcd0123abcd")

	denied := base("1111aaaa1111aaaa1111aaaa1111aaaa")
	denied.Decision, denied.BlockedBy, denied.Rule = "deny", "policy_rule", "rm-root"
	denied.Reason = "rm -rf ~: deleting the home directory is denied"
	denied.Status, denied.ExitCode, denied.DurationMS, denied.Limits = "never_ran", nil, 0, nil
	denied.SandboxMode, denied.SandboxStart, denied.ReadPosture = "", "", ""
	denied.Output, denied.Egress = api.Output{}, api.Egress{DeniedHosts: []string{}}
	denied.ResolvedCmds = []string{"/usr/bin/rm"}

	held := base("2222bbbb2222bbbb2222bbbb2222bbbb")
	held.ParentID, held.Routed = "2222aaaa2222aaaa2222aaaa2222aaaa", true
	held.Surface, held.Rule, held.Reason = api.SurfaceAgentHook, "ask-push", "git push asks first"
	held.ResolvedCmds = []string{"/usr/bin/git"}
	held.Approval = &api.ApprovalRecord{ID: "ap-7", Kind: "command", Answer: "once", By: "tray", Rule: "ask-push", WaitedMS: 5300}
	held.Egress = api.Egress{Allowed: 2, Denied: 1, DeniedHosts: []string{"evil.example"}}
	held.Network = "session s-1"

	timedOut := base("3333cccc3333cccc3333cccc3333cccc")
	timedOut.Status, timedOut.StatusReason, timedOut.ExitCode = "timed_out", "", nil
	timedOut.DurationMS, timedOut.TimeoutSeconds = 10000, 10
	timedOut.ResolvedCmds = []string{"/usr/bin/sleep"}
	timedOut.Limits = &api.Limits{Pids: true, NProc: true, Tmpfs: true, FileSize: true, DaemonKill: true}
	timedOut.Output = api.Output{StdoutBytes: 70000, DiscardedBytes: 4096, Truncated: true}

	masked := base("4444dddd4444dddd4444dddd4444dddd")
	masked.ResolvedCmds = []string{"/usr/bin/curl"}
	masked.CredentialsMasked = []string{"github_token"}
	masked.Credentials = []string{"npm_token"}
	masked.CredentialNotes = []api.CredentialNote{{ID: "github_token", Field: "exec.credentials.env.GITHUB_TOKEN", Mode: "masked",
		Hosts: []string{"api.github.com"}, Reason: "mode auto, masked: a GitHub token"}}
	masked.Egress = api.Egress{Allowed: 1, DeniedHosts: []string{},
		Placeholders: map[string]api.PlaceholderUse{"github_token": {Bound: 1}}}
	masked.Output.RedactionCount = 1

	workspace := base("5555eeee5555eeee5555eeee5555eeee")
	workspace.ReadPosture, workspace.ToolCache = "workspace", "/home/u/.cache/gatehouse/tools/claude-code"
	workspace.ResolvedCmds = []string{"/usr/bin/cat"}
	workspace.ExitCode = exit(1)
	workspace.WriteBlocked = []string{"/home/u/src/app/.git/hooks"}
	workspace.Output = api.Output{StderrBytes: 31, StderrSHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}

	return []Case{
		{"completed", card.Input{Event: completed, Command: "go build ./...", Output: true, Stdout: []byte("ok\n"), Stderr: []byte{}}},
		{"denied", card.Input{Event: denied, Command: "rm -rf ~", Output: true}},
		{"held then approved", card.Input{Event: held, Command: "git push origin main", Output: true, Stdout: []byte("ok\n"), Stderr: []byte{}}},
		{"timed out", card.Input{Event: timedOut, Command: "sleep 60", Output: true, Stdout: []byte("tick\n"), Stderr: []byte{}}},
		{"masked credentials", card.Input{Event: masked, Command: "curl -H \"Authorization: Bearer $GITHUB_TOKEN\" https://api.github.com/user",
			Output: true, Stdout: []byte("{\"login\": \"u\"}\n"), Stderr: []byte{}}},
		{"read posture workspace", card.Input{Event: workspace, Command: "cat ~/.ssh/id_ed25519", Output: true, Stdout: []byte{}, Stderr: []byte("cat: No such file or directory\n")}},
	}
}

// CheckOrder fails t unless rendered holds each field of c, as shown by
// show (the face's form of a field, like "<dt>LABEL</dt>"), in c's order.
func CheckOrder(t testing.TB, name, rendered string, c card.Card, show func(card.Field) string) {
	t.Helper()
	rest := rendered
	for _, f := range c.Fields {
		s := show(f)
		i := strings.Index(rest, s)
		if i < 0 {
			t.Errorf("%s: the face lacks the card's field %q (as %q) at its place, after the ones before it", name, f.Key, s)
			return
		}
		rest = rest[i+len(s):]
	}
}

// Golden compares got with testdata/NAME, or writes it when update (the
// face's -update flag) is set.
func Golden(t testing.TB, name, got string, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the card as built (go test -run %s -update rewrites it); got:\n%s", path, t.Name(), got)
	}
}
