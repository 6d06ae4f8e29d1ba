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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// gatehouseBin is the gatehouse binary built for these tests, hookBin the
// small hook and relay client beside it.
var gatehouseBin, hookBin string

func TestMain(m *testing.M) {
	// Built already (bench-as-user.sh builds them for a user who cannot
	// build from the checkout): the directory that holds all three.
	if dir := os.Getenv("GATEHOUSE_E2E_BIN"); dir != "" {
		gatehouseBin, hookBin = filepath.Join(dir, "gatehouse"), filepath.Join(dir, "gatehouse-hook")
		for _, p := range []string{gatehouseBin, hookBin, filepath.Join(dir, "gatehouse-init")} {
			if _, err := os.Stat(p); err != nil {
				fmt.Fprintf(os.Stderr, "GATEHOUSE_E2E_BIN=%s: %v\n", dir, err)
				os.Exit(1)
			}
		}
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("/var/tmp", "gatehouse-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755)
	gatehouseBin = filepath.Join(dir, "gatehouse")
	hookBin = filepath.Join(dir, "gatehouse-hook")
	// The three programs, side by side as make build puts them: the
	// settings install and managed-settings write name gatehouse-hook, so
	// Claude Code runs it as the hook and the relay, and the service finds
	// gatehouse-init beside itself.
	for bin, pkg := range map[string]string{gatehouseBin: "app/gatehouse", hookBin: "app/gatehouse-hook",
		filepath.Join(dir, "gatehouse-init"): "app/gatehouse-init"} {
		build := exec.Command("go", "build", "-o", bin, "github.com/gatehouse-dev/gatehouse/"+pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build does
		out, err := build.CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

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

	mu      sync.Mutex
	results []toolResult
	seen    map[string]bool // tool_use_ids recorded
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
	body, _ := io.ReadAll(r.Body)
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 10}`)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	calls := f.calls
	if len(calls) == 0 {
		calls = []toolCall{{"Bash", f.input}}
	}
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	// Every message, not only the last: Claude Code may end the request
	// with a reminder of its own after the tool_results.
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type != "tool_result" {
					continue
				}
				f.mu.Lock()
				if f.seen == nil {
					f.seen = map[string]bool{}
				}
				if !f.seen[b.ToolUseID] { // a request sent again records nothing new
					f.seen[b.ToolUseID] = true
					f.results = append(f.results, toolResult{Content: resultText(b.Content), IsError: b.IsError})
				}
				f.mu.Unlock()
			}
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	ev := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		fl.Flush()
	}
	f.mu.Lock()
	next := len(f.results)
	f.mu.Unlock()
	// A message id of its own for each answer: Claude Code merges
	// assistant messages that share one.
	ev("message_start", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_e2e%d", next), "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
	}})
	if next < len(calls) && offered[calls[next].Name] {
		in, _ := json.Marshal(calls[next].Input)
		ev("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_e2e%d", next), "name": calls[next].Name, "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{
			"type": "input_json_delta", "partial_json": string(in)}})
		ev("content_block_stop", map[string]any{"index": 0})
		ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}})
	} else {
		ev("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": "done"}})
		ev("content_block_stop", map[string]any{"index": 0})
		ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}})
	}
	ev("message_stop", map[string]any{})
}

// resultText flattens a tool_result's content (a string or text blocks).
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		b.WriteString(x.Text)
	}
	return b.String()
}

func (f *fakeAPI) result(t *testing.T) toolResult {
	t.Helper()
	return f.all(t, 1)[0]
}

// all returns the tool_results, n of them.
func (f *fakeAPI) all(t *testing.T, n int) []toolResult {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.results) != n {
		t.Fatalf("the fake API saw %d tool_results, want %d: %+v", len(f.results), n, f.results)
	}
	return f.results
}

// world is one isolated user: a home, a workspace, a running service.
type world struct {
	t         *testing.T
	tb        testing.TB
	claude    string
	dir       string
	home      string
	workspace string
	runtime   string // XDG_RUNTIME_DIR: the service socket's directory
	serve     *exec.Cmd
	serveLog  bytes.Buffer
	extraEnv  []string // for claude
	// claudeOut, when set, also gets claude's output as it is written.
	claudeOut io.Writer
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, tb: t, claude: requireClaude(t)}
	w.dir = sandboxtest.Dir(t)
	w.home = filepath.Join(w.dir, "home")
	w.workspace = filepath.Join(w.home, "src", "proj")
	must(t, os.MkdirAll(w.workspace, 0o755))
	must(t, os.MkdirAll(filepath.Join(w.home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(w.home, ".ssh", "id_e2e"), []byte("SECRET-KEY\n"), 0o600))
	rt, err := os.MkdirTemp("/tmp", "ghrt")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(rt) })
	w.runtime = rt
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w *world) env() []string {
	return []string{
		"HOME=" + w.home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_RUNTIME_DIR=" + w.runtime,
		"LANG=C.UTF-8",
	}
}

// gatehouse runs the built binary as this world's user.
func (w *world) gatehouse(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(gatehouseBin, args...)
	cmd.Env = w.env()
	cmd.Dir = w.home
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("gatehouse %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startService runs gatehouse serve and waits for its socket.
func (w *world) startService() {
	w.tb.Helper()
	w.serve = exec.Command(gatehouseBin, "serve")
	w.serve.Env = w.env()
	w.serve.Stdout, w.serve.Stderr = &w.serveLog, &w.serveLog
	must(w.tb, w.serve.Start())
	w.tb.Cleanup(w.stopService)
	c := w.client()
	for i := 0; ; i++ {
		if _, err := c.Status(context.Background()); err == nil {
			return
		}
		if i == 200 {
			w.tb.Fatalf("the service did not come up:\n%s", w.serveLog.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (w *world) stopService() {
	if w.serve == nil || w.serve.Process == nil {
		return
	}
	w.serve.Process.Signal(os.Interrupt)
	w.serve.Wait()
	w.serve = nil
}

func (w *world) client() *localapi.Client {
	return localapi.NewClient(filepath.Join(w.runtime, "gatehouse", "gatehouse.sock"))
}

// sandboxSettings writes the rendered managed settings to a file for
// claude --settings: whole, or without their hooks (when the user settings
// from gatehouse install carry the hook).
func (w *world) sandboxSettings(withHooks bool) string {
	w.t.Helper()
	cmd := exec.Command(gatehouseBin, "managed-settings")
	cmd.Env = w.env()
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
	path := filepath.Join(w.dir, "claude-settings.json")
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
		w.t.Fatalf("claude: %v\n%s\nservice log:\n%s", err, out, w.serveLog.String())
	}
	return out
}

// converseErr is converse, with claude's failure returned.
func (w *world) converseErr(cwd, settings string, api *fakeAPI, extra ...string) (string, error) {
	w.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(w.t, err)
	srv := &http.Server{Handler: api}
	go srv.Serve(l)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"-p", "run the command", "--output-format", "json"}
	if settings != "" {
		args = append(args, "--settings", settings)
	}
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, w.claude, args...)
	cmd.Dir = cwd
	cmd.Env = append(w.env(),
		"ANTHROPIC_BASE_URL=http://"+l.Addr().String(),
		"ANTHROPIC_API_KEY=e2e-test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	)
	cmd.Env = append(cmd.Env, w.extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if w.claudeOut != nil {
		mw := io.MultiWriter(&out, w.claudeOut)
		cmd.Stdout, cmd.Stderr = mw, mw
	}
	err = cmd.Run()
	return out.String(), err
}

// events returns the service's recent events, oldest first.
func (w *world) events() []api.Event {
	w.t.Helper()
	evs, err := w.client().Events(context.Background(), 100)
	must(w.t, err)
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

// An allowed command is routed: it runs in Gatehouse's sandbox (~/.ssh is
// hidden there, and only the workspace is writable, which Claude Code's
// sandbox alone would not hide), the tool_result is its output with its
// exit status, and two linked agent_hook events record it.
func TestAllowedCommandRunsInGatehouse(t *testing.T) {
	w := newWorld(t)
	w.startService()
	out := w.gatehouse("install", "--no-service")
	contains(t, "install output", out, "Gatehouse hook installed", "'"+hookBin+"' hook claude")
	settings := w.sandboxSettings(false)

	res, _ := w.runClaude(w.workspace, settings, map[string]any{
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
	if _, err := os.Stat(filepath.Join(w.workspace, "inside.txt")); err != nil {
		t.Errorf("the workspace write did not happen: %v", err)
	}

	evs := w.events()
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
	w.startService()
	w.gatehouse("install", "--no-service")
	// The home directory is in no workspace root and may never be one:
	// nothing asks, the call is refused.
	elsewhere := w.home

	res, _ := w.runClaude(elsewhere, w.sandboxSettings(false), map[string]any{
		"command": "touch ran-marker", "description": "e2e",
	})
	contains(t, "tool_result", res.Content, "Gatehouse denied this command (cwd_outside_workspace)", "cannot be trusted as a workspace", "inside a workspace root")
	if _, err := os.Stat(filepath.Join(elsewhere, "ran-marker")); err == nil {
		t.Error("a denied command ran")
	}
	evs := w.events()
	if len(evs) != 1 || evs[0].Decision != "deny" || evs[0].BlockedBy != "cwd_outside_workspace" {
		t.Errorf("events: %+v", evs)
	}
}

// The model's timeout is honoured: Gatehouse's (two seconds shorter) fires
// first and the relay exits 124.
func TestTimeoutFromToolInput(t *testing.T) {
	w := newWorld(t)
	w.startService()
	w.gatehouse("install", "--no-service")
	start := time.Now()
	res, _ := w.runClaude(w.workspace, w.sandboxSettings(false), map[string]any{
		"command": "echo started; sleep 60", "description": "e2e", "timeout": 5000,
	})
	contains(t, "tool_result", res.Content, "Exit code 124", "started", "timed out after 3 s")
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
	evs := w.events()
	if len(evs) != 2 || evs[1].Status != "timed_out" || evs[1].TimeoutSeconds != 3 {
		t.Errorf("events: %+v", evs)
	}
}

// With the service stopped, the hook denies, and says how to start it.
func TestServiceStoppedHookDenies(t *testing.T) {
	w := newWorld(t)
	w.gatehouse("install", "--no-service")
	res, _ := w.runClaude(w.workspace, w.sandboxSettings(false), map[string]any{
		"command": "touch ran-marker", "description": "e2e",
	})
	contains(t, "tool_result", res.Content, "not reachable", "gatehouse service start")
	if _, err := os.Stat(filepath.Join(w.workspace, "ran-marker")); err == nil {
		t.Error("the command ran without the service")
	}
}

// The managed settings alone (no user install) route the call: their hook
// names this binary and pins governed_shell routing, even under a policy of
// framework.
func TestManagedSettingsRoute(t *testing.T) {
	w := newWorld(t)
	cfgDir := filepath.Join(w.home, ".config", "gatehouse")
	must(t, os.MkdirAll(cfgDir, 0o700))
	must(t, os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte("policy:\n  builtin_exec_routing: framework\n"), 0o600))
	w.startService()
	res, _ := w.runClaude(w.workspace, w.sandboxSettings(true), map[string]any{
		"command": "echo routed-$GATEHOUSE_EXECUTION_ID", "description": "e2e",
	})
	if !strings.Contains(res.Content, "routed-") || strings.TrimSpace(res.Content) == "routed-" {
		t.Errorf("tool_result %q: want the command's output from Gatehouse's sandbox", res.Content)
	}
	if evs := w.events(); len(evs) != 2 || evs[1].Status != "completed" {
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
	w.startService()
	settings := w.sandboxSettings(true)
	b, err := os.ReadFile(settings)
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(w.home, ".claude"), 0o700))
	must(t, os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), b, 0o600))
	res, _ := w.runClaude(w.workspace, settings, map[string]any{
		"command": "echo once-$GATEHOUSE_EXECUTION_ID", "description": "e2e",
	})
	if !strings.Contains(res.Content, "once-") || strings.TrimSpace(res.Content) == "once-" {
		t.Errorf("tool_result %q: want the command's output from Gatehouse's sandbox", res.Content)
	}
	evs := w.events()
	if len(evs) != 2 || evs[1].Status != "completed" {
		t.Errorf("want one decision and one execution, got %d events: %+v", len(evs), evs)
	}
}

// The credential-redaction case of the issue ("a command printing a
// credential returns it redacted") needs the credentials broker, which has
// not landed; it is not tested here.
