//go:build linux || darwin

package direct

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// TestMain lets the test binary serve as the init's sandbox-exec stage.
func TestMain(m *testing.M) {
	sandboxtest.Stage(map[string]func([]string) int{"sandbox-exec": sandboxinit.Exec})
	os.Exit(m.Run())
}

func spec(t *testing.T, command string) *sandbox.Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return &sandbox.Spec{
		ID: "0123456789", Shell: "/bin/sh", Command: command, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin", "DIR=" + dir}, InitPath: exe,
		Timeout: 30 * time.Second, KillGrace: 500 * time.Millisecond,
	}
}

func run(t *testing.T, s *sandbox.Spec, opt Options) (*sandbox.Result, string, string) {
	t.Helper()
	var o, e bytes.Buffer
	res := RunWith(context.Background(), s, sandbox.Streams{Stdout: &o, Stderr: &e}, opt)
	return res, o.String(), e.String()
}

// gone waits past when a descendant of the command would have written
// path, and reports whether it never did.
func gone(t *testing.T, path string) bool {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	_, err := os.Stat(path)
	return os.IsNotExist(err)
}

func TestRunCompletes(t *testing.T) {
	t.Parallel()
	s := spec(t, `echo out; echo err >&2; pwd; exit 3`)
	s.FileSizeMax = 1 << 20
	res, out, errOut := run(t, s, Options{})
	if res.Status != sandbox.StatusCompleted || res.ExitCode != 3 || res.Mode != sandbox.ModeNone {
		t.Fatalf("result %+v, want completed, exit 3, mode none", res)
	}
	if out != "out\n"+s.Dir+"\n" || errOut != "err\n" {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
	if l := res.Limits; !l.FileSize || l.DaemonKill || l.Memory || l.Tmpfs {
		t.Errorf("limits %+v: want file_size only (no daemon kill, memory or tmpfs)", l)
	}
}

// The process group dies at the timeout: a background job that would
// write later never does.
func TestTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	s := spec(t, `(sleep 1; echo late > "$DIR/late") & sleep 30`)
	s.Timeout = 300 * time.Millisecond
	res, _, _ := run(t, s, Options{})
	if res.Status != sandbox.StatusTimedOut || !res.TimedOut {
		t.Fatalf("result %+v, want timed_out", res)
	}
	if !gone(t, filepath.Join(s.Dir, "late")) {
		t.Error("a background job outlived the timeout")
	}
}

// A command that ignores SIGTERM gets SIGKILL after the grace.
func TestKillAfterGrace(t *testing.T) {
	t.Parallel()
	s := spec(t, `trap '' TERM; (trap '' TERM; sleep 1; echo late > "$DIR/late") & sleep 30`)
	s.Timeout = 200 * time.Millisecond
	s.KillGrace = 200 * time.Millisecond
	t0 := time.Now()
	res, _, _ := run(t, s, Options{})
	if res.Status != sandbox.StatusTimedOut {
		t.Fatalf("result %+v, want timed_out", res)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if !gone(t, filepath.Join(s.Dir, "late")) {
		t.Error("a job ignoring SIGTERM outlived the kill")
	}
}

// Background jobs die when the shell exits; a descendant that left the
// group with setsid survives (daemon_kill false, as the result says).
func TestShellExitKillsTheGroupNotDaemons(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("no setsid(1) here: the daemon half cannot be tried") // util-linux; always on the Linux test machines
	}
	// The shell waits until the daemon has its own session, then exits.
	s := spec(t, `(sleep 1; echo late > "$DIR/job") &
/usr/bin/setsid sh -c 'touch "$DIR/started"; sleep 1; echo d > "$DIR/daemon"' </dev/null >/dev/null 2>&1 &
while [ ! -e "$DIR/started" ]; do sleep 0.05; done; exit 0`)
	res, _, _ := run(t, s, Options{})
	if res.Status != sandbox.StatusCompleted || res.Limits.DaemonKill {
		t.Fatalf("result %+v", res)
	}
	if !gone(t, filepath.Join(s.Dir, "job")) {
		t.Error("a background job outlived the shell")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "daemon")); err != nil {
		t.Errorf("the setsid daemon did not survive, which daemon_kill false says it does: %v", err)
	}
}

// With NewSession (Seatbelt's way) the shell leads a session of its own,
// with no controlling terminal.
func TestNewSession(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here to read the session from") // the Linux test machines have it
	}
	s := spec(t, `set -- $(cat /proc/$$/stat); echo "$1 $6"`)
	res, out, _ := run(t, s, Options{NewSession: true})
	f := strings.Fields(out)
	if res.Status != sandbox.StatusCompleted || len(f) != 2 || f[0] != f[1] {
		t.Errorf("result %+v, pid and session %q: want the shell to lead its session", res, out)
	}
	res, out, _ = run(t, s, Options{})
	if f = strings.Fields(out); len(f) != 2 || f[0] == f[1] {
		t.Errorf("without NewSession: pid and session %q, want the caller's session", out)
	}
	_ = res
}

// A wrapper (sandbox-exec on macOS) runs before the init; one that exits
// without running it is a failure to start, with its message.
func TestWrap(t *testing.T) {
	t.Parallel()
	s := spec(t, `echo "wrapped=$WRAPPED"`)
	res, out, _ := run(t, s, Options{Mode: sandbox.ModeSeatbelt, Wrap: []string{"/usr/bin/env", "WRAPPED=yes"}})
	if res.Status != sandbox.StatusCompleted || res.Mode != sandbox.ModeSeatbelt || out != "wrapped=yes\n" {
		t.Errorf("result %+v, stdout %q", res, out)
	}
	res, _, _ = run(t, s, Options{Mode: sandbox.ModeSeatbelt, Wrap: []string{"/bin/sh", "-c", "echo 'profile rejected: bad filter' >&2; exit 65", "sh"}})
	if res.Status != sandbox.StatusFailedToStart || res.StatusReason != "sandbox_unavailable" || res.Error != "profile rejected: bad filter" {
		t.Errorf("a wrapper that refused: %+v", res)
	}
	// The init's own refusal is still the reason when it ran.
	s.Shell = "/nonexistent/sh"
	res, _, _ = run(t, s, Options{Mode: sandbox.ModeSeatbelt, Wrap: []string{"/usr/bin/env"}})
	if res.Status != sandbox.StatusFailedToStart || !strings.Contains(res.Error, "/nonexistent/sh") {
		t.Errorf("a shell that does not exist: %+v", res)
	}
}
