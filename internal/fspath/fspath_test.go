package fspath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path, root string
		want       bool
	}{
		{"/app", "/app", true},
		{"/app/x", "/app", true},
		{"/app/x/y", "/app/", true},
		{"/app/", "/app", true},
		{"/app_backup", "/app", false},
		{"/app_backup/x", "/app", false},
		{"/ap", "/app", false},
		{"/app/x/../../etc", "/app", false},
		{"/app/./x", "/app", true},
		{"/etc", "/", true},
		{"/", "/", true},
		{"relative", "/", false},
		{"", "/", false},
		{"/app", "", false},
		{"", "", false},
		{"/tmp", "/tmp/x", false},
	} {
		if got := Within(c.path, c.root); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.path, c.root, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d = filepath.ToSlash(d)
	for _, dir := range []string{"ws/sub", "elsewhere/deep"} {
		if err := os.MkdirAll(filepath.Join(d, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"ws/link":   d + "/elsewhere/deep", // absolute
		"ws/rel":    "../elsewhere/deep",   // relative to ws
		"ws/chain":  "link",                // a link to a link
		"ws/loop":   "loop",
		"ws/gone":   d + "/nothing/here",
		"ws/uplink": "..",
	} {
		if err := os.Symlink(target, filepath.Join(d, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{d + "/ws/sub", d + "/ws/sub"},
		{d + "/ws//./sub/", d + "/ws/sub"},
		{d + "/ws/sub/..", d + "/ws"},
		{d + "/ws/link", d + "/elsewhere/deep"},
		{d + "/ws/rel/x", d + "/elsewhere/deep/x"},
		{d + "/ws/chain", d + "/elsewhere/deep"},
		// ".." after a symlink leaves where the link leads, as the kernel does.
		{d + "/ws/link/..", d + "/elsewhere"},
		{d + "/ws/link/../..", d},
		{d + "/ws/uplink/ws", d + "/ws"},
		// What does not exist is appended, cleaned.
		{d + "/ws/new/file", d + "/ws/new/file"},
		{d + "/ws/link/new/../x", d + "/elsewhere/deep/x"},
		{d + "/ws/gone/x", d + "/nothing/here/x"},
		{d + "/ws/loop/x", d + "/ws/loop/x"},
		{"rel/../x", "x"},
		{"/", "/"},
		{"/..", "/"},
	} {
		if got := Resolve(c.in); got != c.want {
			t.Errorf("Resolve(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTilde(t *testing.T) {
	for _, c := range []struct{ p, home, want string }{
		{"/home/u/src/app", "/home/u", "~/src/app"},
		{"/home/u", "/home/u", "/home/u"},
		{"/home/user2/x", "/home/u", "/home/user2/x"},
		{"/etc/passwd", "/home/u", "/etc/passwd"},
		{"/x", "", "/x"},
	} {
		if got := Tilde(c.p, c.home); got != c.want {
			t.Errorf("Tilde(%q, %q) = %q, want %q", c.p, c.home, got, c.want)
		}
	}
}
