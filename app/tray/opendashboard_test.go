package tray_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Open dashboard hands the opener the sign-in page the service wrote, and
// nothing else: the login code, which every local user could read in the
// opener's argument list (/proc/PID/cmdline), is not in it.
func TestTrayOpensSignInPage(t *testing.T) {
	conn := sessionBus(t)
	w := serveWatcher(t, conn)
	// The opener: an xdg-open that keeps the argument list it was given.
	opener := t.TempDir()
	script := "#!/bin/sh\ncat /proc/$$/cmdline > " + opener + "/cmdline.tmp && mv " + opener + "/cmdline.tmp " + opener + "/cmdline\n"
	if err := os.WriteFile(filepath.Join(opener, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", opener+string(os.PathListSeparator)+os.Getenv("PATH"))

	home := t.TempDir()
	sock := filepath.Join(home, "run", "s.sock")
	svc := newFakeService(t, sock)
	svc.status = api.Status{Version: "test", Sandbox: api.SandboxStatus{Backend: "bubblewrap", Mode: "bubblewrap"}}
	svc.start()
	tr := startTray(t, conn, w, sock, home)
	root := tr.waitFor("Open dashboard enabled", func(root node) bool {
		dash, ok := root.child("Open dashboard")
		return ok && dash.Enabled
	})
	dash, _ := root.child("Open dashboard")
	tr.click(dash.ID)

	var cmdline []byte
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if cmdline, err = os.ReadFile(filepath.Join(opener, "cmdline")); err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the opener never ran; the tray's stderr:\n%s", tr.stderr)
		}
	}
	args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	if len(args) != 3 || args[2] != fakeSignInPage {
		t.Errorf("the opener's arguments %q, want the sign-in page %s alone", args, fakeSignInPage)
	}
	if strings.Contains(string(cmdline), fakeLoginCode) {
		t.Errorf("the login code is in the opener's argument list: %q", cmdline)
	}
}
