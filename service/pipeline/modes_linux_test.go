package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

func TestModeNone(t *testing.T) {
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
		c.Exec.Sandbox.Backend = "none"
		c.Policy.SandboxRequired = false
	})
	t.Setenv("GATEHOUSE_TEST_NONE_SECRET", "x") // not inherited either
	o := f.run(`echo "$GATEHOUSE_TEST_NONE_SECRET"; pwd; ulimit -f; exit 5`)
	if o.Event.SandboxMode != string(sandbox.ModeNone) || exitOf(o) != 5 {
		t.Errorf("mode %q exit %d, want none and 5", o.Event.SandboxMode, exitOf(o))
	}
	if want := "\n" + f.ws + "\n" + "4194304\n"; o.Result.Stdout != want {
		t.Errorf("stdout = %q, want %q (empty variable, cwd, 4GiB in the 1024-byte blocks of bash's ulimit -f)", o.Result.Stdout, want)
	}
	l := o.Event.Limits
	// Pids holds by RLIMIT_NPROC, which the kernel does not apply to root.
	if nonRoot := os.Getuid() != 0; l.DaemonKill || l.Tmpfs || l.Memory || l.Pids != nonRoot || l.NProc != nonRoot || !l.FileSize {
		t.Errorf("limits_enforced = %+v as uid %d, want file_size, and pids and nproc unless root", *l, os.Getuid())
	}
}

func TestModeNoneRequiredDenied(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
		c.Exec.Sandbox.Backend = "none"
		c.Policy.SandboxRequired = true
	})
	_, err := f.try("touch " + filepath.Join(f.ws, "ran"))
	if d := denial(err); d == nil || d.Code != DenySandboxUnavailable || d.Event.SandboxMode != "unavailable_denied" {
		t.Fatalf("err = %v, want sandbox_unavailable / unavailable_denied", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "ran")); err == nil {
		t.Errorf("the command ran")
	}
}

func TestSeccompOff(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, func(c *policy.Config) { c.Exec.Sandbox.Seccomp = "off" })
	o := f.run(`grep '^Seccomp:' /proc/self/status`)
	if o.Event.SandboxMode != string(sandbox.ModeBubblewrapNoSeccomp) || o.Event.SeccompReason == "" {
		t.Errorf("mode %q reason %q, want bubblewrap_no_seccomp with a reason", o.Event.SandboxMode, o.Event.SeccompReason)
	}
	if !strings.Contains(o.Result.Stdout, "Seccomp:\t0") {
		t.Errorf("a filter is installed: %q", o.Result.Stdout)
	}
}

func TestSeccompInstalled(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	o := f.run(`grep '^Seccomp:' /proc/self/status; grep NoNewPrivs /proc/self/status`)
	if !strings.Contains(o.Result.Stdout, "Seccomp:\t2") || !strings.Contains(o.Result.Stdout, "NoNewPrivs:\t1") {
		t.Errorf("status = %q, want a filter and no-new-privs", o.Result.Stdout)
	}
	// The init (pid 1) stays outside the filter on every thread: the
	// thread that started the shell carried it and is gone.
	// (bwrap sets no-new-privs on everything it starts.)
	o = f.run(`sleep 0.2; cat /proc/1/task/*/status | grep -E '^Seccomp:' | sort -u`)
	if want := "Seccomp:\t0\n"; o.Result.Stdout != want {
		t.Errorf("init threads: %q, want %q", o.Result.Stdout, want)
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
		c.Exec.Env.AgentSettable = []string{"FOO"}
	})
	for _, tc := range []struct {
		name string
		req  api.ExecRequest
		arg  string
		msg  string
	}{
		{"empty", api.ExecRequest{Command: "  "}, "command", "is empty"},
		{"too long", api.ExecRequest{Command: strings.Repeat("x", api.MaxCommandBytes+1)}, "command", "is 65537 bytes; the limit is 65536"},
		{"nul", api.ExecRequest{Command: "a\x00b"}, "command", "NUL"},
		{"negative timeout", api.ExecRequest{Command: "true", TimeoutSeconds: -1}, "timeout_seconds", "-1 is not allowed"},
		{"stdin", api.ExecRequest{Command: "true", Stdin: strings.Repeat("x", 1<<20+1)}, "stdin", "the limit is 1048576"},
		{"env key", api.ExecRequest{Command: "true", Env: map[string]string{"LD_PRELOAD": "x"}}, "env.LD_PRELOAD", "not in exec.env.agent_settable"},
	} {
		_, err := f.ex.Execute(t.Context(), tc.req, sandbox.Streams{})
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != tc.arg || !strings.Contains(ae.Msg, tc.msg) {
			t.Errorf("%s: err = %v, want %s: %s", tc.name, err, tc.arg, tc.msg)
		}
	}
}

func TestTimeoutClamp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
		c.Policy.ExecTimeoutSeconds = 30
		c.Exec.Limits.MaxTimeoutSeconds = 10
	})
	for _, tc := range []struct{ req, want int }{{0, 10}, {5, 5}, {11, 10}, {99999, 10}} {
		if got := f.ex.timeout(tc.req); got != tc.want {
			t.Errorf("timeout(%d) = %d, want %d", tc.req, got, tc.want)
		}
	}
}

func TestAgentEnv(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, func(c *policy.Config) { c.Exec.Env.AgentSettable = []string{"FOO"} })
	o := f.run(`echo "$FOO"`, func(r *api.ExecRequest) { r.Env = map[string]string{"FOO": "bar baz"} })
	if o.Result.Stdout != "bar baz\n" {
		t.Errorf("stdout = %q", o.Result.Stdout)
	}
}
