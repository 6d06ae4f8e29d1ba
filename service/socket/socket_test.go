package socket

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ goos, home, xdg, state, want string }{
		{"linux", "/home/u", "/run/user/1000", "/home/u/.local/state/gatehouse", "/run/user/1000/gatehouse"},
		{"linux", "/home/u", "", "/home/u/.local/state/gatehouse", "/home/u/.local/state/gatehouse/run"},
		{"linux", "/home/u", "relative", "/s", "/s/run"},
		{"darwin", "/Users/u", "/ignored", "/s", "/Users/u/Library/Application Support/Gatehouse/run"},
	} {
		if got := Dir(tc.goos, tc.home, tc.xdg, tc.state); got != tc.want {
			t.Errorf("Dir(%q, %q, %q) = %q, want %q", tc.goos, tc.home, tc.xdg, got, tc.want)
		}
	}
}

func TestListen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no service socket on Windows")
	}
	base, err := os.MkdirTemp("", "ghsock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "gatehouse")
	if err := os.MkdirAll(dir, 0o755); err != nil { // too open: narrowed
		t.Fatal(err)
	}
	path := filepath.Join(dir, Name)
	// A stale socket (nobody listening) is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	l, err := Listen(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), want, err)
		}
	}
	// A live one is not taken over.
	if _, err := Listen(path, nil); err == nil || !strings.Contains(err.Error(), "already listening") {
		t.Errorf("second Listen: %v", err)
	}
	// This user's connections get through, with their uid.
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("x"))
			c.Close()
		}
	}()
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if uid, err := PeerUID(c); err != nil || uid != os.Getuid() {
		t.Errorf("PeerUID = %d, %v", uid, err)
	}
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil || b[0] != 'x' {
		t.Errorf("read %q %v", b, err)
	}
	// No service: NotRunning.
	if _, err := Dial(context.Background(), filepath.Join(base, "none.sock")); !NotRunning(err) {
		t.Errorf("NotRunning(%v) = false", err)
	}
}

func TestListenRefusesLongPath(t *testing.T) {
	t.Parallel()
	_, err := Listen("/tmp/"+strings.Repeat("x", 120)+"/s.sock", nil)
	if err == nil || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Errorf("Listen of a long path: %v", err)
	}
}
