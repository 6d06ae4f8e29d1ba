package e2e

// The relay outside Claude Code's sandbox. The PreToolUse hook rewrites a
// routed command to the relay with dangerouslyDisableSandbox: true; Claude
// Code then asks whether it may run outside its sandbox, and Gatehouse's
// PermissionRequest hook says yes for a live relay of this session and
// nothing else. These tests run the real claude with the rendered managed
// settings, whole or with one part missing or broken, and check that only
// the relay ever leaves Claude Code's sandbox, never without Gatehouse's
// word or a person's (claude -p asks no one: a question to the person is
// a denial there).
//
// What "outside" means is observed, not inferred: the relay's process is
// found in /proc while its command waits, and its network namespace
// compared with the host's (Claude Code's sandbox has one of its own); a
// model's command that escaped would leave a file in the home directory,
// which both sandboxes keep read-only.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// relayProc is a relay process seen in /proc.
type relayProc struct {
	pid          int
	netns, mntns string
}

// watchRelay looks in /proc, until ctx ends, for a process running
// e2etest.HookBin's relay (or e2etest.GatehouseBin's, which the mcp_tool hook writes:
// mcphook_test.go), and returns the first one found.
func watchRelay(ctx context.Context) (relayProc, bool) {
	for ctx.Err() == nil {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			var pid int
			if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil {
				continue
			}
			args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
			if len(args) != 3 || (args[0] != e2etest.HookBin && args[0] != e2etest.GatehouseBin) || args[1] != "relay" {
				continue
			}
			net, err1 := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net"))
			mnt, err2 := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "mnt"))
			if err1 == nil && err2 == nil {
				return relayProc{pid, net, mnt}, true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return relayProc{}, false
}

// (a) The whole: the relay of a routed command runs in the host's
// namespaces, outside Claude Code's sandbox, and the command it stands for
// in Gatehouse's sandbox. A model's own request to leave the sandbox
// (dangerouslyDisableSandbox) is routed like any command: its command runs
// in Gatehouse's sandbox too.
func TestRelayRunsOutsideClaudeSandbox(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	hostNet, err := os.Readlink("/proc/self/ns/net")
	must(t, err)
	hostMnt, err := os.Readlink("/proc/self/ns/mnt")
	must(t, err)

	// The first command waits for the test to see its relay, then says
	// where it runs.
	const where = "echo gh-exec=$GATEHOUSE_EXECUTION_ID; echo net=$(readlink /proc/self/ns/net); " +
		"cat ~/.ssh/id_e2e 2>/dev/null || echo ssh-hidden; touch ~/escaped-a 2>/dev/null && echo home-writable || echo home-read-only"
	calls := []toolCall{
		{"Bash", map[string]any{"command": waitRelease + where, "description": "e2e", "timeout": 60000}},
		{"Bash", map[string]any{"command": where, "description": "e2e", "dangerouslyDisableSandbox": true}},
	}
	fa, p, ok, out := w.watchedConversation(w.sandboxSettings(true), calls)
	if !ok {
		t.Fatalf("no relay process seen while the command waited\nclaude: %s", out)
	}
	if p.netns != hostNet || p.mntns != hostMnt {
		t.Errorf("the relay (pid %d) ran in network namespace %s and mount namespace %s, not the host's %s and %s: inside Claude Code's sandbox",
			p.pid, p.netns, p.mntns, hostNet, hostMnt)
	}
	res := fa.all(t, 2)
	for i, r := range res {
		contains(t, fmt.Sprintf("tool_result %d", i), r.Content, "gh-exec=", "ssh-hidden", "home-read-only")
		if r.IsError || strings.Contains(r.Content, "gh-exec=\n") || strings.Contains(r.Content, "net="+hostNet) {
			t.Errorf("tool_result %d: the command did not run in Gatehouse's sandbox:\n%s", i, r.Content)
		}
	}
	noEscape(t, w)
	var runs int
	for _, e := range w.Events() {
		if e.ParentID != "" {
			runs++
			if e.Status != "completed" || !strings.HasPrefix(e.SandboxMode, "bubblewrap") {
				t.Errorf("execution event: %+v", e)
			}
		}
	}
	if runs != 2 {
		t.Errorf("%d executions recorded, want 2: %+v", runs, w.Events())
	}
}

// waitRelease starts a command that waits for the test to have seen its
// relay (watchedConversation).
const waitRelease = "while [ ! -e .release ]; do sleep 0.05; done; rm -f .release; "

