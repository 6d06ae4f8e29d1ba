// Package e2e runs the real Claude Code (the pinned npm package
// @anthropic-ai/claude-code) against a fake Messages API on 127.0.0.1, with
// the settings 'gatehouse install' and 'gatehouse managed-settings' produce
// and Claude Code's own sandbox on, and checks that Bash calls are decided,
// routed and run by Gatehouse.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude/e2e/internal/messagesapi"
	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

func TestMain(m *testing.M) { e2etest.Main(m, "gatehouse-e2e-bin-") }

var must, contains = e2etest.Must, e2etest.Contains

// requireClaude returns the claude binary, or skips (fails under
// REQUIRE_SANDBOX=1, which make test sets after installing it).
func requireClaude(t testing.TB) string {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	path, err := exec.LookPath("claude")
	if err == nil {
		if _, err2 := exec.LookPath("socat"); err2 != nil {
			err = err2
		}
	}
	if err != nil {
		if sandboxtest.Required() {
			t.Fatalf("REQUIRE_SANDBOX=1 but Claude Code's requirements are missing (%v); run .ci/test-deps.sh", err)
		}
		t.Skipf("claude or socat missing: %v", err)
	}
	return path
}

// fakeAPI is a Messages API that answers each turn with the next of its
// tool calls (one Bash call of input when calls is empty), then ends the
// conversation, and records every tool_result.
type fakeAPI struct {
	input map[string]any // the Bash tool_use input
	calls []toolCall

	results e2etest.Results[toolResult]
}

type toolCall struct {
	Name  string
	Input map[string]any
}

type toolResult struct {
	Content string
	IsError bool
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, turn := messagesapi.Read(w, r)
	if !turn {
		return
	}
	calls := f.calls
	if len(calls) == 0 {
		calls = []toolCall{{"Bash", f.input}}
	}
	for _, b := range req.ToolResults() {
		f.results.Add(b.ToolUseID, toolResult{Content: b.Content, IsError: b.IsError})
	}
	next := f.results.Len()
	var use *messagesapi.ToolUse
	if next < len(calls) && req.Offers(calls[next].Name) {
		use = &messagesapi.ToolUse{ID: fmt.Sprintf("toolu_e2e%d", next), Name: calls[next].Name, Input: calls[next].Input}
	}
	messagesapi.Answer(w, fmt.Sprintf("msg_e2e%d", next), req.Model, use)
}

func (f *fakeAPI) result(t *testing.T) toolResult {
	t.Helper()
	return f.all(t, 1)[0]
}

// all returns the tool_results, n of them.
func (f *fakeAPI) all(t *testing.T, n int) []toolResult {
	t.Helper()
	return f.results.Want(t, n, "tool_results")
}

// world is one isolated user (e2etest.World) who runs Claude Code.
type world struct {
	*e2etest.World
	t        *testing.T
	claude   string
	extraEnv []string // for claude
	// claudeOut, when set, also gets claude's output as it is written.
	claudeOut io.Writer
}

func newWorld(t *testing.T) *world {
	claude := requireClaude(t)
	w := &world{World: e2etest.NewWorld(t), t: t, claude: claude}
	w.WriteSecret("id_e2e", "SECRET-KEY\n")
	return w
}

// sandboxSettings writes the rendered managed settings to a file for
// claude --settings: whole, or without their hooks (when the user settings
// from gatehouse install carry the hook).
func (w *world) sandboxSettings(withHooks bool) string {
	w.t.Helper()
	cmd := exec.Command(e2etest.GatehouseBin, "managed-settings")
	cmd.Env = w.Env()
	out, err := cmd.Output()
	must(w.t, err)
	var m map[string]any
	must(w.t, json.Unmarshal(out, &m))
	sb := m["sandbox"].(map[string]any)
	// Unsandboxed commands are allowed for the relay, which the
	// PermissionRequest hook alone lets out (unsandboxed_test.go).
	if sb["enabled"] != true || sb["allowUnsandboxedCommands"] != true || sb["failIfUnavailable"] != true {
		w.t.Fatalf("managed settings do not enforce Claude Code's sandbox: %s", out)
	}
	if !withHooks {
		delete(m, "hooks")
		delete(m, "allowManagedHooksOnly")
	}
	b, _ := json.Marshal(m)
	path := filepath.Join(w.Dir, "claude-settings.json")
	must(w.t, os.WriteFile(path, b, 0o644))
	return path
}

