package assemble

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// TestMain lets the test binary serve as Gatehouse's sandbox init.
func TestMain(m *testing.M) {
	sandboxtest.Stage(map[string]func([]string) int{
		"sandbox-init": sandboxinit.Init,
		"sandbox-exec": sandboxinit.Exec,
		"session-net":  sandboxinit.SessionNet,
	})
	os.Exit(m.Run())
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServiceStartsFromItsOwnPackage builds the user service of a fake
// user from this package alone (no app/cli), serves it on the user's
// socket, runs a command in a real sandbox through the admission API and
// finds it on the audit trail; the workspaces it lists and trusts follow
// the configuration in force, not the file as it is on disk now.
func TestServiceStartsFromItsOwnPackage(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	dir := sandboxtest.Dir(t)
	home := filepath.Join(dir, "home")
	src, other := filepath.Join(home, "src"), filepath.Join(home, "other")
	for _, d := range []string{src, other, filepath.Join(home, "proj")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run, err := os.MkdirTemp("", "gha") // a socket's path is short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	env := map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR": run,
		"PATH":            "/usr/local/bin:/usr/bin:/bin",
	}
	getenv := func(k string) string { return env[k] }
	opts := policy.DefaultLoadOptions(runtime.GOOS, home, getenv)
	opts.ManagedFile = ""
	writeConfig := func(text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(opts.UserFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(opts.UserFile, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("policy:\n  workspace_roots: [~/src]\n")

	p := Locate(opts, getenv)
	p.Keys = keyring.NewMemory()
	p.InitPath, _ = os.Executable()
	if want := filepath.Join(run, "gatehouse"); filepath.Dir(p.Socket) != want {
		t.Fatalf("socket %s, want it in %s", p.Socket, want)
	}
	var log lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, err := New(ctx, Options{Paths: p, Load: opts, Version: "test", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	defer stop()

	c := localapi.NewClient(p.Socket)
	var st *api.Status
	for i := 0; ; i++ {
		if st, err = c.Status(context.Background()); err == nil {
			break
		}
		if i == 3000 {
			t.Fatalf("the service did not answer: %v\n%s", err, log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st.Version != "test" || st.Socket != p.Socket || st.RelayDir != p.Relay || !slices.Contains(st.Config, opts.UserFile) {
		t.Fatalf("status: version %q socket %q relay %q config %q", st.Version, st.Socket, st.RelayDir, st.Config)
	}

	// One command through the admission API, in the sandbox.
	var out, errb bytes.Buffer
	end, err := c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
		Command: "echo assembled", Cwd: src, Agent: "test", Surface: api.SurfaceCLI,
	}}, &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	if end.Exit != 0 || out.String() != "assembled\n" || end.Event == nil || end.Event.Status != "completed" || end.Event.SandboxMode == "" {
		t.Fatalf("exec: exit %d stdout %q stderr %q end %+v", end.Exit, out.String(), errb.String(), end)
	}

	// Its doctor is its own: GET /v1/doctor says the service runs (it is
	// told its own status) with nothing handed in from the CLI.
	rep, err := c.Doctor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if svcCheck, ok := rep.Check("service"); !ok || svcCheck.State != api.DoctorOK {
		t.Errorf("doctor's service check %+v (found %v); report %+v", svcCheck, ok, rep.Checks)
	}

	// The workspaces under the configuration in force: a file changed on
	// disk counts once the service reloads it, and not before.
	writeConfig("policy:\n  workspace_roots: [~/other]\n")
	if got := policyRoots(t, c); !slices.Equal(got, []string{src}) {
		t.Errorf("before the reload, policy roots %q, want %q", got, []string{src})
	}
	// A person's trust is judged under the configuration in force too: a
	// file broken on disk, not yet reloaded, does not refuse it.
	writeConfig("policy:\n  workspace_roots: [\n")
	proj := filepath.Join(home, "proj")
	if got, err := svc.AddWorkspace(proj, api.ByCLI); err != nil || got != proj {
		t.Errorf("AddWorkspace under the configuration in force: %q, %v", got, err)
	}
	writeConfig("policy:\n  workspace_roots: [~/other]\n")
	if r := svc.Reload(); !r.OK {
		t.Fatalf("reload: %+v", r)
	}
	if got := policyRoots(t, c); !slices.Equal(got, []string{other}) {
		t.Errorf("after the reload, policy roots %q, want %q", got, []string{other})
	}

	stop()
	// The execution is on the user's audit trail, through the observers
	// the service assembled.
	s, err := audit.Open(context.Background(), audit.Options{Path: p.Audit, Keys: p.Keys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range es {
		found = found || (e.Event.ID == end.Event.ID && e.Command == "echo assembled")
	}
	if !found {
		t.Errorf("execution %s not on the audit trail (%d entries)", end.Event.ID, len(es))
	}
	if strings.Contains(log.String(), "level=ERROR") {
		t.Errorf("the service logged an error:\n%s", log.String())
	}
}

// policyRoots are the roots the service lists as the configuration's.
func policyRoots(t *testing.T, c *localapi.Client) []string {
	t.Helper()
	ws, err := c.Workspaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range ws {
		if w.Origin == api.WorkspacePolicy {
			out = append(out, w.Path)
		}
	}
	return out
}