// watchedConversation runs claude with settings over calls, from the
// workspace, and watches /proc for the relay meanwhile: the first relay
// process seen, if any. A command that starts with waitRelease waits until
// then (or until the conversation ends).
func (w *world) watchedConversation(settings string, calls []toolCall, extra ...string) (*fakeAPI, relayProc, bool, string) {
	w.t.Helper()
	fa, p, ok, out, err := w.watchedConversationErr(settings, calls, extra...)
	if err != nil {
		w.t.Fatalf("claude: %v\n%s\nservice log:\n%s", err, out, w.ServeLog.String())
	}
	return fa, p, ok, out
}

// watchedConversationErr is watchedConversation, with claude's failure
// returned.
func (w *world) watchedConversationErr(settings string, calls []toolCall, extra ...string) (*fakeAPI, relayProc, bool, string, error) {
	os.Remove(filepath.Join(w.Workspace, ".release"))
	ctx, cancel := context.WithCancel(context.Background())
	found := make(chan relayProc, 1)
	go func() {
		p, ok := watchRelay(ctx)
		if ok {
			found <- p
		}
		close(found)
		os.WriteFile(filepath.Join(w.Workspace, ".release"), nil, 0o644)
	}()
	fa := &fakeAPI{calls: calls}
	out, err := w.converseErr(w.Workspace, settings, fa, extra...)
	cancel()
	p, ok := <-found
	return fa, p, ok, out, err
}

// noEscape fails when a model's command left a file in the home
// directory: it ran outside both sandboxes.
func noEscape(t *testing.T, w *world) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(w.Home, "escaped-*"))
	if len(m) > 0 {
		t.Errorf("commands ran outside every sandbox: %v", m)
	}
}

// managedVariant writes the rendered managed settings, changed by edit,
// for claude --settings.
func (w *world) managedVariant(name string, edit func(m map[string]any)) string {
	m := w.managedSettings()
	if edit != nil {
		edit(m)
	}
	return writeJSON(w.TB, filepath.Join(w.Dir, name+".json"), m)
}

func hooksOf(m map[string]any) map[string]any { return m["hooks"].(map[string]any) }

// replaceHook sets the command and timeout of the one hook of event in
// settings m.
func replaceHook(m map[string]any, event, command string, timeout int) {
	g := hooksOf(m)[event].([]any)[0].(map[string]any)
	h := g["hooks"].([]any)[0].(map[string]any)
	h["command"], h["timeout"] = command, timeout
}

// escapeCalls are a model's commands asking to leave Claude Code's
// sandbox, and not asking; each would leave ~/escaped-<id> outside both
// sandboxes, and the second leaves ran-<id> in the workspace wherever it
// runs.
func escapeCalls(id string) []toolCall {
	touch := func(n string) string {
		// The home directory named where Claude Code's own check of the
		// paths a command writes cannot see it (the workspace is
		// ~/src/proj), so that its sandbox, not that check, is what stops
		// the write.
		return fmt.Sprintf(`echo ran > ran-%s-%s; touch "$(cd ../.. && pwd)/escaped-%s-%s" 2>/dev/null; true`, id, n, id, n)
	}
	return []toolCall{
		{"Bash", map[string]any{"command": touch("out"), "description": "e2e", "dangerouslyDisableSandbox": true}},
		{"Bash", map[string]any{"command": touch("in"), "description": "e2e"}},
	}
}

// relayCall is the model writing the relay form itself.
func relayCall(ticket string) toolCall {
	return toolCall{"Bash", map[string]any{"command": "'" + e2etest.HookBin + "' relay " + ticket, "description": "e2e", "dangerouslyDisableSandbox": true}}
}

// issue has the service decide command for session, as a hook would,
// and returns its ticket.
func (w *world) issue(command, session string) string {
	w.t.Helper()
	d, err := w.Client().Decide(context.Background(), api.DecideRequest{Route: true, Routing: api.RoutingGovernedShell, Request: api.ExecRequest{
		Command: command, Cwd: w.Workspace, Agent: "claude-code", Surface: api.SurfaceAgentHook, SessionID: session}})
	must(w.t, err)
	if d.Ticket == "" {
		w.t.Fatalf("no ticket: %+v", d)
	}
	return d.Ticket
}

// redeem runs the relay of ticket on the host, as its own process.
func (w *world) redeem(ticket string) string {
	w.t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(e2etest.HookBin, "relay", ticket)
	cmd.Env = w.Env()
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("relay: %v\n%s", err, out.String())
	}
	return out.String()
}

