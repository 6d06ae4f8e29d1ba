package pipeline

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/limits"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// stormPids is the pids_max of the storm tests: small, so that a storm
// that is bounded stays light for the 2-core machines running the tests.
const stormPids = 48

// stormBound is the most tasks a command may reach under pids_max
// stormPids by RLIMIT_NPROC (sandboxinit/nproc.go).
const stormBound = stormPids + sandboxinit.InitReserve

// nprocHolds reports whether RLIMIT_NPROC binds commands run by this user:
// the kernel does not apply it to root.
func nprocHolds() bool { return os.Getuid() != 0 }

func stormFixture(t *testing.T) *fixture {
	return bwrapFixture(t, func(c *policy.Config) {
		c.Exec.Limits.PidsMax = stormPids
		c.Policy.DynamicAction = "allow" // python -c is code the parser cannot read
	})
}

// lastNumber returns the last line of out that is a number.
func lastNumber(t *testing.T, out string) int {
	t.Helper()
	lines := strings.Fields(out)
	for i := len(lines) - 1; i >= 0; i-- {
		if n, err := strconv.Atoi(lines[i]); err == nil {
			return n
		}
	}
	t.Fatalf("no count in the output %q", out)
	return 0
}

// TestForkStormCounted forks children that stay alive until forking
// fails, in spellings the command analysis cannot follow (python) and
// can (a bash loop), and threads: each reaches no more tasks than the
// limit, and the card says what held.
func TestForkStormCounted(t *testing.T) {
	t.Parallel()
	want := stormWant()
	for _, c := range stormCases(want) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stormRun(t, "bubblewrap", c.command, want)
		})
	}
}

// stormCases are storms that print how many tasks they started, cut at
// want.
func stormCases(want int) []struct{ name, command string } {
	return []struct{ name, command string }{
		{"python fork", `python3 -c '
import os, sys, time
n = 0
while n < ` + strconv.Itoa(want) + `:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print(n, flush=True)
'`},
		{"bash loop", `n=0; while [ $n -lt ` + strconv.Itoa(want) + ` ] && { sleep 60 & } 2>/dev/null; do n=$((n+1)); echo $n; done`},
		{"python threads", `python3 -c '
import threading, time
n = 0
while n < ` + strconv.Itoa(want) + `:
    try:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    except RuntimeError:
        break
    n += 1
print(n, flush=True)
'`},
	}
}

// TestForkStormNone runs the python storm with no sandbox, where
// RLIMIT_NPROC counts every task of the user: it is not parallel, so that
// no other test's tasks come or go between the count and the storm.
func TestForkStormNone(t *testing.T) {
	want := stormWant()
	stormRun(t, "none", stormCases(want)[0].command, want)
}

// stormWant is where a storm is cut: as root nothing bounds it (no
// delegated cgroup here, and no RLIMIT_NPROC for root), so it is cut
// early and the test checks the card without taking the host down.
func stormWant() int {
	if !nprocHolds() {
		return 2 * stormPids
	}
	return 5000
}

