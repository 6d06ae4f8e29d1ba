package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// warmFixture is a fixture whose executor keeps n warm sandboxes for the
// cli agent, and waits until they are ready.
func warmFixture(t *testing.T, n int, mutate func(*policy.Config)) *fixture {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	f := newFixture(t, sandboxtest.Dir(t), mutate)
	f.ex.ClosePool() // the one GATEHOUSE_TEST_WARM=1 started, if any
	f.ex.StartPool(n, "cli")
	// These tests are about slots started ahead, not forced ones.
	p := f.ex.pool.Load()
	p.mu.Lock()
	p.force = false
	p.mu.Unlock()
	p.fill()
	t.Cleanup(f.ex.ClosePool)
	f.waitReady(n)
	return f
}

// waitReady waits until n warm sandboxes are ready.
func (f *fixture) waitReady(n int) {
	f.t.Helper()
	for i := 0; f.ex.Pool().Ready < n; i++ {
		if i == 500 {
			f.t.Fatalf("warm pool: %+v, want %d ready", f.ex.Pool(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A command runs in a warm sandbox with its own environment, directory
// and output; the pool starts another for the next.
func TestWarmSandboxRuns(t *testing.T) {
	f := warmFixture(t, 1, func(c *policy.Config) { c.Exec.Env.AgentSettable = []string{"MY_VAR"} })
	sub := filepath.Join(f.ws, "sub")
	os.MkdirAll(sub, 0o755)
	st := f.ex.Pool()
	if st.Size != 1 || st.Ready != 1 || st.IdleRSS <= 0 {
		t.Errorf("pool status %+v", st)
	}
	o := f.run(`pwd; echo "$MY_VAR $GATEHOUSE_EXECUTION_ID"; echo err >&2; exit 3`, func(r *api.ExecRequest) {
		r.Cwd, r.Env = sub, map[string]string{"MY_VAR": "one"}
	})
	if o.Event.SandboxStart != StartWarm || exitOf(o) != 3 {
		t.Fatalf("start %q (%s), exit %d, stderr %q", o.Event.SandboxStart, o.Event.SandboxStartReason, exitOf(o), o.Result.Stderr)
	}
	if want := sub + "\none " + o.Event.ID + "\n"; o.Result.Stdout != want || o.Result.Stderr != "err\n" {
		t.Errorf("stdout %q stderr %q, want %q", o.Result.Stdout, o.Result.Stderr, want)
	}
	f.waitReady(1)
	o = f.run(`echo "[$MY_VAR]"; ls /run/gatehouse`)
	if o.Event.SandboxStart != StartWarm || !strings.HasPrefix(o.Result.Stdout, "[]\n") {
		t.Errorf("second: start %q (%s), stdout %q", o.Event.SandboxStart, o.Event.SandboxStartReason, o.Result.Stdout)
	}
}

// A warm sandbox started before a repository appeared in the workspace is
// not used for a command in it: the repository's .git/hooks would not be
// read-only there.
func TestWarmNotUsedAfterNewRepository(t *testing.T) {
	f := warmFixture(t, 1, nil)
	repo := filepath.Join(f.ws, "repo")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	o := f.run(`echo evil > .git/hooks/pre-commit && echo wrote`, func(r *api.ExecRequest) { r.Cwd = repo })
	if strings.Contains(o.Result.Stdout, "wrote") {
		t.Errorf("the command wrote .git/hooks")
	}
	if o.Event.SandboxStart != StartFresh || !strings.Contains(o.Event.SandboxStartReason, "mount plan changed") {
		t.Errorf("start %q (%s), want fresh: the plan changed", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	// The pool starts again for the plan as it is now.
	f.waitReady(1)
	o = f.run(`echo evil > .git/hooks/pre-commit && echo wrote`, func(r *api.ExecRequest) { r.Cwd = repo })
	if strings.Contains(o.Result.Stdout, "wrote") || o.Event.SandboxStart != StartWarm {
		t.Errorf("after refill: start %q (%s), stdout %q", o.Event.SandboxStart, o.Event.SandboxStartReason, o.Result.Stdout)
	}
}

// Nothing of one execution reaches the next: its environment, its /tmp,
// its egress proxy, its processes.
func TestWarmExecutionsAreIsolated(t *testing.T) {
	f := warmFixture(t, 2, func(c *policy.Config) { c.Exec.Env.AgentSettable = []string{"SECRET_ISH"} })
	o := f.run(`echo left > /tmp/mark; (sleep 30 &) ; ls /run/gatehouse/egress`, func(r *api.ExecRequest) {
		r.Env = map[string]string{"SECRET_ISH": "from-the-first"}
	})
	if o.Event.SandboxStart != StartWarm {
		t.Fatalf("first ran %s (%s)", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	o2 := f.run(`cat /tmp/mark; env; ps -e -o comm= 2>/dev/null || ls /proc`)
	if o2.Event.SandboxStart != StartWarm {
		t.Fatalf("second ran %s (%s)", o2.Event.SandboxStart, o2.Event.SandboxStartReason)
	}
	if strings.Contains(o2.Result.Stdout, "left") || strings.Contains(o2.Result.Stdout, "from-the-first") || strings.Contains(o2.Result.Stdout, "sleep") {
		t.Errorf("the second execution sees the first's state:\n%s", o2.Result.Stdout)
	}
	if strings.Contains(o2.Result.Stdout, o.Event.ID) {
		t.Errorf("the second execution sees the first's id")
	}
}