// outcome is what became of one tool call, for the log.
func outcome(r toolResult) string {
	s := strings.Join(strings.Fields(r.Content), " ")
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return fmt.Sprintf("error %v: %s", r.IsError, s)
}

// checkEscapes checks a conversation of escapeCalls(id) (the first two
// results): neither command ran outside every sandbox, the one that asked
// to leave Claude Code's sandbox did not run at all (the person was asked,
// and claude -p asks no one), and the other ran nowhere it could write the
// home directory. It returns how each call ended, for the log.
func (w *world) checkEscapes(t *testing.T, id string, res []toolResult, inRuns bool) {
	t.Helper()
	noEscape(t, w)
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-"+id+"-out")); err == nil {
		t.Errorf("%s: the command asking to leave Claude Code's sandbox ran without a person: %s", id, outcome(res[0]))
	}
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-"+id+"-in")); (err == nil) != inRuns {
		t.Errorf("%s: the command not asking to leave ran: %v, want %v: %s", id, err == nil, inRuns, outcome(res[1]))
	}
	for i, r := range res[:2] {
		t.Logf("%s call %d: %s", id, i, outcome(r))
	}
}

// (b), (c), (e) Without Gatehouse's PreToolUse hook — missing, crashing,
// timing out, or its service down — a model's command never runs outside
// Claude Code's sandbox without a person, whether it asks to
// (dangerouslyDisableSandbox) or not; the model writing the relay form
// itself, with a ticket guessed, used, expired or another session's, is
// not let out by the PermissionRequest hook, which says why; and
// bypassPermissions and acceptEdits change none of it.
func TestNoEscapeWithoutThePreToolUseHook(t *testing.T) {
	w := newWorld(t)
	w.WriteConfig("exec:\n  limits:\n    ticket_ttl_seconds: 5\n")
	w.StartService()
	c := w.Client()
	ctx := context.Background()

	// Tickets the model might get hold of: one expired, one used, one of
	// another session still live (issued after the reload to a longer
	// life), and one guessed.
	expired := w.issue("echo expired-ran > expired-ran", "other-session")
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := c.CheckTicket(ctx, api.TicketCheckRequest{Ticket: expired, Agent: "claude-code", SessionID: "other-session"})
		must(t, err)
		if !r.Live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a ticket of 5 s did not expire in a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.WriteConfig("")
	if r, err := c.Reload(ctx); err != nil || !r.OK {
		t.Fatalf("reload: %+v %v", r, err)
	}
	used := w.issue("true", "other-session")
	w.redeem(used)
	other := w.issue("echo other-ran > other-ran", "other-session")
	guessed := "ght1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

	// No PreToolUse hook, and a user who allows every Bash command: a
	// command that does not ask to leave runs in Claude Code's sandbox
	// without a question; one that asks is still asked about.
	noPre := w.managedVariant("no-pretooluse", func(m map[string]any) {
		delete(hooksOf(m), "PreToolUse")
		m["permissions"].(map[string]any)["allow"] = []string{"Bash"}
	})

	t.Run("missing, and the relay form written by the model", func(t *testing.T) {
		calls := append(escapeCalls("missing"), relayCall(guessed), relayCall(used), relayCall(expired), relayCall(other),
			toolCall{"Bash", map[string]any{"command": "'/tmp/gatehouse-hook' relay " + other, "description": "e2e", "dangerouslyDisableSandbox": true}})
		fa, p, seen, out := w.watchedConversation(noPre, calls)
		res := fa.all(t, len(calls))
		w.checkEscapes(t, "missing", res, true)
		for i, why := range map[int]string{2: "unknown", 3: "already used", 4: "expired", 5: "another agent session"} {
			contains(t, fmt.Sprintf("call %d", i), res[i].Content, "Gatehouse did not let this relay run", why)
		}
		if !res[6].IsError {
			t.Errorf("another program's relay form ran: %s", outcome(res[6]))
		}
		t.Logf("another program's relay: %s", outcome(res[6]))
		if seen {
			t.Errorf("a relay ran (pid %d, %s) though no hook routed anything\nclaude: %s", p.pid, p.netns, out)
		}
		for _, f := range []string{"expired-ran", "other-ran"} {
			if _, err := os.Stat(filepath.Join(w.Workspace, f)); err == nil {
				t.Errorf("%s: a ticket the model wrote ran its command", f)
			}
		}
		if r, err := c.CheckTicket(ctx, api.TicketCheckRequest{Ticket: other, Agent: "claude-code", SessionID: "other-session"}); err != nil || !r.Live {
			t.Errorf("another session's ticket after the model wrote it: %+v %v, want still live (checked, never redeemed)", r, err)
		}
	})

	for _, tc := range []struct {
		id, mode string
	}{{"bypass", "bypassPermissions"}, {"accept", "acceptEdits"}} {
		t.Run("missing, --permission-mode "+tc.mode, func(t *testing.T) {
			calls := append(escapeCalls(tc.id), relayCall(guessed))
			fa, _, _, out, err := w.watchedConversationErr(noPre, calls, "--permission-mode", tc.mode)
			if err != nil {
				// Claude Code may refuse a mode the settings disable.
				t.Logf("claude refused --permission-mode %s: %v: %s", tc.mode, err, out)
				noEscape(t, w)
				return
			}
			res := fa.all(t, len(calls))
			w.checkEscapes(t, tc.id, res, true)
			contains(t, "the model's relay form", res[2].Content, "Gatehouse did not let this relay run")
		})
	}

	for _, tc := range []struct {
		id, name, command string
		timeout           int
	}{
		{"crash", "crashing", `/bin/sh -c 'kill -SEGV $$'`, 30},
		{"timeout", "timing out", "/bin/sleep 60", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := w.managedVariant("pretooluse-"+tc.id, func(m map[string]any) { replaceHook(m, "PreToolUse", tc.command, tc.timeout) })
			fa, _, _, _ := w.watchedConversation(s, escapeCalls(tc.id))
			w.checkEscapes(t, tc.id, fa.all(t, 2), false)
		})
	}

	t.Run("service down", func(t *testing.T) {
		w.StopService()
		fa, _, _, _ := w.watchedConversation(w.sandboxSettings(true), escapeCalls("down"))
		res := fa.all(t, 2)
		w.checkEscapes(t, "down", res, false)
		for i, r := range res {
			contains(t, fmt.Sprintf("call %d", i), r.Content, "not reachable")
		}
	})
}

