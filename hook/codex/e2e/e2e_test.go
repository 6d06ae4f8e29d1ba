// Package e2e runs the real Codex CLI (the pinned npm package
// @openai/codex) against a fake Responses API on 127.0.0.1, with the hook
// 'gatehouse install --agent codex' installs and trusts, and checks that
// its shell calls are decided, routed and run by Gatehouse.
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
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The Codex CLI these tests drive (.ci/test-deps.sh installs it).
const codexVersion = "0.169.0"

func TestMain(m *testing.M) { e2etest.Main(m, "gatehouse-codex-e2e-bin-") }

var must, contains = e2etest.Must, e2etest.Contains

// fakeResponses is an OpenAI Responses API that answers each turn with the
// next of its shell commands (a function call of the exec_command tool
// Codex offers), then ends the conversation, and records every
// function_call_output and the first request's tools.
type fakeResponses struct {
	commands []string
	outputs  e2etest.Results[string]

	mu    sync.Mutex
	tools []string // offered in the first request
	asked bool
}

func (f *fakeResponses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string            `json:"model"`
		Input []json.RawMessage `json:"input"`
		Tools []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	f.mu.Lock()
	if !f.asked {
		f.asked = true
		for _, t := range req.Tools {
			f.tools = append(f.tools, t.Type+":"+t.Name)
		}
	}
	f.mu.Unlock()
	for _, raw := range req.Input {
		var it struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil || it.Type != "function_call_output" {
			continue
		}
		f.outputs.Add(it.CallID, e2etest.Text(it.Output))
	}
	next := f.outputs.Len()

	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	ev := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		fl.Flush()
	}
	id := fmt.Sprintf("resp_e2e%d", next)
	ev(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	var item map[string]any
	if next < len(f.commands) {
		args, _ := json.Marshal(map[string]any{"cmd": f.commands[next]})
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_e2e%d", next), "call_id": fmt.Sprintf("call_e2e%d", next),
			"name": "exec_command", "arguments": string(args), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_e2e%d", next), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	ev(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	ev(map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "output": []any{},
		"usage": map[string]any{"input_tokens": 1, "input_tokens_details": nil, "output_tokens": 1, "output_tokens_details": nil, "total_tokens": 2}}})
}

// results returns the function_call_outputs in the order they came, n of
// them.
func (f *fakeResponses) results(t *testing.T, n int) []string {
	t.Helper()
	f.mu.Lock()
	tools := f.tools
	f.mu.Unlock()
	return f.outputs.Want(t, n, fmt.Sprintf("function_call_outputs (tools offered: %v)", tools))
}

// world is one isolated user (e2etest.World) with a Codex home.
type world struct {
	*e2etest.World
	t     *testing.T
	codex string
}

func newWorld(t *testing.T) *world {
	codex := e2etest.RequireAgent(t, "codex", "Codex CLI", codexVersion)
	w := &world{World: e2etest.NewWorld(t), t: t, codex: codex}
	w.WriteSecret("id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET-KEY-E2E\n")
	w.AgentEnv = []string{"SHELL=/bin/bash"}
	return w
}

// install runs gatehouse install --agent codex and adds the fake model
// provider to Codex's config.toml.
func (w *world) install() {
	w.t.Helper()
	out := w.Gatehouse("install", "--agent", "codex", "--no-service", "--no-tray")
	for _, want := range []string{"Gatehouse hook installed", "'" + e2etest.HookBin + "' hook codex", "the hook is trusted"} {
		if !strings.Contains(out, want) {
			w.t.Fatalf("install output lacks %q:\n%s", want, out)
		}
	}
}

