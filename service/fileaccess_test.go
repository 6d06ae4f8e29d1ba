package service

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

// fileWorld is a home with a workspace, a deny-read directory, Gatehouse's
// config and symlinks between them.
type fileWorld struct {
	home, ws, ssh, cfg string
	scope              fileScope
}

func newFileWorld(t *testing.T) *fileWorld {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &fileWorld{home: filepath.Join(dir, "home")}
	w.ws = filepath.Join(w.home, "src", "proj")
	w.ssh = filepath.Join(w.home, ".ssh")
	w.cfg = filepath.Join(w.home, ".config", "gatehouse")
	for _, d := range []string{w.ws, w.ssh, w.cfg, filepath.Join(w.ws, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(w.ssh, "id"), filepath.Join(w.cfg, "config.yaml"), filepath.Join(w.ws, "main.go")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(w.ws, "key"):      filepath.Join(w.ssh, "id"), // a file into ~/.ssh
		filepath.Join(w.ws, "keys"):     "../../.ssh",               // a relative directory link
		filepath.Join(w.ws, "deep"):     w.ssh + "/../.ssh/../src",  // ".." after a link's target
		filepath.Join(w.ws, "up"):       filepath.Join(w.ssh),       // ".." after it is taken from ~/.ssh
		filepath.Join(w.ws, "loop"):     filepath.Join(w.ws, "loop"),
		filepath.Join(w.home, "cfglnk"): w.cfg,
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	w.scope = fileScope{denied: []string{w.ssh, w.cfg}, roots: []string{w.ws}, writeDeny: []string{".git/hooks/", ".git/config", ".claude/", ".bashrc"}}
	return w
}

func (w *fileWorld) decide(tool, access string, search bool, paths ...string) (string, string) {
	req := api.FileAccessRequest{Tool: tool, Access: access, Search: search, Paths: paths, Cwd: w.ws}
	if code, reason := checkFileRequest(&req); code != "" {
		return code, reason
	}
	return w.scope.decide(&req)
}

func TestFileScope(t *testing.T) {
	t.Parallel()
	w := newFileWorld(t)
	for _, tc := range []struct {
		name   string
		tool   string
		access string
		search bool
		paths  []string
		code   string
	}{
		{"read in the workspace", "Read", api.FileRead, false, []string{filepath.Join(w.ws, "main.go")}, ""},
		{"read outside the workspace", "Read", api.FileRead, false, []string{"/etc/hosts"}, ""},
		{"read ~/.ssh", "Read", api.FileRead, false, []string{filepath.Join(w.ssh, "id")}, DenyPathDenied},
		{"read ~/.ssh itself", "Read", api.FileRead, false, []string{w.ssh}, DenyPathDenied},
		{"read ~/.ssh by ..", "Read", api.FileRead, false, []string{w.ws + "/../../.ssh/id"}, DenyPathDenied},
		{"read a link into ~/.ssh", "Read", api.FileRead, false, []string{filepath.Join(w.ws, "key")}, DenyPathDenied},
		{"read through a directory link", "Read", api.FileRead, false, []string{filepath.Join(w.ws, "keys", "id")}, DenyPathDenied},
		{"relative path through a link", "Read", api.FileRead, false, []string{"keys/id"}, DenyPathDenied},
		{"a new file under a link", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, "keys", "new", "f")}, DenyPathDenied},
		// up/../x is ~/x to the kernel (outside the workspace), ws/x when
		// cleaned first: both must pass.
		{"dot-dot after a link", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, "up") + "/../x"}, DenyPathOutsideWorkspace},
		{"link target with dot-dots", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, "deep", "f")}, DenyPathOutsideWorkspace},
		{"symlink loop", "Read", api.FileRead, false, []string{filepath.Join(w.ws, "loop", "f")}, DenyPathDenied},
		{"edit the config", "Edit", api.FileWrite, false, []string{filepath.Join(w.cfg, "config.yaml")}, DenyPathDenied},
		{"edit the config by a link", "Edit", api.FileWrite, false, []string{filepath.Join(w.home, "cfglnk", "config.yaml")}, DenyPathDenied},
		{"write in the workspace", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, "sub", "new.go")}, ""},
		{"write a new directory in the workspace", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, "a", "b", "c.go")}, ""},
		{"write outside the workspace", "Write", api.FileWrite, false, []string{filepath.Join(w.home, "notes.txt")}, DenyPathOutsideWorkspace},
		{"write beside the workspace", "Write", api.FileWrite, false, []string{w.ws + "x/f"}, DenyPathOutsideWorkspace},
		{"write a git hook", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, ".git", "hooks", "pre-commit")}, DenyPathWriteDenied},
		{"edit .git/config in a nested repository", "Edit", api.FileWrite, false, []string{filepath.Join(w.ws, "sub", ".git", "config")}, DenyPathWriteDenied},
		{"write Claude Code's project settings", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, ".claude", "settings.json")}, DenyPathWriteDenied},
		{"write an rc file", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, ".bashrc")}, DenyPathWriteDenied},
		{"read a git hook", "Read", api.FileRead, false, []string{filepath.Join(w.ws, ".git", "hooks", "pre-commit")}, ""},
		{"write beside .git/config", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, ".git", "config.bak")}, ""},
		{"write a file named like a hooks dir", "Write", api.FileWrite, false, []string{filepath.Join(w.ws, "hooks", "x")}, ""},
		{"grep in the workspace", "Grep", api.FileRead, true, []string{w.ws}, ""},
		{"grep into ~/.ssh", "Grep", api.FileRead, true, []string{w.ssh}, DenyPathDenied},
		{"grep above ~/.ssh", "Grep", api.FileRead, true, []string{w.home}, DenyPathDenied},
		{"glob pattern into ~/.ssh", "Glob", api.FileRead, true, []string{w.ws, w.ws + "/../../.ssh"}, DenyPathDenied},
		{"read above ~/.ssh is no search", "Read", api.FileRead, false, []string{w.home}, ""},
		{"relative path, relative cwd", "Read", api.FileRead, false, []string{"x"}, "invalid_argument"},
		{"no path", "Read", api.FileRead, false, nil, "invalid_argument"},
		{"bad access", "Read", "exec", false, []string{"/x"}, "invalid_argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := api.FileAccessRequest{Tool: tc.tool, Access: tc.access, Search: tc.search, Paths: tc.paths, Cwd: w.ws}
			if tc.name == "relative path, relative cwd" {
				req.Cwd = "src"
			}
			code, reason := checkFileRequest(&req)
			if code == "" {
				code, reason = w.scope.decide(&req)
			}
			if code != tc.code {
				t.Fatalf("%s %v: %q (%s), want %q", tc.tool, tc.paths, code, reason, tc.code)
			}
			if code != "" && (!strings.HasPrefix(reason, tc.tool) && code != "invalid_argument") {
				t.Errorf("reason %q does not name the tool", reason)
			}
		})
	}
}

