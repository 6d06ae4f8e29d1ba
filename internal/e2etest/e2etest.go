// Package e2etest is the harness the agents' end-to-end suites share
// (hook/claude/e2e, hook/codex/e2e, hook/gemini/e2e): the three programs
// built side by side, and a World — one isolated user with a home, a
// workspace, a runtime directory and, when started, the service. Each
// suite keeps only what is its client's own: the fake model API and the
// client's run.
//
// It is for tests only: no production package may import it
// (internal/layout's TestTestHarnessStaysInTests).
package e2etest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// GatehouseBin is the gatehouse binary built for the suite, HookBin the
// small hook and relay client beside it.
var GatehouseBin, HookBin string

// Main is a suite's TestMain: it builds gatehouse (the front program),
// gatehouse-core, gatehouse-hook and gatehouse-init into a directory of /var/tmp named from prefix, runs the
// tests and removes the directory. With GATEHOUSE_E2E_BIN set (as
// bench-as-user.sh sets it for a user who cannot build from the checkout)
// it takes the four from that directory instead.
func Main(m *testing.M, prefix string) {
	if dir := os.Getenv("GATEHOUSE_E2E_BIN"); dir != "" {
		GatehouseBin, HookBin = filepath.Join(dir, "gatehouse"), filepath.Join(dir, "gatehouse-hook")
		for _, p := range []string{GatehouseBin, HookBin, filepath.Join(dir, "gatehouse-core"), filepath.Join(dir, "gatehouse-init")} {
			if _, err := os.Stat(p); err != nil {
				fmt.Fprintf(os.Stderr, "GATEHOUSE_E2E_BIN=%s: %v\n", dir, err)
				os.Exit(1)
			}
		}
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755)
	GatehouseBin, HookBin = filepath.Join(dir, "gatehouse"), filepath.Join(dir, "gatehouse-hook")
	// The four programs, side by side as make build puts them: the front
	// program hands what it does not take to gatehouse-core beside it;
	// install names gatehouse-hook in the agent's settings, so the agent
	// runs it as the hook and the relay; and the service finds
	// gatehouse-init beside itself.
	for bin, pkg := range map[string]string{GatehouseBin: "app/gatehouse", HookBin: "app/gatehouse-hook",
		filepath.Join(dir, "gatehouse-core"): "app/gatehouse-core", filepath.Join(dir, "gatehouse-init"): "app/gatehouse-init"} {
		build := exec.Command("go", "build", "-o", bin, "github.com/gatehouse-dev/gatehouse/"+pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build does
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

// RequireAgent returns the path of the agent's program (title names it in
// messages) when it is on PATH at the pinned version (a field of what
// program --version prints), or skips the test; under REQUIRE_SANDBOX=1
// it fails it. Bubblewrap is required too.
func RequireAgent(tb testing.TB, program, title, version string) string {
	tb.Helper()
	sandboxtest.RequireBwrap(tb)
	path, err := exec.LookPath(program)
	if err == nil {
		var out []byte
		out, err = exec.Command(path, "--version").Output()
		if err == nil && !slices.Contains(strings.Fields(string(out)), version) {
			err = fmt.Errorf("%s --version says %q, want %s", program, strings.TrimSpace(string(out)), version)
		}
	}
	if err != nil {
		if sandboxtest.Required() {
			tb.Fatalf("REQUIRE_SANDBOX=1 but %s %s is missing (%v); run .ci/test-deps.sh", title, version, err)
		}
		tb.Skipf("%s %s missing: %v", title, version, err)
	}
	return path
}

// ServeAPI serves a fake model API on a free port of 127.0.0.1 until the
// test ends and returns its address (host:port).
func ServeAPI(tb testing.TB, h http.Handler) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Must(tb, err)
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	tb.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// Results records what a fake model API is sent back for the calls it
// asked for: each call's result once, by the call's id, in the order they
// came (a client may send a request again). Its zero value is empty and
// ready.
type Results[T any] struct {
	mu   sync.Mutex
	seen map[string]bool
	list []T
}

// Add records v as the result of call id, unless one is recorded for it.
func (r *Results[T]) Add(id string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[id] {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[id] = true
	r.list = append(r.list, v)
}

// Len is how many results are recorded: the index of the next call to ask
// for.
func (r *Results[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.list)
}

// All returns the results recorded so far.
func (r *Results[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// Want returns the results and fails tb unless there are n of them; what
// names them in the message.
func (r *Results[T]) Want(tb testing.TB, n int, what string) []T {
	tb.Helper()
	got := r.All()
	if len(got) != n {
		tb.Fatalf("the fake API saw %d %s, want %d: %+v", len(got), what, n, got)
	}
	return got
}

// Text flattens the content a client sends back for a call: a string, or
// items with text (Anthropic's tool_result, OpenAI's function_call_output).
func Text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &items)
	var b strings.Builder
	for _, x := range items {
		b.WriteString(x.Text)
	}
	return b.String()
}

// World is one isolated user: a home, a workspace in it, a runtime
// directory for the service's socket, and the service when started.
type World struct {
	TB        testing.TB
	Dir       string
	Home      string
	Workspace string
	Runtime   string // XDG_RUNTIME_DIR: the service socket's directory
	// AgentEnv is added to the environment of every program the world
	// runs (the agent's own settings of this machine to leave out).
	AgentEnv []string

	Serve    *exec.Cmd
	ServeLog bytes.Buffer
}

// NewWorld makes a world in a fresh directory of tb's.
func NewWorld(tb testing.TB) *World {
	w := &World{TB: tb, Dir: sandboxtest.Dir(tb)}
	w.Home = filepath.Join(w.Dir, "home")
	w.Workspace = filepath.Join(w.Home, "src", "proj")
	Must(tb, os.MkdirAll(w.Workspace, 0o755))
	// Short: a socket's path is bounded.
	rt, err := os.MkdirTemp("/tmp", "ghrt")
	Must(tb, err)
	tb.Cleanup(func() { os.RemoveAll(rt) })
	w.Runtime = rt
	return w
}

// WriteSecret writes a private key of the user's to ~/.ssh/name, which
// Gatehouse's sandbox hides.
func (w *World) WriteSecret(name, content string) {
	w.TB.Helper()
	Must(w.TB, os.MkdirAll(filepath.Join(w.Home, ".ssh"), 0o700))
	Must(w.TB, os.WriteFile(filepath.Join(w.Home, ".ssh", name), []byte(content), 0o600))
}

// Env is the environment of the world's user.
func (w *World) Env() []string {
	return append([]string{
		"HOME=" + w.Home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_RUNTIME_DIR=" + w.Runtime,
		"LANG=C.UTF-8",
	}, w.AgentEnv...)
}

// Gatehouse runs the built binary as this world's user, from its home, and
// returns its output; it fails the test if gatehouse fails.
func (w *World) Gatehouse(args ...string) string {
	w.TB.Helper()
	cmd := exec.Command(GatehouseBin, args...)
	cmd.Env, cmd.Dir = w.Env(), w.Home
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.TB.Fatalf("gatehouse %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// WriteConfig writes the user's config.yaml.
func (w *World) WriteConfig(yaml string) {
	w.TB.Helper()
	dir := filepath.Join(w.Home, ".config", "gatehouse")
	Must(w.TB, os.MkdirAll(dir, 0o755))
	Must(w.TB, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(yaml), 0o644))
}

// StartService runs gatehouse serve and waits for its socket; the test's
// cleanup stops it.
func (w *World) StartService() {
	w.TB.Helper()
	w.Serve = exec.Command(GatehouseBin, "serve")
	w.Serve.Env = w.Env()
	w.Serve.Stdout, w.Serve.Stderr = &w.ServeLog, &w.ServeLog
	Must(w.TB, w.Serve.Start())
	w.TB.Cleanup(w.StopService)
	c := w.Client()
	for i := 0; ; i++ {
		if _, err := c.Status(context.Background()); err == nil {
			return
		}
		if i == 400 {
			w.TB.Fatalf("the service did not come up:\n%s", w.ServeLog.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// StopService interrupts the service and waits for it to end.
func (w *World) StopService() {
	if w.Serve == nil || w.Serve.Process == nil {
		return
	}
	w.Serve.Process.Signal(os.Interrupt)
	w.Serve.Wait()
	w.Serve = nil
}

// RunAgent runs the agent's command (its arguments, directory and
// environment set by the suite) and returns its output; if the agent
// fails, the test fails with that output and the service's log.
func (w *World) RunAgent(cmd *exec.Cmd) string {
	w.TB.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		w.TB.Fatalf("%s: %v\n%s\nservice log:\n%s", filepath.Base(cmd.Path), err, out.String(), w.ServeLog.String())
	}
	return out.String()
}

// Client is a client of the world's service.
func (w *World) Client() *localapi.Client {
	return localapi.NewClient(filepath.Join(w.Runtime, "gatehouse", "gatehouse.sock"))
}

// Events returns the service's recent events, oldest first.
func (w *World) Events() []api.Event {
	w.TB.Helper()
	evs, err := w.Client().Events(context.Background(), 100)
	Must(w.TB, err)
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs
}

// AwaitApproval waits up to d for a pending approval request and returns
// it; when none comes it marks the test failed and returns false. It may
// be called from a goroutine of the test's.
func (w *World) AwaitApproval(d time.Duration) (api.Approval, bool) {
	c := w.Client()
	for start := time.Now(); time.Since(start) < d; time.Sleep(50 * time.Millisecond) {
		if as, err := c.Approvals(context.Background()); err == nil && len(as) > 0 {
			return as[0], true
		}
	}
	w.TB.Errorf("no approval request appeared\nservice log:\n%s", w.ServeLog.String())
	return api.Approval{}, false
}

// AnswerOnTerminal runs gatehouse with args on a terminal (script(1)), as
// a person answering would, and returns its output. It may be called from
// a goroutine of the test's: a failure marks the test failed.
func (w *World) AnswerOnTerminal(args ...string) string {
	w.TB.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		w.TB.Error("script (util-linux) is needed to answer on a terminal")
		return ""
	}
	cmd := exec.Command("script", "-qec", GatehouseBin+" "+strings.Join(args, " "), "/dev/null")
	cmd.Env = w.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.TB.Errorf("gatehouse %s on a terminal: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Must fails tb if err is not nil.
func Must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// Contains marks tb failed for each of wants that got (what, in the
// message) does not contain.
func Contains(tb testing.TB, what, got string, wants ...string) {
	tb.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			tb.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}
