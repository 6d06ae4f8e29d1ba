package limits

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// TestDetectHost checks Detect on the machine running the test. On the
// project's Linux machines (cgroup v1 hybrid, cgroup2 only at
// /sys/fs/cgroup/unified) it must say false for both, and why.
func TestDetectHost(t *testing.T) {
	t.Parallel()
	d := Detect()
	t.Logf("Detect() = %+v", d)
	if (!d.Memory || !d.Pids) && d.Reason == "" {
		t.Error("a false without a Reason")
	}
	if v2, _ := isCgroup2("/sys/fs/cgroup"); !v2 {
		if d.Memory || d.Pids {
			t.Errorf("Memory %v, Pids %v on a host without cgroup v2 at /sys/fs/cgroup; want false, false", d.Memory, d.Pids)
		}
		if !strings.HasPrefix(d.Reason, "cgroup v2 not mounted at /sys/fs/cgroup") {
			t.Errorf("Reason: got %q, want it to say cgroup v2 is not mounted at /sys/fs/cgroup", d.Reason)
		}
	}
	if !d.Memory && !d.Pids {
		_, err := d.NewGroup("exec", 1<<20, 16)
		if !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("NewGroup without delegation: got %v, want an error wrapping sandbox.ErrUnavailable", err)
		}
	}
}

func TestParentPID(t *testing.T) {
	t.Parallel()
	got, err := parentPID(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if want := os.Getppid(); got != want {
		t.Errorf("parentPID(self) = %d, want %d", got, want)
	}
}

// TestRealCgroup2 runs a Group against a real cgroup2 directory named by
// GATEHOUSE_TEST_CGROUP2 (it must be writable, e.g. /sys/fs/cgroup/unified
// as root on a hybrid host). It creates and removes a gatehouse-test-<pid>
// cgroup there. It proves the tree is accepted by the kernel, that a
// process started with FD lands in the execution's cgroup with its
// children, and that Kill and Close clean up. Limits are written only for
// the controllers that directory grants; on a hybrid host that is none.
func TestRealCgroup2(t *testing.T) {
	base := os.Getenv("GATEHOUSE_TEST_CGROUP2")
	if base == "" {
		t.Skip("GATEHOUSE_TEST_CGROUP2 not set")
	}
	t.Run("cgroup.kill", func(t *testing.T) { testRealCgroup2(t, base, osOps(killPID)) })
	// As on kernels before 5.14: Kill falls back to SIGKILL per process.
	t.Run("without cgroup.kill", func(t *testing.T) {
		o := osOps(killPID)
		o.write = func(p, data string) error {
			if filepath.Base(p) == "cgroup.kill" {
				return &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
			}
			return writeFile(p, data)
		}
		testRealCgroup2(t, base, o)
	})
}

func testRealCgroup2(t *testing.T, base string, o ops) {
	if ok, err := isCgroup2(base); !ok {
		t.Fatalf("%s is not a cgroup2 directory (%v)", base, err)
	}
	dir := filepath.Join(base, "gatehouse-test-"+itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range []string{filepath.Join(dir, Subtree), filepath.Join(dir, ServiceLeaf), dir} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	controllers, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		t.Fatal(err)
	}
	have := parseControllers(string(controllers))
	d := Delegation{Path: dir, Memory: have["memory"], Pids: have["pids"]}
	t.Logf("controllers granted: %q", strings.TrimSpace(string(controllers)))

	g, err := d.create(o, "exec", 64<<20, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	mem, pids := g.Enforced()
	t.Logf("enforced: memory %v, pids %v", mem, pids)
	if mem {
		if got, _ := os.ReadFile(filepath.Join(g.Path(), "memory.max")); strings.TrimSpace(string(got)) != "67108864" {
			t.Errorf("memory.max: got %q, want 67108864", got)
		}
	}
	if pids {
		if got, _ := os.ReadFile(filepath.Join(g.Path(), "pids.max")); strings.TrimSpace(string(got)) != "32" {
			t.Errorf("pids.max: got %q, want 32", got)
		}
	}

	fd, err := g.FD()
	if err != nil {
		t.Fatal(err)
	}
	if fd2, _ := g.FD(); fd2 != fd {
		t.Errorf("FD changed between calls: %d, then %d", fd, fd2)
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & sleep 60")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	cg, err := os.ReadFile("/proc/" + itoa(cmd.Process.Pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := parseProcCgroup(string(cg))
	if err != nil {
		t.Fatal(err)
	}
	if want := "/gatehouse-test-" + itoa(os.Getpid()) + "/" + Subtree + "/exec"; !strings.HasSuffix(rel, want) {
		t.Errorf("child's cgroup: got %q, want it to end in %q", rel, want)
	}
	// Wait for the background sleep to appear too.
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, _ := readPids(filepath.Join(g.Path(), "cgroup.procs"))
		if len(pids) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cgroup.procs holds %v, want the shell and its child", pids)
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("shell ended with %v, want SIGKILL", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shell still running 5s after Kill")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists after Close (%v)", g.Path(), err)
	}
	if _, err := g.FD(); err == nil {
		t.Error("FD after Close succeeded")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
