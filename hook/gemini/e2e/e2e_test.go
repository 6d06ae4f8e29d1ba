// Package e2e runs the real Gemini CLI (the pinned npm package
// @google/gemini-cli) against a fake Gemini API on 127.0.0.1, with the
// settings 'gatehouse install --agent gemini' writes, and checks that its
// shell calls are decided, routed and run by Gatehouse.
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

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// geminiVersion is the Gemini CLI these tests were written against
// (.ci/test-deps.sh installs it).
const geminiVersion = "0.61.0"

func TestMain(m *testing.M) { e2etest.Main(m, "gatehouse-e2e-bin-") }

var must, contains = e2etest.Must, e2etest.Contains

// fakeGemini is the Gemini API's generateContent and
// streamGenerateContent: each turn of the conversation is answered with
// the next of its shell commands as a run_shell_command call, then with
// text; every functionResponse it is sent is recorded, once.
type fakeGemini struct {
	commands  []string
	responses e2etest.Results[string] // each functionResponse's response, as JSON
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					ID       string          `json:"id"`
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	json.Unmarshal(body, &req)
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				f.responses.Add(fr.ID, string(fr.Response))
			}
		}
	}
	next := f.responses.Len()
	text := func(s string) map[string]any { return map[string]any{"text": s} }
	part := text("done")
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		// Gemini's own side questions (the model router's choice, whether
		// the model or the user speaks next) are answered plainly.
		part = text(`{"next_speaker": "user", "reasoning": "done", "model_choice": "flash"}`)
	} else if next < len(f.commands) {
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": f.commands[next], "description": "e2e"}}}
	}
	out, _ := json.Marshal(map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
	})
	if strings.Contains(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", out)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// world is one isolated user (e2etest.World) with Gemini's settings.
type world struct {
	*e2etest.World
	t      *testing.T
	gemini string
}

func newWorld(t *testing.T) *world {
	gemini := e2etest.RequireAgent(t, "gemini", "Gemini CLI", geminiVersion)
	w := &world{World: e2etest.NewWorld(t), t: t, gemini: gemini}
	w.WriteSecret("id_rsa", "SECRET-KEY-E2E\n")
	// Gemini's API key is chosen in its settings; the install merges the
	// hook beside it.
	must(t, os.MkdirAll(filepath.Join(w.Home, ".gemini"), 0o700))
	must(t, os.WriteFile(filepath.Join(w.Home, ".gemini", "settings.json"),
		[]byte(`{"security": {"auth": {"selectedType": "gemini-api-key"}}}`), 0o600))
	// No system settings of this machine's: only the user's.
	w.AgentEnv = []string{
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(w.Dir, "no-system-settings.json"),
		"GEMINI_CLI_SYSTEM_DEFAULTS_PATH=" + filepath.Join(w.Dir, "no-system-defaults.json"),
	}
	return w
}

// converse runs gemini -p in yolo mode against a fake API that asks for
// commands, one per turn, and returns the function responses it got.
func (w *world) converse(commands ...string) []string {
	w.t.Helper()
	f := &fakeGemini{commands: commands}
	addr := e2etest.ServeAPI(w.t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.gemini, "-p", "run the commands", "--approval-mode", "yolo", "--skip-trust", "-o", "json")
	cmd.Dir = w.Workspace
	cmd.Env = append(w.Env(),
		"GOOGLE_GEMINI_BASE_URL=http://"+addr,
		"GEMINI_API_KEY=e2e-test-key",
	)
	w.RunAgent(cmd)
	return f.responses.Want(w.t, len(commands), "function responses")
}

// One Gemini session asks for three commands. The first is routed: it
// runs in Gatehouse's sandbox (~/.ssh is hidden there), its output returns
// to the model, and the record says agent gemini-cli. The second a deny
// rule refuses: it never runs and the model gets the reason. The third an
// ask rule holds inside the hook until a person approves it on a
// terminal; then it runs and its output returns.
func TestGeminiRoutedDeniedHeld(t *testing.T) {
	w := newWorld(t)
	w.WriteConfig("policy:\n  rules:\n" +
		"    - {name: no-deploy, action: deny, reason: deploys run from CI, command: [echo], args: [{seq: [deploy]}]}\n" +
		"    - {name: ask-ship, action: ask, reason: shipping needs a person, command: [echo], args: [{seq: [ship]}]}\n")
	w.StartService()
	contains(t, "install output", w.Gatehouse("install", "--agent", "gemini", "--no-service", "--no-tray"),
		"Gatehouse hook installed", "'"+e2etest.HookBin+"' hook gemini")

	answered := make(chan string, 1)
	go func() {
		a, ok := w.AwaitApproval(90 * time.Second)
		if !ok {
			answered <- "no approval request appeared"
			return
		}
		if a.Agent != "gemini-cli" || a.Surface != api.SurfaceAgentHook || a.Rule != "ask-ship" || a.SessionID == "" {
			t.Errorf("approval request %+v", a)
		}
		answered <- w.AnswerOnTerminal("approve", a.ID)
	}()
	res := w.converse(
		"echo hello-$GATEHOUSE_EXECUTION_ID; cat ~/.ssh/id_rsa || echo ssh-hidden",
		"touch denied-ran; echo deploy now",
		"echo ship it; echo done-$((6*7))",
	)
	t.Logf("function responses: %q", res)
	contains(t, "the routed command's response", res[0], "hello-", "ssh-hidden")
	if strings.Contains(res[0], "SECRET-KEY") || strings.Contains(res[0], "hello-;") {
		t.Errorf("the command did not run in Gatehouse's sandbox: %s", res[0])
	}
	contains(t, "the denied command's response", res[1], "Tool execution blocked", "Gatehouse denied this command (policy_rule)", "deploys run from CI")
	if _, err := os.Stat(filepath.Join(w.Workspace, "denied-ran")); err == nil {
		t.Error("a denied command ran")
	}
	contains(t, "the held command's response", res[2], "ship it", "done-42")
	contains(t, "approve output", <-answered, "approved")

	evs := w.Events()
	var runs, denies int
	for _, e := range evs {
		if e.Agent != "gemini-cli" || e.Surface != api.SurfaceAgentHook || e.SessionID == "" {
			t.Errorf("event %s: agent %q surface %q session %q", e.ID, e.Agent, e.Surface, e.SessionID)
		}
		if e.Status == "completed" && e.SandboxMode != "" {
			runs++
		}
		if e.Decision == "deny" && e.BlockedBy == "policy_rule" {
			denies++
		}
	}
	if len(evs) != 5 || runs != 2 || denies != 1 {
		t.Errorf("want two decisions with their executions and a denial, got %d events: %+v", len(evs), evs)
	}
}

// With the service down, the hook blocks the command and says how to
// start the service; and the installed command blocks it when the hook's
// program is killed.
func TestGeminiBlocksWithoutService(t *testing.T) {
	w := newWorld(t)
	w.Gatehouse("install", "--agent", "gemini", "--no-service", "--no-tray")
	res := w.converse("touch ran-marker")
	contains(t, "the response", res[0], "Tool execution blocked", "not reachable", "gatehouse service start")
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-marker")); err == nil {
		t.Error("the command ran without the service")
	}

	// The hook's program killed (as by the kernel's OOM killer): run bare,
	// bash would exec it and die with it, and Gemini, reading no status
	// and no answer, would run the command (measured with Gemini CLI
	// 0.61.0); the installed command blocks.
	settings := filepath.Join(w.Home, ".gemini", "settings.json")
	b, err := os.ReadFile(settings)
	must(t, err)
	killed := filepath.Join(w.Dir, "gatehouse-killed")
	must(t, os.WriteFile(killed, []byte("#!/bin/sh\nkill -9 $$\n"), 0o755))
	must(t, os.WriteFile(settings, bytes.ReplaceAll(b, []byte(e2etest.HookBin), []byte(killed)), 0o600))
	res = w.converse("touch ran-marker")
	contains(t, "the response", res[0], "Tool execution blocked", "the hook failed (exit status 137)")
	if _, err := os.Stat(filepath.Join(w.Workspace, "ran-marker")); err == nil {
		t.Error("the command ran when the hook's program was killed")
	}
}
