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

// geminiVersion is the Gemini CLI these tests were written against
// (.ci/test-deps.sh installs it).
const geminiVersion = "0.61.0"

// gatehouseBin is the gatehouse binary built for these tests, hookBin the
// small hook and relay client beside it.
var gatehouseBin, hookBin string

func TestMain(m *testing.M) {
	if dir := os.Getenv("GATEHOUSE_E2E_BIN"); dir != "" {
		gatehouseBin, hookBin = filepath.Join(dir, "gatehouse"), filepath.Join(dir, "gatehouse-hook")
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
	// Side by side as make build puts them: install names gatehouse-hook
	// in Gemini's settings, and the service finds gatehouse-init.
	for bin, pkg := range map[string]string{gatehouseBin: "app/gatehouse", hookBin: "app/gatehouse-hook",
		filepath.Join(dir, "gatehouse-init"): "app/gatehouse-init"} {
		build := exec.Command("go", "build", "-o", bin, "github.com/gatehouse-dev/gatehouse/"+pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireGemini returns the gemini program, or skips (fails under
// REQUIRE_SANDBOX=1).
func requireGemini(t *testing.T) string {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	path, err := exec.LookPath("gemini")
	if err == nil {
		var out []byte
		out, err = exec.Command(path, "--version").Output()
		if err == nil && strings.TrimSpace(string(out)) != geminiVersion {
			err = fmt.Errorf("gemini is %s, not %s", strings.TrimSpace(string(out)), geminiVersion)
		}
	}
	if err != nil {
		if sandboxtest.Required() {
			t.Fatalf("REQUIRE_SANDBOX=1 but Gemini CLI %s is missing (%v); run .ci/test-deps.sh", geminiVersion, err)
		}
		t.Skipf("Gemini CLI %s missing: %v", geminiVersion, err)
	}
	return path
}

// fakeGemini is the Gemini API's generateContent and
// streamGenerateContent: each turn of the conversation is answered with
// the next of its shell commands as a run_shell_command call, then with
// text; every functionResponse it is sent is recorded, once.
type fakeGemini struct {
	commands []string

	mu        sync.Mutex
	responses []string // each functionResponse's response, as JSON
	seen      map[string]bool
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
	f.mu.Lock()
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && !f.seen[fr.ID] {
				f.seen[fr.ID] = true
				f.responses = append(f.responses, string(fr.Response))
			}
		}
	}
	next := len(f.responses)
	f.mu.Unlock()
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

// results returns the functionResponses, n of them.
func (f *fakeGemini) results(t *testing.T, n int) []string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.responses) != n {
		t.Fatalf("the fake API saw %d function responses, want %d: %q", len(f.responses), n, f.responses)
	}
	return f.responses
}

// world is one isolated user: a home, a workspace, a service.
type world struct {
	t         *testing.T
	gemini    string
	dir       string
	home      string
	workspace string
	runtime   string
	serve     *exec.Cmd
	serveLog  bytes.Buffer
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, gemini: requireGemini(t)}
	w.dir = sandboxtest.Dir(t)
	w.home = filepath.Join(w.dir, "home")
	w.workspace = filepath.Join(w.home, "src", "proj")
	must(t, os.MkdirAll(w.workspace, 0o755))
	must(t, os.MkdirAll(filepath.Join(w.home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(w.home, ".ssh", "id_rsa"), []byte("SECRET-KEY-E2E\n"), 0o600))
	// Gemini's API key is chosen in its settings; the install merges the
	// hook beside it.
	must(t, os.MkdirAll(filepath.Join(w.home, ".gemini"), 0o700))
	must(t, os.WriteFile(filepath.Join(w.home, ".gemini", "settings.json"),
		[]byte(`{"security": {"auth": {"selectedType": "gemini-api-key"}}}`), 0o600))
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
		// No system settings of this machine's: only the user's.
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(w.dir, "no-system-settings.json"),
		"GEMINI_CLI_SYSTEM_DEFAULTS_PATH=" + filepath.Join(w.dir, "no-system-defaults.json"),
	}
}

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

func (w *world) writeConfig(yaml string) {
	w.t.Helper()
	dir := filepath.Join(w.home, ".config", "gatehouse")
	must(w.t, os.MkdirAll(dir, 0o755))
	must(w.t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(yaml), 0o644))
}

