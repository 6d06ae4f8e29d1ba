//go:build linux || darwin

package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// testWarm runs every command of the fixtures' executors in a warm
// sandbox (GATEHOUSE_TEST_WARM=1).
var testWarm = os.Getenv("GATEHOUSE_TEST_WARM") == "1"

// fixture is a fake user: a home directory with a workspace in it.
type fixture struct {
	t    testing.TB
	dir  string // everything lives here
	home string
	ws   string
	cfg  *policy.Config
	ex   *Executor
}

// newFixture builds an executor over the embedded defaults with the
// workspace as default_cwd; mutate adjusts the config first.
func newFixture(t testing.TB, dir string, mutate func(*policy.Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: dir, home: filepath.Join(dir, "home")}
	f.ws = filepath.Join(f.home, "src")
	if err := os.MkdirAll(f.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := policy.Load(policy.LoadOptions{Home: f.home})
	if err != nil {
		t.Fatalf("loading defaults: %v", err)
	}
	f.cfg = &l.Config
	f.cfg.Exec.DefaultCWD = f.ws
	if mutate != nil {
		mutate(f.cfg)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f.ex, err = New(f.cfg, Options{
		Home:         f.home,
		InitPath:     exe,
		PrivatePaths: []string{filepath.Join(f.home, ".config", "gatehouse")},
		HostPath:     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		// As gatehouse's own composition root has it (app/cli/compose.go).
		ToolCacheRoot: filepath.Join(f.home, ".cache", "gatehouse", "sandbox"),
		// GATEHOUSE_TEST_WARM=1 (make test's unprivileged pass) runs every
		// command in a warm sandbox.
		TestOnlyWarmEveryCommand: testWarm,
	})
	if err != nil {
		t.Fatal(err)
	}
	if testWarm {
		f.ex.StartPool(1, "cli")
		t.Cleanup(f.ex.ClosePool)
	}
	return f
}

// run executes command and returns its outcome; it fails the test when the
// call was denied or invalid.
func (f *fixture) run(command string, mod ...func(*api.ExecRequest)) *Outcome {
	f.t.Helper()
	o, err := f.try(command, mod...)
	if err != nil {
		f.t.Fatalf("%q: %v", command, err)
	}
	return o
}

func (f *fixture) try(command string, mod ...func(*api.ExecRequest)) (*Outcome, error) {
	req := api.ExecRequest{Command: command, Agent: "cli", Surface: api.SurfaceCLI}
	for _, m := range mod {
		m(&req)
	}
	o, err := f.ex.Execute(context.Background(), req, sandbox.Streams{})
	// Forced warm, a command goes fresh only for what a warm sandbox
	// cannot take.
	if p := f.ex.pool.Load(); p != nil && p.force && o != nil && o.Event.Status != string(sandbox.StatusFailedToStart) && o.Event.SandboxMode == "bubblewrap" && o.Event.SandboxStart != StartWarm &&
		(strings.HasPrefix(o.Event.SandboxStartReason, "no warm sandbox") || o.Event.SandboxStartReason == sandbox.ErrPlanChanged.Error()) {
		f.t.Errorf("%q ran fresh under GATEHOUSE_TEST_WARM=1: %s", command, o.Event.SandboxStartReason)
	}
	return o, err
}

// hooks installs pinning hooks for f's workspace.
func (f *fixture) hooks(h *pinHooks) {
	testOnlyPinHooks.Store(f.ws, h)
	f.t.Cleanup(func() { testOnlyPinHooks.Delete(f.ws) })
}

func (f *fixture) write(rel, content string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func exitOf(o *Outcome) int {
	if o.Result.ExitCode == nil {
		return -1
	}
	return *o.Result.ExitCode
}

var _ = bytes.Contains