// (d) Without Gatehouse's PermissionRequest hook — missing, or failing —
// a routed command's relay is not let out silently: Claude Code asks the
// person (in claude -p, a denial), and nothing runs. With the managed
// settings of before (no such hook, no unsandboxed commands) the relay
// runs inside Claude Code's sandbox, as it did.
func TestRelayWithoutThePermissionHook(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	hostNet, err := os.Readlink("/proc/self/ns/net")
	must(t, err)
	routed := func(id string) []toolCall {
		return []toolCall{{"Bash", map[string]any{"command": waitRelease + "echo routed > routed-" + id, "description": "e2e", "timeout": 60000}}}
	}
	for _, tc := range []struct {
		id, name string
		edit     func(m map[string]any)
		runs     bool
	}{
		{"missing", "missing", func(m map[string]any) { delete(hooksOf(m), "PermissionRequest") }, false},
		{"failing", "failing", func(m map[string]any) { replaceHook(m, "PermissionRequest", "/bin/sh -c 'exit 1'", 30) }, false},
		{"crashing", "crashing", func(m map[string]any) { replaceHook(m, "PermissionRequest", `/bin/sh -c 'kill -SEGV $$'`, 30) }, false},
		{"before", "the managed settings of before", func(m map[string]any) {
			delete(hooksOf(m), "PermissionRequest")
			m["sandbox"].(map[string]any)["allowUnsandboxedCommands"] = false
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fa, p, seen, out := w.watchedConversation(w.managedVariant("permission-"+tc.id, tc.edit), routed(tc.id))
			r := fa.result(t)
			t.Logf("%s: %s", tc.id, outcome(r))
			if seen && p.netns == hostNet {
				t.Errorf("the relay (pid %d) ran outside Claude Code's sandbox without Gatehouse's PermissionRequest hook\nclaude: %s", p.pid, out)
			}
			_, err := os.Stat(filepath.Join(w.Workspace, "routed-"+tc.id))
			if (err == nil) != tc.runs || r.IsError == tc.runs {
				t.Errorf("the routed command ran: %v, want %v: %s", err == nil, tc.runs, outcome(r))
			}
			if !tc.runs {
				// Claude Code asked the person, who in claude -p is no one.
				contains(t, "tool_result", r.Content, "Run outside of the sandbox")
			}
			if tc.runs && !seen {
				t.Errorf("no relay process seen while the command waited\nclaude: %s", out)
			}
		})
	}
}
