package probe

import (
	"os"
	"testing"
)

// requireBwrap skips when /usr/bin/bwrap is missing, unless REQUIRE_SANDBOX=1
// asks for the failure instead (STYLE §5).
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		if os.Getenv("REQUIRE_SANDBOX") == "1" {
			t.Fatalf("REQUIRE_SANDBOX=1 but /usr/bin/bwrap is missing: %v", err)
		}
		t.Skip("/usr/bin/bwrap not installed")
	}
}

func TestGatherFindsBwrap(t *testing.T) {
	requireBwrap(t)
	for _, arg := range []string{"", "/usr/bin/bwrap"} {
		f := Gather(arg)
		t.Logf("Gather(%q) = %+v", arg, f)
		if f.GOOS != "linux" {
			t.Errorf("GOOS: got %q, want %q", f.GOOS, "linux")
		}
		if !f.BwrapFound || f.BwrapPath == "" {
			t.Fatalf("Gather(%q): bwrap not found: %s", arg, f.BwrapError)
		}
		if arg != "" && f.BwrapPath != arg {
			t.Errorf("BwrapPath: got %q, want %q", f.BwrapPath, arg)
		}
		// Debian 12 ships 0.8.0; any supported release must parse and
		// pass the version check.
		v, err := parseBwrapVersion(f.BwrapVersion)
		if err != nil {
			t.Fatal(err)
		}
		if v.less(mustVersion(MinBwrapVersion)) {
			t.Errorf("bwrap version %s is older than %s", v, MinBwrapVersion)
		}
		if f.MaxUserNamespaces == nil {
			t.Errorf("MaxUserNamespaces is nil; /proc/sys/user/max_user_namespaces unread")
		}
		if f.SandboxExecFound {
			t.Errorf("SandboxExecFound on linux")
		}
		_, checks := Bubblewrap(f)
		for _, c := range checks {
			t.Logf("%-45s ok=%-5v %s", c.Name, c.OK, c.Detail)
		}
	}
}

func TestGatherMissing(t *testing.T) {
	f := Gather("/nonexistent/bwrap")
	if f.BwrapFound {
		t.Fatalf("found %q", f.BwrapPath)
	}
	if got, want := f.BwrapError, "bwrap not found at /nonexistent/bwrap"; got != want {
		t.Errorf("BwrapError: got %q, want %q", got, want)
	}

	t.Setenv("PATH", t.TempDir())
	f = Gather("")
	if got, want := f.BwrapError, "bwrap not found in PATH"; got != want {
		t.Errorf("BwrapError: got %q, want %q", got, want)
	}
}

func TestGatherNotExecutable(t *testing.T) {
	t.Parallel()
	p := t.TempDir() + "/bwrap"
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := Gather(p)
	if f.BwrapFound {
		t.Fatalf("found non-executable %q", p)
	}
	if got, want := f.BwrapError, "bwrap at "+p+" is not usable: permission denied"; got != want {
		t.Errorf("BwrapError: got %q, want %q", got, want)
	}
}

func TestGatherFakeBwrap(t *testing.T) {
	t.Parallel()
	p := t.TempDir() + "/bwrap"
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho 'bubblewrap 0.4.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := Gather(p)
	if got, want := f.BwrapVersion, "bubblewrap 0.4.0"; got != want {
		t.Errorf("BwrapVersion: got %q, want %q", got, want)
	}
	if f.BwrapSetuid {
		t.Error("BwrapSetuid: got true for a 0755 file")
	}
	if _, _, err := Select("bubblewrap", f); err == nil {
		t.Error("Select accepted bubblewrap 0.4.0")
	}

	// The setuid bit is read from the file (chmod works on one's own file
	// even where it would not be honoured).
	if err := os.Chmod(p, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if f := Gather(p); !f.BwrapSetuid {
		t.Error("BwrapSetuid: got false for a setuid file")
	}
}
