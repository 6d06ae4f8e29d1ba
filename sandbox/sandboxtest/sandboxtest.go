// Package sandboxtest helps tests that run real sandboxes: it lets a test
// binary serve as Gatehouse's sandbox init, and skips (or, under
// REQUIRE_SANDBOX=1, fails) where the backend is missing.
package sandboxtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Stage runs the sandbox stage named by os.Args[1] when the test binary was
// started as one ("sandbox-init", "sandbox-exec", "escape-probe"), and
// exits; otherwise it returns. Call it first in TestMain. stages maps the
// stage names to their entry points.
func Stage(stages map[string]func(args []string) int) {
	if len(os.Args) < 2 {
		return
	}
	if f, ok := stages[os.Args[1]]; ok {
		os.Exit(f(os.Args[2:]))
	}
}

// Required reports whether REQUIRE_SANDBOX=1: missing backends fail tests
// instead of skipping them.
func Required() bool { return os.Getenv("REQUIRE_SANDBOX") == "1" }

// RequireBwrap skips t when bubblewrap cannot run here, or fails it under
// REQUIRE_SANDBOX=1.
func RequireBwrap(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("bwrap")
	if err == nil {
		out, err2 := exec.Command(path, "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
		if err2 == nil {
			return path
		}
		err = &exec.Error{Name: path, Err: errorString(strings.TrimSpace(string(out)))}
	}
	if Required() {
		t.Fatalf("REQUIRE_SANDBOX=1 but bubblewrap does not run: %v", err)
	}
	t.Skipf("bubblewrap does not run here: %v", err)
	return ""
}

// RequireSeatbelt skips t when sandbox-exec cannot confine a command here
// (it is not macOS, or /usr/bin/sandbox-exec does not run), or fails it
// under REQUIRE_SANDBOX=1.
func RequireSeatbelt(t testing.TB) {
	t.Helper()
	const exe = "/usr/bin/sandbox-exec"
	out, err := exec.Command(exe, "-p", "(version 1)(allow default)", "/usr/bin/true").CombinedOutput()
	if err == nil {
		return
	}
	err = &exec.Error{Name: exe, Err: errorString(strings.TrimSpace(string(out) + " " + err.Error()))}
	if Required() {
		t.Fatalf("REQUIRE_SANDBOX=1 but Seatbelt does not run: %v", err)
	}
	t.Skipf("Seatbelt does not run here: %v", err)
}

// RequireBackend returns the isolating backend of this system, bubblewrap
// on Linux and Seatbelt on macOS, when it runs here; it skips t otherwise,
// or fails it under REQUIRE_SANDBOX=1. A suite written against it runs
// unchanged on both.
func RequireBackend(t testing.TB) sandbox.Backend {
	t.Helper()
	switch runtime.GOOS {
	case "linux":
		RequireBwrap(t)
		return sandbox.BackendBubblewrap
	case "darwin":
		RequireSeatbelt(t)
		return sandbox.BackendSeatbelt
	}
	if Required() {
		t.Fatalf("REQUIRE_SANDBOX=1 but %s has no sandbox backend", runtime.GOOS)
	}
	t.Skipf("%s has no sandbox backend", runtime.GOOS)
	return ""
}

type errorString string

func (e errorString) Error() string { return string(e) }

// Dir returns a new directory for the test that is visible inside the
// sandbox: /tmp is private there, so it lives under /var/tmp.
func Dir(t testing.TB) string {
	t.Helper()
	base := "/var/tmp"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	d, err := os.MkdirTemp(base, "gatehouse-"+sanitize(t.Name())+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Make read-only leftovers removable first.
		filepath.Walk(d, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(d)
	})
	real, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// Browser returns Debian's chromium, skipping the test when it is
// missing, or failing it under REQUIRE_BROWSER=1 or REQUIRE_SANDBOX=1
// (make test sets both).
func Browser(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REQUIRE_BROWSER") == "1" || Required() {
		t.Fatal("REQUIRE_BROWSER=1 (or REQUIRE_SANDBOX=1) but chromium is not installed; install it (apt-get install chromium, or .ci/test-deps.sh)")
	}
	t.Skip("chromium is not installed")
	return ""
}