// runClaude runs claude -p with the fake API sending input as the Bash
// call, from cwd, and returns what the API received as the tool_result.
func (w *world) runClaude(cwd, settings string, input map[string]any) (toolResult, string) {
	w.t.Helper()
	api := &fakeAPI{input: input}
	out := w.converse(cwd, settings, api)
	return api.result(w.t), out
}

// converse runs claude -p against api from cwd and returns its output.
func (w *world) converse(cwd, settings string, api *fakeAPI, extra ...string) string {
	w.t.Helper()
	out, err := w.converseErr(cwd, settings, api, extra...)
	if err != nil {
		w.t.Fatalf("claude: %v\n%s\nservice log:\n%s", err, out, w.ServeLog.String())
	}
	return out
}

// converseErr is converse, with claude's failure returned.
func (w *world) converseErr(cwd, settings string, api *fakeAPI, extra ...string) (string, error) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := w.claudeCommand(ctx, cwd, settings, api, extra...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if w.claudeOut != nil {
		mw := io.MultiWriter(&out, w.claudeOut)
		cmd.Stdout, cmd.Stderr = mw, mw
	}
	err := cmd.Run()
	return out.String(), err
}

// claudeCommand is claude -p against api (served until the test ends),
// from cwd, not started.
func (w *world) claudeCommand(ctx context.Context, cwd, settings string, api *fakeAPI, extra ...string) *exec.Cmd {
	w.t.Helper()
	addr := e2etest.ServeAPI(w.t, api)
	args := []string{"-p", "run the command", "--output-format", "json"}
	if settings != "" {
		args = append(args, "--settings", settings)
	}
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, w.claude, args...)
	cmd.Dir = cwd
	cmd.Env = append(w.Env(),
		"ANTHROPIC_BASE_URL=http://"+addr,
		"ANTHROPIC_API_KEY=e2e-test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	)
	cmd.Env = append(cmd.Env, w.extraEnv...)
	return cmd
}

// An allowed command is routed: it runs in Gatehouse's sandbox (~/.ssh is
// hidden there, and only the workspace is writable, which Claude Code's
// sandbox alone would not hide), the tool_result is its output with its
// exit status, and two linked agent_hook events record it.
func TestAllowedCommandRunsInGatehouse(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	out := w.Gatehouse("install", "--no-service")
	contains(t, "install output", out, "Gatehouse hook installed", "'"+e2etest.HookBin+"' hook claude")
	settings := w.sandboxSettings(false)

	res, _ := w.runClaude(w.Workspace, settings, map[string]any{
		"command": "echo hello from $GATEHOUSE_EXECUTION_ID; cat ~/.ssh/id_e2e || echo ssh-hidden; " +
			"touch ~/outside 2>/dev/null && echo wrote-outside || echo outside-denied; " +
			"echo data > inside.txt && echo wrote-inside; exit 3",
		"description": "e2e",
	})
	contains(t, "tool_result", res.Content, "Exit code 3", "hello from ", "ssh-hidden", "outside-denied", "wrote-inside")
	if strings.Contains(res.Content, "SECRET-KEY") || strings.Contains(res.Content, "wrote-outside") {
		t.Errorf("the command did not run in Gatehouse's sandbox:\n%s", res.Content)
	}
	if !res.IsError {
		t.Error("a non-zero exit must reach the model as an error result")
	}
	if _, err := os.Stat(filepath.Join(w.Workspace, "inside.txt")); err != nil {
		t.Errorf("the workspace write did not happen: %v", err)
	}

	evs := w.Events()
	if len(evs) != 2 {
		t.Fatalf("want a decision and an execution event, got %d: %+v", len(evs), evs)
	}
	dec, run := evs[0], evs[1]
	for _, e := range evs {
		if e.Surface != api.SurfaceAgentHook || e.Agent != "claude-code" || e.ActionType != api.ActionShellExecute || e.SessionID == "" {
			t.Errorf("event %s: surface %q agent %q action %q session %q", e.ID, e.Surface, e.Agent, e.ActionType, e.SessionID)
		}
	}
	if dec.Decision != "allow" || dec.SandboxMode != "" || dec.Status != "" {
		t.Errorf("decision event: %+v", dec)
	}
	if run.ParentID != dec.ID || run.Status != "completed" || run.ExitCode == nil || *run.ExitCode != 3 || run.SandboxMode == "" {
		t.Errorf("execution event: %+v", run)
	}
}