// run runs codex exec from cwd against a fake API that asks for commands,
// one a turn, and returns what the API got back for them and codex's
// output.
func (w *world) run(cwd string, commands ...string) ([]string, string) {
	w.t.Helper()
	f := &fakeResponses{commands: commands}
	addr := e2etest.ServeAPI(w.t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.codex, "exec", "--skip-git-repo-check", "--sandbox", "workspace-write",
		"-c", `model_provider="e2e"`,
		"-c", `model_providers.e2e={ name = "e2e", base_url = "http://`+addr+`/v1", wire_api = "responses", env_key = "E2E_API_KEY" }`,
		"-c", `approval_policy="never"`,
		"-m", "gpt-e2e", "run the commands")
	cmd.Dir = cwd
	cmd.Env = append(w.Env(), "E2E_API_KEY=e2e-test-key", "CODEX_DISABLE_UPDATE_CHECK=1")
	out := w.RunAgent(cmd)
	return f.results(w.t, len(commands)), out
}

// One Codex session, the service up: an allowed command is routed and runs
// in Gatehouse's sandbox (the record says agent codex and the session is
// Codex's), its output returns to the model, and ~/.ssh/id_rsa is not
// there; a denied command does not run and the model gets the reason; a
// command an ask rule holds waits in the hook until a person approves it
// on a terminal, then runs.
func TestCodexRoutedDeniedHeld(t *testing.T) {
	w := newWorld(t)
	w.WriteConfig("policy:\n  rules:\n    - {name: ask-deploy, action: ask, reason: deploys need a person, command: [echo], args: [{seq: [deploy]}]}\n")
	w.StartService()
	w.install()
	answered := make(chan string, 1)
	go func() {
		a, _ := w.AwaitApproval(60 * time.Second)
		if a.Agent != "codex" || a.Surface != api.SurfaceAgentHook || a.Rule != "ask-deploy" || a.SessionID == "" {
			t.Errorf("approval request %+v", a)
		}
		answered <- w.AnswerOnTerminal("approve", a.ID)
	}()
	outs, log := w.run(w.Workspace,
		"echo hello from $GATEHOUSE_EXECUTION_ID; cat ~/.ssh/id_rsa || echo ssh-hidden; echo data > inside.txt && echo wrote-inside",
		"rm -rf ~; touch ran-marker",
		"echo deploy now; echo done-$((6*7))")
	t.Logf("function_call_outputs: %q", outs)
	contains(t, "routed output", outs[0], "hello from ", "ssh-hidden", "wrote-inside")
	if strings.Contains(outs[0], "SECRET-KEY") || strings.Contains(outs[0], "hello from \n") {
		t.Errorf("the command did not run in Gatehouse's sandbox:\n%s", outs[0])
	}
	contains(t, "denied output", outs[1], "Command blocked by PreToolUse hook", "Gatehouse denied this command (policy_rule)")
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-marker")); err == nil {
		t.Error("a denied command ran")
	}
	contains(t, "held output", outs[2], "deploy now", "done-42")
	contains(t, "approve output", <-answered, "approved")
	evs := w.Events()
	if len(evs) != 5 {
		t.Fatalf("want a decision and an execution, a denial, a decision and an execution: %d events: %+v\ncodex:\n%s", len(evs), evs, log)
	}
	for _, e := range evs {
		if e.Agent != "codex" || e.Surface != api.SurfaceAgentHook || e.SessionID == "" || e.SessionID != evs[0].SessionID {
			t.Errorf("event %s: agent %q surface %q session %q", e.ID, e.Agent, e.Surface, e.SessionID)
		}
	}
	if evs[1].ParentID != evs[0].ID || evs[1].Status != "completed" || evs[1].SandboxMode == "" || evs[2].Decision != "deny" ||
		evs[3].Approval == nil || evs[3].Approval.By != api.ByCLI || evs[4].Status != "completed" {
		t.Errorf("events: %+v", evs)
	}
	card := w.Gatehouse("audit", "show", evs[1].ID)
	contains(t, "the card", card, "codex")
	list := w.Gatehouse("audit", "list", "--agent", "codex")
	contains(t, "audit list --agent codex", list, evs[1].ID[:8])
}

