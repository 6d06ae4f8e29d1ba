//go:build linux || darwin

package pipeline

// The escape suite every isolating backend must pass: bubblewrap on Linux,
// Seatbelt on macOS (sandboxtest.RequireBackend). It names no backend: where
// the backends differ by design it asks the backend (KillsDaemons,
// PinMethod), so the same file runs unchanged on both. Each test runs a
// real command and then looks at the host. Backend-specific escapes
// (seccomp, namespaces) are in escape_linux_test.go.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// platformFixture is a fixture whose executor uses this system's
// isolating backend.
func platformFixture(t *testing.T, mutate func(*policy.Config)) (*fixture, sandbox.Backend) {
	t.Helper()
	b := sandboxtest.RequireBackend(t)
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
		c.Exec.Sandbox.Backend = string(b)
		if mutate != nil {
			mutate(c)
		}
	})
	return f, b
}

// probeCmd is the command that runs an escape probe inside the sandbox: the
// test binary, which is also the init (bound into the sandbox where the
// backend binds paths, run where it is otherwise).
func probeCmd(t *testing.T, b sandbox.Backend, args ...string) string {
	t.Helper()
	exe := sandbox.InitInSandbox
	if !b.BindsPaths() {
		var err error
		if exe, err = os.Executable(); err != nil {
			t.Fatal(err)
		}
	}
	return shq(exe) + " escape-probe " + strings.Join(args, " ")
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestEscapeSuiteRunsAndStamps(t *testing.T) {
	t.Parallel()
	f, b := platformFixture(t, nil)
	o := f.run(`echo hello; pwd; exit 3`)
	if o.Result.Stdout != "hello\n"+f.ws+"\n" || exitOf(o) != 3 {
		t.Errorf("stdout %q, exit %d", o.Result.Stdout, exitOf(o))
	}
	if o.Event.SandboxMode != string(b.Mode()) {
		t.Errorf("sandbox_mode %q, want %q", o.Event.SandboxMode, b.Mode())
	}
	if l := o.Event.Limits; l == nil || !l.FileSize || l.DaemonKill != b.KillsDaemons() {
		t.Errorf("limits_enforced %+v: want file_size, and daemon_kill %v", l, b.KillsDaemons())
	}
}

func TestEscapeReadsNoSecret(t *testing.T) {
	t.Parallel()
	f, b := platformFixture(t, nil)
	key := f.write("home/.ssh/id_ed25519", "SECRET-KEY-MATERIAL\n")
	conf := f.write("home/.config/gatehouse/config.yaml", "PRIVATE-GATEHOUSE-CONFIG\n")
	netrc := f.write("home/.netrc", "machine example.com password NETRC-PASSWORD\n")
	o := f.run(fmt.Sprintf("cat %s; cat %s; cat %s; ls -a %s; %s; exit 0",
		shq(key), shq(conf), shq(netrc), shq(filepath.Dir(key)), probeCmd(t, b, "read", shq(key))))
	all := o.Result.Stdout + o.Result.Stderr
	for _, secret := range []string{"SECRET-KEY-MATERIAL", "PRIVATE-GATEHOUSE-CONFIG", "NETRC-PASSWORD", "id_ed25519\n"} {
		if strings.Contains(all, secret) {
			t.Errorf("the command read %q:\n%s", secret, all)
		}
	}
	if !strings.Contains(o.Result.Stdout, "read: blocked") {
		t.Errorf("the read probe did not report blocked: %q", o.Result.Stdout)
	}
}

func TestEscapeWritesOnlyTheWorkspace(t *testing.T) {
	t.Parallel()
	f, _ := platformFixture(t, nil)
	outside := []string{
		filepath.Join(f.home, "outside"),
		filepath.Join(f.dir, "beside-home"),
		filepath.Join(f.home, ".ssh", "authorized_keys"),
		filepath.Join(f.home, ".config", "gatehouse", "policy.yaml"),
	}
	var cmd strings.Builder
	for _, p := range outside {
		fmt.Fprintf(&cmd, "mkdir -p %s; echo x > %s; ", shq(filepath.Dir(p)), shq(p))
	}
	cmd.WriteString("echo ok > inside; exit 0")
	f.run(cmd.String())
	for _, p := range outside {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the command wrote %s, outside the workspace", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "inside")); err != nil || string(b) != "ok\n" {
		t.Errorf("the command could not write in the workspace: %q, %v", b, err)
	}
}

func TestEscapeWriteDeny(t *testing.T) {
	t.Parallel()
	f, _ := platformFixture(t, nil)
	const config = "[core]\n\trepositoryformatversion = 0\n"
	f.write("home/src/.git/HEAD", "ref: refs/heads/main\n")
	f.write("home/src/.git/config", config)
	if err := os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.run(`echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> .git/config
mkdir -p .vscode; echo '{}' > .vscode/tasks.json; echo '{}' > .mcp.json; exit 0`)
	if _, err := os.Stat(filepath.Join(f.ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the command planted a git hook")
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config")); string(b) != config {
		t.Errorf(".git/config changed: %q", b)
	}
	for _, name := range []string{".vscode", ".mcp.json"} {
		if _, err := os.Lstat(filepath.Join(f.ws, name)); err == nil {
			t.Errorf("%s is in the workspace after the run", name)
		}
	}
}

func TestEscapeNetwork(t *testing.T) {
	t.Parallel()
	f, b := platformFixture(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	o := f.run(probeCmd(t, b, "tcp", ln.Addr().String()) + `; ` + probeCmd(t, b, "tcp", `"${HTTP_PROXY#http://}"`))
	lines := strings.Split(strings.TrimSpace(o.Result.Stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "tcp: blocked") || lines[1] != "tcp: allowed" {
		t.Errorf("want the host's loopback service blocked and the egress proxy reachable, got %q (stderr %q)", lines, o.Result.Stderr)
	}
}

func TestEscapeTimeoutEndsTheCommand(t *testing.T) {
	t.Parallel()
	f, _ := platformFixture(t, nil)
	o := f.run(`(sleep 2; echo late > late) & sleep 60`, func(r *api.ExecRequest) { r.TimeoutSeconds = 1 })
	if o.Event.Status != string(sandbox.StatusTimedOut) {
		t.Errorf("status %q, want timed_out", o.Event.Status)
	}
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(f.ws, "late")); err == nil {
		t.Error("a background job outlived the timeout")
	}
}

func TestEscapeFileSize(t *testing.T) {
	t.Parallel()
	f, _ := platformFixture(t, func(c *policy.Config) { c.Exec.Limits.FileSizeMax = 1 << 20 })
	f.run(`head -c 2097152 /dev/zero > big; exit 0`)
	fi, err := os.Stat(filepath.Join(f.ws, "big"))
	if err != nil || fi.Size() > 1<<20 {
		t.Errorf("big: %v, %v; want at most 1 MiB (exec.limits.file_size_max)", fi, err)
	}
}

// The judged bytes of a script run, though the file changes after the
// decision: bound over the path (bubblewrap) or run from the copy the
// command line was rewritten to (Seatbelt).
func TestEscapePinnedScript(t *testing.T) {
	t.Parallel()
	f, b := platformFixture(t, nil)
	script := f.write("home/src/job.sh", "echo judged\n")
	f.hooks(&pinHooks{beforeStart: func() { os.WriteFile(script, []byte("echo swapped\n"), 0o644) }})
	o := f.run(`bash job.sh`)
	if o.Result.Stdout != "judged\n" {
		t.Errorf("stdout %q, want the judged bytes' output", o.Result.Stdout)
	}
	if len(o.Event.PinnedScripts) != 1 || o.Event.PinnedScripts[0].PinMethod != b.PinMethod() || o.Event.PinCoverage != b.PinCoverage() {
		t.Errorf("pinned_scripts %+v, pin_coverage %q; want %s, %s", o.Event.PinnedScripts, o.Event.PinCoverage, b.PinMethod(), b.PinCoverage())
	}
}