// A denied command never runs; the model gets the reason.
func TestDeniedCommandNeverRuns(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	w.Gatehouse("install", "--no-service")
	// The home directory is in no workspace root and may never be one:
	// nothing asks, the call is refused.
	elsewhere := w.Home

	res, _ := w.runClaude(elsewhere, w.sandboxSettings(false), map[string]any{
		"command": "touch ran-marker", "description": "e2e",
	})
	contains(t, "tool_result", res.Content, "Gatehouse denied this command (cwd_outside_workspace)", "cannot be trusted as a workspace", "inside a workspace root")
	if _, err := os.Stat(filepath.Join(elsewhere, "ran-marker")); err == nil {
		t.Error("a denied command ran")
	}
	evs := w.Events()
	if len(evs) != 1 || evs[0].Decision != "deny" || evs[0].BlockedBy != "cwd_outside_workspace" {
		t.Errorf("events: %+v", evs)
	}
}

// The model's timeout is honoured: Gatehouse's (two seconds shorter) fires
// first and the relay exits 124.
func TestTimeoutFromToolInput(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	w.Gatehouse("install", "--no-service")
	start := time.Now()
	res, _ := w.runClaude(w.Workspace, w.sandboxSettings(false), map[string]any{
		"command": "echo started; sleep 60", "description": "e2e", "timeout": 5000,
	})
	contains(t, "tool_result", res.Content, "Exit code 124", "started", "timed out after 3 s")
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
	evs := w.Events()
	if len(evs) != 2 || evs[1].Status != "timed_out" || evs[1].TimeoutSeconds != 3 {
		t.Errorf("events: %+v", evs)
	}
}

// With the service stopped, the hook denies, and says how to start it.
func TestServiceStoppedHookDenies(t *testing.T) {
	w := newWorld(t)
	w.Gatehouse("install", "--no-service")
	res, _ := w.runClaude(w.Workspace, w.sandboxSettings(false), map[string]any{
		"command": "touch ran-marker", "description": "e2e",
	})
	contains(t, "tool_result", res.Content, "not reachable", "gatehouse service start")
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-marker")); err == nil {
		t.Error("the command ran without the service")
	}
}

// The managed settings alone (no user install) route the call: their hook
// names this binary and pins governed_shell routing, even under a policy of
// framework.
func TestManagedSettingsRoute(t *testing.T) {
	w := newWorld(t)
	cfgDir := filepath.Join(w.Home, ".config", "gatehouse")
	must(t, os.MkdirAll(cfgDir, 0o700))
	must(t, os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte("policy:\n  builtin_exec_routing: framework\n"), 0o600))
	w.StartService()
	res, _ := w.runClaude(w.Workspace, w.sandboxSettings(true), map[string]any{
		"command": "echo routed-$GATEHOUSE_EXECUTION_ID", "description": "e2e",
	})
	if !strings.Contains(res.Content, "routed-") || strings.TrimSpace(res.Content) == "routed-" {
		t.Errorf("tool_result %q: want the command's output from Gatehouse's sandbox", res.Content)
	}
	if evs := w.Events(); len(evs) != 2 || evs[1].Status != "completed" {
		t.Errorf("events: %+v", evs)
	}
}

// Gatehouse's hook named twice — as gatehouse managed-settings --install
// leaves it, in managed-settings.json and in the managed-settings.d drop-in
// — runs once: Claude Code de-duplicates the hooks a call matches by their
// command. Here the two copies are in two sources Claude Code merges the
// same way (the --settings file and the user's settings.json), since the
// system-wide managed directory is not the test's to write. One call makes
// one decision and one execution. (With the two commands differing, as
// gatehouse install's and the managed settings' do, Claude Code runs both
// and the call is decided twice: doctor's hook_duplicate.)
func TestHookNamedTwiceRunsOnce(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	settings := w.sandboxSettings(true)
	b, err := os.ReadFile(settings)
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(w.Home, ".claude"), 0o700))
	must(t, os.WriteFile(filepath.Join(w.Home, ".claude", "settings.json"), b, 0o600))
	res, _ := w.runClaude(w.Workspace, settings, map[string]any{
		"command": "echo once-$GATEHOUSE_EXECUTION_ID", "description": "e2e",
	})
	if !strings.Contains(res.Content, "once-") || strings.TrimSpace(res.Content) == "once-" {
		t.Errorf("tool_result %q: want the command's output from Gatehouse's sandbox", res.Content)
	}
	evs := w.Events()
	if len(evs) != 2 || evs[1].Status != "completed" {
		t.Errorf("want one decision and one execution, got %d events: %+v", len(evs), evs)
	}
}

// The credential-redaction case of the issue ("a command printing a
// credential returns it redacted") needs the credentials broker, which has
// not landed; it is not tested here.