// With the service down the command does not run: the hook denies it and
// says how to start the service. With the hook's program gone, the
// command does not run either: the installed line turns the shell's 127
// into the status 2 Codex blocks on (trusted for this run by
// --dangerously-bypass-hook-trust, since the line changed).
func TestCodexServiceDown(t *testing.T) {
	w := newWorld(t)
	w.install()
	outs, _ := w.run(w.Workspace, "touch ran-marker")
	contains(t, "output", outs[0], "Command blocked by PreToolUse hook", "not reachable", "gatehouse service start")
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-marker")); err == nil {
		t.Error("the command ran without the service")
	}

	hooks := filepath.Join(w.Home, ".codex", "hooks.json")
	b, err := os.ReadFile(hooks)
	must(t, err)
	must(t, os.WriteFile(hooks, bytes.ReplaceAll(b, []byte(e2etest.HookBin), []byte("/nonexistent/gatehouse-hook")), 0o600))
	wrapper := filepath.Join(w.Dir, "codex")
	must(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+w.codex+" --dangerously-bypass-hook-trust \"$@\"\n"), 0o755))
	w.codex = wrapper
	outs, _ = w.run(w.Workspace, "touch ran-marker")
	contains(t, "output", outs[0], "Command blocked by PreToolUse hook: ", "Gatehouse's hook failed (exit status 127), so the command did not run")
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-marker")); err == nil {
		t.Error("the command ran without the hook's program")
	}
}

// What Codex does when a PreToolUse hook fails, measured on the real
// client (codex-rs/hooks/src/events/pre_tool_use.rs parse_completed says
// the same): exit status 2 with a reason on stderr blocks the call (a Go
// panic exits 2 with its message on stderr, so a crash of Gatehouse's hook
// blocks too); any other status, a hook killed by a signal, a hook that
// cannot start and a hook that times out are logged as failed and the call
// runs. Gatehouse's hook answers every decision, a denial included, with
// status 0, and its installed line turns any other status into 2
// (TestCodexServiceDown), so only a hook that times out or whose shell is
// killed lets a call through: docs/agents.md names the gap. The hook here is a script, trusted
// for this run by --dangerously-bypass-hook-trust, with a 1 s timeout.
func TestCodexHookFailureModes(t *testing.T) {
	w := newWorld(t)
	must(t, os.MkdirAll(filepath.Join(w.Home, ".codex"), 0o700))
	script := filepath.Join(w.Dir, "hook.sh")
	must(t, os.WriteFile(script, []byte(`#!/bin/sh
in=$(cat)
case "$in" in
*case-exit2*) echo "blocked by the hook" >&2; exit 2 ;;
*case-exit1*) exit 1 ;;
*case-signal*) kill -9 $$ ;;
*case-timeout*) sleep 5 ;;
esac
`), 0o755))
	hooks := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"^Bash$","hooks":[{"type":"command","command":%q,"timeout":1}]},`+
		`{"matcher":"^Bash$","hooks":[{"type":"command","command":"/nonexistent/gatehouse-hook hook codex"}]}]}}`, script)
	must(t, os.WriteFile(filepath.Join(w.Home, ".codex", "hooks.json"), []byte(hooks), 0o600))
	wrapper := filepath.Join(w.Dir, "codex")
	must(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+w.codex+" --dangerously-bypass-hook-trust \"$@\"\n"), 0o755))
	w.codex = wrapper
	outs, _ := w.run(w.Workspace, "touch case-exit2", "touch case-exit1", "touch case-signal", "touch case-timeout")
	contains(t, "exit 2", outs[0], "Command blocked by PreToolUse hook: blocked by the hook")
	for _, m := range []string{"case-exit2", "case-exit1", "case-signal", "case-timeout"} {
		_, err := os.Stat(filepath.Join(w.Workspace, m))
		if ran := err == nil; ran != (m != "case-exit2") {
			t.Errorf("%s: the command ran: %v (want it to run unless the hook exits 2)", m, ran)
		}
	}
}
