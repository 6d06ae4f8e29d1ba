package keyring

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestOS runs the Store contract against the real Secret Service
// (gnome-keyring in make test), under a service name of its own.
func TestOS(t *testing.T) {
	requireKeyring(t)
	s := NewOS(fmt.Sprintf("gatehouse-test-%d", time.Now().UnixNano()))
	if _, err := s.Get("x"); errors.Is(err, ErrUnavailable) {
		if os.Getenv("REQUIRE_KEYRING") == "1" {
			t.Fatalf("REQUIRE_KEYRING=1: %v (hint: %s)", err, Hint(err))
		}
		t.Skipf("%v", err)
	}
	storeContract(t, s, "")
	// Another service's items are not listed.
	other := NewOS(s.ServiceName() + "-other")
	other.Set("mine", "v")
	defer other.Delete("mine")
	if names, _ := s.List(); len(names) != 0 {
		t.Errorf("List sees another service's items: %q", names)
	}
}

func TestOSNoBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	_, err := NewOS("gatehouse-test").Get("x")
	var u *UnavailableError
	if !errors.As(err, &u) || !strings.Contains(u.Cause, "no D-Bus session bus") || !strings.Contains(u.Hint, "dbus-run-session") {
		t.Fatalf("without a bus: %v", err)
	}
}

// TestOSLockedOrMissing runs a child in a session of its own whose Secret
// Service has no unlocked login keyring: the error says so, and how to fix
// it, instead of waiting for a prompt.
func TestOSLockedOrMissing(t *testing.T) {
	if os.Getenv("KEYRING_TEST_CHILD") == "1" {
		start := time.Now()
		_, err := NewOS("gatehouse-test").Get("x")
		var u *UnavailableError
		if !errors.As(err, &u) || u.Hint == "" {
			t.Fatalf("in a session without an unlocked keyring: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v", d)
		}
		fmt.Println("CAUSE:", u.Cause)
		return
	}
	for _, tool := range []string{"dbus-run-session", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("REQUIRE_KEYRING") == "1" {
				t.Fatalf("REQUIRE_KEYRING=1 but %s is missing", tool)
			}
			t.Skipf("%s missing", tool)
		}
	}
	dir := t.TempDir()
	// A login keyring exists (created with a password) but the daemon of
	// the child's session starts without it: locked.
	script := `set -e
printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null
gnome-keyring-daemon --replace --daemonize --components=secrets >/dev/null 2>&1
exec "$@"`
	cmd := exec.Command("dbus-run-session", "--", "sh", "-c", script, "sh", os.Args[0], "-test.run=^TestOSLockedOrMissing$", "-test.v")
	cmd.Env = append(os.Environ(), "KEYRING_TEST_CHILD=1", "XDG_DATA_HOME="+dir, "XDG_RUNTIME_DIR="+dir, "XDG_CONFIG_HOME="+dir,
		"DBUS_SESSION_BUS_ADDRESS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "CAUSE: the login keyring") {
		t.Errorf("child did not report a locked keyring:\n%s", out)
	}
	t.Logf("%s", out)
}

// requireKeyring skips the test without a session bus, or fails it under
// REQUIRE_KEYRING=1 (make test runs it inside .ci/with-desktop-session.sh).
func requireKeyring(t *testing.T) {
	t.Helper()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return
	}
	if os.Getenv("REQUIRE_KEYRING") == "1" {
		t.Fatal("REQUIRE_KEYRING=1 but there is no D-Bus session bus; run under .ci/with-desktop-session.sh")
	}
	t.Skip("no D-Bus session bus")
}