// stormRun runs a storm that prints how many tasks it started, cut at
// want, under backend, and checks the count against the card.
func stormRun(t *testing.T, backend, command string, want int) {
	f := stormFixture(t)
	if backend == "none" {
		// Without a sandbox RLIMIT_NPROC counts every task of the
		// user, over the count taken at the start.
		f.cfg.Exec.Sandbox.Backend, f.cfg.Policy.SandboxRequired = "none", false
	}
	// Without a user namespace the budget is the user's tasks at the
	// executor's count plus pids_max: tasks of other test binaries of
	// the same user that end meanwhile hand theirs to the storm. The
	// most they can free is what ran when the call started.
	others := 0
	if backend == "none" {
		others = int(sandboxinit.NProcBase(false))
	}
	o := f.run(command, func(r *api.ExecRequest) { r.TimeoutSeconds = 10 })
	if backend == "none" {
		others = max(others, int(sandboxinit.NProcBase(false)))
	}
	if o.Event.SandboxMode != backend {
		t.Fatalf("mode %q (%s), want %s", o.Event.SandboxMode, o.Event.Reason, backend)
	}
	t.Logf("status %s, %d ms, stdout tail %q, stderr %q", o.Event.Status, o.Event.DurationMS, o.Result.Stdout[max(0, len(o.Result.Stdout)-20):], o.Result.Stderr[:min(200, len(o.Result.Stderr))])
	if o.Event.Status == string(sandbox.StatusFailedToStart) {
		t.Errorf("status failed_to_start (%s), want completed or timed_out", o.Event.Reason)
	}
	n := lastNumber(t, o.Result.Stdout)
	l := o.Event.Limits
	cgroup := limits.Detect().Pids
	switch {
	case nprocHolds():
		if n > stormBound+others || n >= want || backend != "none" && n < stormPids/2 || n < 1 {
			t.Errorf("the storm reached %d tasks; want at most %d (pids_max %d + the init's reserve + %d other tasks of the user)", n, stormBound+others, stormPids, others)
		}
		if !l.Pids || !l.NProc {
			t.Errorf("limits_enforced %+v: want pids and nproc true", *l)
		}
	case !cgroup || backend == "none":
		if n != want {
			t.Errorf("as root the storm reached %d of %d: something bounded it", n, want)
		}
		if l.Pids || l.NProc {
			t.Errorf("limits_enforced %+v as root without a delegated cgroup: want pids and nproc false", *l)
		}
	}
}

// TestForkBombTeardown runs a fork bomb that ignores SIGTERM and forks
// from every process until the timeout: the host stays responsive, the
// number of tasks stays bounded, and the call returns within the
// timeout's kill grace.
func TestForkBombTeardown(t *testing.T) {
	t.Parallel()
	if !nprocHolds() && !limits.Detect().Pids {
		t.Skip("as root, with no delegated pids cgroup, nothing bounds a fork bomb (TestForkStormCounted shows the card says so); run as a user: .ci/test-as-user.sh")
	}
	f := stormFixture(t)
	const timeout = 3
	bomb := `python3 -c '
import os, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("start", flush=True)
while True:
    try:
        os.fork()
    except OSError:
        pass
'`
	// The probe: how long the host takes to run a process, while the
	// bomb runs. 1 s is the threshold this check states for "responsive".
	stop := make(chan struct{})
	var worst time.Duration
	var probes int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			start := time.Now()
			if err := exec.Command("true").Run(); err != nil {
				t.Errorf("probe: %v", err)
				return
			}
			worst = max(worst, time.Since(start))
			probes++
		}
	}()
	start := time.Now()
	o, err := f.ex.Execute(context.Background(), api.ExecRequest{Command: bomb, Agent: "cli", Surface: api.SurfaceCLI, TimeoutSeconds: timeout}, sandbox.Streams{})
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if o.Event.Status != string(sandbox.StatusTimedOut) || !strings.Contains(o.Result.Stdout, "start") {
		t.Errorf("status %q, stdout %q: want timed_out after the bomb started", o.Event.Status, o.Result.Stdout)
	}
	// timeout, then SIGTERM (ignored), then SIGKILL DefaultKillGrace later.
	if limit := timeout*time.Second + sandbox.DefaultKillGrace + 3*time.Second; took > limit {
		t.Errorf("the call returned after %v; want within %v (timeout, kill grace and a margin)", took, limit)
	}
	t.Logf("returned after %v; %d probes, the slowest %v; limits_enforced %+v", took, probes, worst, *o.Event.Limits)
	if worst > time.Second || probes == 0 {
		t.Errorf("%d probes on the host, the slowest took %v; want all under 1s", probes, worst)
	}
	if l := o.Event.Limits; !l.Pids {
		t.Errorf("limits_enforced %+v: want pids true", *l)
	}
}