// The reason names what was asked, where it led, and a remedy.
func TestFileScopeReason(t *testing.T) {
	t.Parallel()
	w := newFileWorld(t)
	_, reason := w.decide("Read", api.FileRead, false, filepath.Join(w.ws, "key"))
	for _, want := range []string{filepath.Join(w.ws, "key"), "resolves to " + filepath.Join(w.ssh, "id"), w.ssh, "terminal"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not contain %q", reason, want)
		}
	}
	_, reason = w.decide("Write", api.FileWrite, false, "/etc/x")
	for _, want := range []string{"/etc/x", "workspace roots (" + w.ws + ")", "policy.workspace_roots"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not contain %q", reason, want)
		}
	}
}

func TestResolvePath(t *testing.T) {
	t.Parallel()
	w := newFileWorld(t)
	for in, want := range map[string]string{
		filepath.Join(w.ws, "main.go"):         filepath.Join(w.ws, "main.go"),
		filepath.Join(w.ws, "key"):             filepath.Join(w.ssh, "id"),
		filepath.Join(w.ws, "keys", "id"):      filepath.Join(w.ssh, "id"),
		filepath.Join(w.ws, "keys", "n", "m"):  filepath.Join(w.ssh, "n", "m"),
		filepath.Join(w.ws, "up") + "/../x":    filepath.Join(w.home, "x"),
		filepath.Join(w.ws, "new") + "/../x":   filepath.Join(w.ws, "x"),
		filepath.Join(w.ws, "main.go", "x"):    filepath.Join(w.ws, "main.go", "x"),
		w.ws + "//sub/./":                      filepath.Join(w.ws, "sub"),
		filepath.Join(w.home, "cfglnk") + "/.": w.cfg,
	} {
		got, err := resolvePath(in)
		if err != nil || got != want {
			t.Errorf("resolvePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := resolvePath(filepath.Join(w.ws, "loop")); err == nil {
		t.Error("a symlink loop resolved")
	}
}

// A process's directory in /proc is closed to file tools, however the path
// reaches it: its environ holds the credentials a running command was
// given, its mem and fd what it holds, and its root and cwd lead into its
// view of the file system.
func TestFileScopeProc(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	w := newFileWorld(t)
	for l, target := range map[string]string{
		filepath.Join(w.ws, "env"):   "/proc/self/environ",
		filepath.Join(w.ws, "procs"): "/proc",
		filepath.Join(w.ws, "fds"):   "/dev/fd",
	} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	pid := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		tool   string
		search bool
		path   string
		code   string
	}{
		{"Read", false, "/proc/" + pid + "/environ", DenyPathDenied},
		{"Read", false, "/proc/1/environ", DenyPathDenied},
		{"Read", false, "/proc/self/environ", DenyPathDenied},
		{"Read", false, "/proc/thread-self/environ", DenyPathDenied},
		{"Read", false, "/proc/" + pid + "/task/" + pid + "/environ", DenyPathDenied},
		{"Read", false, "/proc/" + pid + "/mem", DenyPathDenied},
		{"Read", false, "/proc/" + pid + "/cmdline", DenyPathDenied},
		{"Read", false, "/proc/" + pid + "/fd/0", DenyPathDenied},
		{"Read", false, "/proc/" + pid + "/root" + w.ssh + "/id", DenyPathDenied},
		{"Read", false, "/proc/" + pid + "/cwd/x", DenyPathDenied},
		{"Read", false, "/proc/" + pid, DenyPathDenied},
		{"Read", false, "/proc/./self//environ", DenyPathDenied},
		{"Read", false, "/proc/sys/../self/environ", DenyPathDenied},
		{"Read", false, "/dev/fd/3", DenyPathDenied},
		{"Read", false, "/dev/stdin", DenyPathDenied},
		{"Read", false, filepath.Join(w.ws, "env"), DenyPathDenied},
		{"Read", false, "procs/1/environ", DenyPathDenied},
		{"Read", false, "fds/0", DenyPathDenied},
		{"Read", false, "../../../../../../../../proc/self/environ", DenyPathDenied},
		{"Glob", true, "/proc", DenyPathDenied},
		{"Grep", true, "/", DenyPathDenied},
		{"Grep", true, filepath.Join(w.ws, "procs"), DenyPathDenied},
		{"Edit", false, "/proc/self/mem", DenyPathDenied},
		// What describes the machine, not a process, stays open.
		{"Read", false, "/proc/cpuinfo", ""},
		{"Read", false, "/proc/sys/kernel/ostype", ""},
		{"Grep", true, "/proc/sys/kernel", ""},
		{"Read", false, "/proc/1x/environ", ""},
	} {
		access := api.FileRead
		if tc.tool == "Edit" {
			access = api.FileWrite
		}
		code, reason := w.decide(tc.tool, access, tc.search, tc.path)
		if code != tc.code {
			t.Errorf("%s %s: %q (%s), want %q", tc.tool, tc.path, code, reason, tc.code)
		}
		if code != "" && !strings.Contains(reason, "/proc") {
			t.Errorf("%s %s: reason %q does not say why", tc.tool, tc.path, reason)
		}
	}
}

// Another agent's tool cache is closed to file tools (its commands may
// have left a token there); the asking agent's own is open.
func TestFileScopeOtherToolCache(t *testing.T) {
	t.Parallel()
	w := newFileWorld(t)
	root := filepath.Join(w.home, ".cache", "gatehouse", "sandbox")
	own, other := toolcache.For(root, "claude-code").Dir, toolcache.For(root, "cli").Dir
	for _, d := range []string{own, filepath.Join(other, "npm")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(other, filepath.Join(w.ws, "theirs")); err != nil {
		t.Fatal(err)
	}
	w.scope.cacheRoot, w.scope.ownCache = root, own
	for _, tc := range []struct {
		tool   string
		search bool
		path   string
		code   string
	}{
		{"Read", false, filepath.Join(other, "npm", ".npmrc"), DenyPathDenied},
		{"Read", false, filepath.Join(w.ws, "theirs", "npm", ".npmrc"), DenyPathDenied},
		{"Grep", true, root, DenyPathDenied},
		{"Read", false, filepath.Join(own, "cargo", "config.toml"), ""},
		{"Grep", true, own, ""},
	} {
		if code, reason := w.decide(tc.tool, api.FileRead, tc.search, tc.path); code != tc.code {
			t.Errorf("%s %s: %q (%s), want %q", tc.tool, tc.path, code, reason, tc.code)
		}
	}
}