func (w *world) startService() {
	w.t.Helper()
	w.serve = exec.Command(gatehouseBin, "serve")
	w.serve.Env = w.env()
	w.serve.Stdout, w.serve.Stderr = &w.serveLog, &w.serveLog
	must(w.t, w.serve.Start())
	w.t.Cleanup(w.stopService)
	c := w.client()
	for i := 0; ; i++ {
		if _, err := c.Status(context.Background()); err == nil {
			return
		}
		if i == 400 {
			w.t.Fatalf("the service did not come up:\n%s", w.serveLog.String())
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

// converse runs gemini -p in yolo mode against a fake API that asks for
// commands, one per turn, and returns the function responses it got.
func (w *world) converse(commands ...string) []string {
	w.t.Helper()
	f := &fakeGemini{commands: commands}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(w.t, err)
	srv := &http.Server{Handler: f}
	go srv.Serve(l)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.gemini, "-p", "run the commands", "--approval-mode", "yolo", "--skip-trust", "-o", "json")
	cmd.Dir = w.workspace
	cmd.Env = append(w.env(),
		"GOOGLE_GEMINI_BASE_URL=http://"+l.Addr().String(),
		"GEMINI_API_KEY=e2e-test-key",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("gemini: %v\n%s\nservice log:\n%s", err, out.String(), w.serveLog.String())
	}
	return f.results(w.t, len(commands))
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

// answerOnTerminal runs gatehouse with args on a terminal (script(1)), as
// a person answering would.
func (w *world) answerOnTerminal(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("script", "-qec", gatehouseBin+" "+strings.Join(args, " "), "/dev/null")
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("gatehouse %s on a terminal: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

// One Gemini session asks for three commands. The first is routed: it
// runs in Gatehouse's sandbox (~/.ssh is hidden there), its output returns
// to the model, and the record says agent gemini-cli. The second a deny
// rule refuses: it never runs and the model gets the reason. The third an
// ask rule holds inside the hook until a person approves it on a
// terminal; then it runs and its output returns.
func TestGeminiRoutedDeniedHeld(t *testing.T) {
	w := newWorld(t)
	w.writeConfig("policy:\n  rules:\n" +
		"    - {name: no-deploy, action: deny, reason: deploys run from CI, command: [echo], args: [{seq: [deploy]}]}\n" +
		"    - {name: ask-ship, action: ask, reason: shipping needs a person, command: [echo], args: [{seq: [ship]}]}\n")
	w.startService()
	contains(t, "install output", w.gatehouse("install", "--agent", "gemini", "--no-service", "--no-tray"),
		"Gatehouse hook installed", "'"+hookBin+"' hook gemini")

	answered := make(chan string, 1)
	go func() {
		c := w.client()
		for start := time.Now(); time.Since(start) < 90*time.Second; time.Sleep(50 * time.Millisecond) {
			as, err := c.Approvals(context.Background())
			if err != nil || len(as) == 0 {
				continue
			}
			a := as[0]
			if a.Agent != "gemini-cli" || a.Surface != api.SurfaceAgentHook || a.Rule != "ask-ship" || a.SessionID == "" {
				t.Errorf("approval request %+v", a)
			}
			answered <- w.answerOnTerminal("approve", a.ID)
			return
		}
		answered <- "no approval request appeared"
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
	if _, err := os.Stat(filepath.Join(w.workspace, "denied-ran")); err == nil {
		t.Error("a denied command ran")
	}
	contains(t, "the held command's response", res[2], "ship it", "done-42")
	contains(t, "approve output", <-answered, "approved")

	evs := w.events()
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
	w.gatehouse("install", "--agent", "gemini", "--no-service", "--no-tray")
	res := w.converse("touch ran-marker")
	contains(t, "the response", res[0], "Tool execution blocked", "not reachable", "gatehouse service start")
	if _, err := os.Stat(filepath.Join(w.workspace, "ran-marker")); err == nil {
		t.Error("the command ran without the service")
	}

	// The hook's program killed (as by the kernel's OOM killer): run bare,
	// bash would exec it and die with it, and Gemini, reading no status
	// and no answer, would run the command (measured with Gemini CLI
	// 0.61.0); the installed command blocks.
	settings := filepath.Join(w.home, ".gemini", "settings.json")
	b, err := os.ReadFile(settings)
	must(t, err)
	killed := filepath.Join(w.dir, "gatehouse-killed")
	must(t, os.WriteFile(killed, []byte("#!/bin/sh\nkill -9 $$\n"), 0o755))
	must(t, os.WriteFile(settings, bytes.ReplaceAll(b, []byte(hookBin), []byte(killed)), 0o600))
	res = w.converse("touch ran-marker")
	contains(t, "the response", res[0], "Tool execution blocked", "the hook failed (exit status 137)")
	if _, err := os.Stat(filepath.Join(w.workspace, "ran-marker")); err == nil {
		t.Error("the command ran when the hook's program was killed")
	}
}
