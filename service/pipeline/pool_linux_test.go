package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// setRefill sets the pool's refill delays.
func (f *fixture) setRefill(delay, afterEnd time.Duration) {
	p := f.ex.pool.Load()
	p.mu.Lock()
	p.delay, p.afterEnd = delay, afterEnd
	p.mu.Unlock()
}

// starting reports the slots the pool is starting or has ready.
func (f *fixture) starting() int {
	p := f.ex.pool.Load()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total() + len(p.ready)
}

// The sandbox that replaces a taken one is not started while the command
// runs (the two would compete for the CPU), but once it has ended.
func TestWarmRefillWaitsForTheCommand(t *testing.T) {
	f := warmFixture(t, 1, nil)
	f.setRefill(time.Hour, 0)
	done := make(chan *Outcome, 1)
	go func() { done <- f.run(`sleep 0.5`) }()
	// Well past the time a replacement takes to start when it is
	// started with the command.
	time.Sleep(300 * time.Millisecond)
	if n := f.starting(); n != 0 {
		t.Errorf("while the command runs, the pool has %d slots starting or ready, want 0", n)
	}
	if o := <-done; o.Event.SandboxStart != StartWarm {
		t.Fatalf("ran %s (%s)", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	f.waitReady(1)
}

// A command that runs long does not keep the pool short: the replacement
// starts after the pool's delay.
func TestWarmRefillDuringLongCommand(t *testing.T) {
	f := warmFixture(t, 1, nil)
	f.setRefill(50*time.Millisecond, time.Hour)
	mark := filepath.Join(f.ws, "started")
	done := make(chan *Outcome, 1)
	go func() { done <- f.run(`touch started && sleep 2`) }()
	for i := 0; ; i++ {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if i == 500 {
			t.Fatal("the command did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.waitReady(1)
	select {
	case o := <-done:
		t.Fatalf("the command ended before the pool refilled: %+v", o.Result)
	default:
	}
	if o := <-done; o.Event.SandboxStart != StartWarm {
		t.Fatalf("ran %s (%s)", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
}

// The init's warm-up while it waits leaves nothing behind: the only
// listening sockets a command sees are the egress bridge's.
func TestWarmUpLeavesNoListener(t *testing.T) {
	f := warmFixture(t, 1, nil)
	o := f.run(`cat /proc/net/tcp /proc/net/tcp6 2>/dev/null; echo "proxy=$HTTPS_PROXY"`)
	if o.Event.SandboxStart != StartWarm {
		t.Fatalf("ran %s (%s)", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	proxyPort := ""
	if i := strings.LastIndex(o.Result.Stdout, "proxy="); i >= 0 {
		v := strings.TrimSpace(o.Result.Stdout[i+len("proxy="):])
		if j := strings.LastIndex(v, ":"); j >= 0 {
			proxyPort = strings.TrimSuffix(v[j+1:], "/")
		}
	}
	for _, line := range strings.Split(o.Result.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "0A" { // TCP_LISTEN
			continue
		}
		_, portHex, _ := strings.Cut(f[1], ":")
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil || strconv.FormatUint(port, 10) != proxyPort {
			t.Errorf("a socket listens at %s (port %d) in the sandbox; the bridge's port is %q", f[1], port, proxyPort)
		}
	}
}

// Another agent's command does not discard the warm sandboxes of the
// agent that ran before: it takes the place of one of them, and each
// agent then finds one of its own.
func TestWarmPoolKeepsOtherAgents(t *testing.T) {
	f := warmFixture(t, 2, nil)
	f.setRefill(0, 0)
	as := func(agent string) func(*api.ExecRequest) {
		return func(r *api.ExecRequest) { r.Agent = agent }
	}
	o := f.run(`true`, as("claude-code"))
	if o.Event.SandboxStart != StartFresh || !strings.Contains(o.Event.SandboxStartReason, "claude-code") {
		t.Errorf("claude-code's first: %s (%s), want fresh: none of its own", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	f.waitAgents("claude-code, cli")
	if o = f.run(`true`); o.Event.SandboxStart != StartWarm {
		t.Errorf("cli after claude-code: %s (%s), want warm", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	f.waitAgents("claude-code, cli")
	if o = f.run(`true`, as("claude-code")); o.Event.SandboxStart != StartWarm {
		t.Errorf("claude-code again: %s (%s), want warm", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	f.waitAgents("claude-code, cli")
	// Once the other agent's slot has waited long enough, the agent that
	// runs takes the whole pool back.
	p := f.ex.pool.Load()
	p.mu.Lock()
	p.idle = 0
	p.mu.Unlock()
	if o = f.run(`true`, as("claude-code")); o.Event.SandboxStart != StartWarm {
		t.Errorf("claude-code a third time: %s (%s), want warm", o.Event.SandboxStart, o.Event.SandboxStartReason)
	}
	f.waitAgents("claude-code")
}

// waitAgents waits until the ready slots are for agents (Pool's Agent).
func (f *fixture) waitAgents(agents string) {
	f.t.Helper()
	for i := 0; ; i++ {
		st := f.ex.Pool()
		if st.Agent == agents && st.Ready == st.Size {
			return
		}
		if i == 500 {
			f.t.Fatalf("warm pool %+v, want full with %s", st, agents)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
