package bwrap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// gitRepo returns a new workspace root, visible in the sandbox, that is a
// git repository without any editor or agent directory.
func gitRepo(t *testing.T) string {
	t.Helper()
	ws := sandboxtest.Dir(t)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return ws
}

// runIn runs command under bubblewrap with ws as its workspace root and
// cwd, with the default write-deny names, and returns the result and
// stdout.
func runIn(t *testing.T, ws, command string) (*sandbox.Result, string) {
	t.Helper()
	bw := sandboxtest.RequireBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := &sandbox.Spec{
		Shell:          "/bin/bash",
		Command:        command,
		Dir:            ws,
		Env:            []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + ws, "LC_ALL=C"},
		WorkspaceRoots: []string{ws},
		WriteDeny:      sandbox.DefaultWriteDeny,
		Seccomp:        sandbox.SeccompPreferred,
		Timeout:        30 * time.Second,
		OutputMax:      1 << 20,
		InitPath:       exe,
		BwrapPath:      bw,
	}
	var stdout, stderr bytes.Buffer
	opt := RunOptions{CgroupFD: -1, BlockedSuffix: "t1"}
	opt.DisableUserns = probe.BwrapAtLeast(probe.Gather(bw), 0, 8, 0)
	res := Run(context.Background(), spec, sandbox.Streams{Stdout: &stdout, Stderr: &stderr}, opt)
	if res.Status != sandbox.StatusCompleted {
		t.Fatalf("%q: status %s (%s): %s; stderr %q", command, res.Status, res.StatusReason, res.Error, stderr.String())
	}
	return res, stdout.String()
}

var editorDirs = []string{".vscode", ".idea", ".claude"}

// Absent write-deny directories are not mount points: nothing stands in
// for them in the sandbox, nor on the host while the command runs (the
// workspace is a bind of the host's, so the command's listing is the
// host's).
func TestAbsentWriteDenyDirsStayAbsent(t *testing.T) {
	t.Parallel()
	ws := gitRepo(t)
	host := make(chan []string, 1)
	go func() {
		// Look from outside while the command sleeps.
		time.Sleep(300 * time.Millisecond)
		des, _ := os.ReadDir(ws)
		var names []string
		for _, de := range des {
			names = append(names, de.Name())
		}
		host <- names
	}()
	res, out := runIn(t, ws, `ls -a; echo --; find . -maxdepth 1; sleep 0.8`)
	for _, line := range strings.Split(out, "\n") {
		if slices.Contains(editorDirs, strings.TrimPrefix(line, "./")) {
			t.Errorf("%s is listed in the sandbox:\n%s", line, out)
		}
	}
	if !strings.Contains(out, ".git\n") {
		t.Errorf("the listing is not of the repository:\n%s", out)
	}
	for _, name := range <-host {
		if slices.Contains(editorDirs, name) {
			t.Errorf("%s exists on the host during the command", name)
		}
	}
	for _, d := range editorDirs {
		if _, err := os.Lstat(filepath.Join(ws, d)); err == nil {
			t.Errorf("%s exists on the host after the command", d)
		}
	}
	if len(res.Blocked) != 0 {
		t.Errorf("Blocked = %q, want nothing", res.Blocked)
	}
}

// blockedOne returns the one entry moved aside from ws/name, failing t
// unless there is exactly one, Result.Blocked names it, and name itself
// is gone.
func blockedOne(t *testing.T, res *sandbox.Result, ws, name string) string {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
		t.Errorf("%s is in place on the host after the command", name)
	}
	got, _ := filepath.Glob(filepath.Join(ws, name+".gatehouse-blocked-*"))
	if len(got) != 1 {
		t.Fatalf("moved aside from %s: %q, want one", name, got)
	}
	if !slices.Contains(res.Blocked, got[0]) {
		t.Errorf("Blocked = %q does not name %s", res.Blocked, got[0])
	}
	return got[0]
}

func TestWriteDenyDirCreatedIsMovedAside(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, command, dir string
		// file is what the moved entry must hold; "" when the command's
		// write into the new directory may lose the race with the guard.
		file string
	}{
		{"mkdir", `mkdir .vscode && echo '{}' > .vscode/tasks.json; sleep 0.3; ls -a`, ".vscode", ""},
		{"mv", `mkdir prepared && echo '{}' > prepared/settings.json && mv prepared .claude; sleep 0.3; ls -a`, ".claude", "settings.json"},
		{"symlink", `ln -s /tmp .idea; sleep 0.3; ls -a`, ".idea", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := gitRepo(t)
			res, out := runIn(t, ws, tc.command)
			if slices.Contains(strings.Split(out, "\n"), tc.dir) {
				t.Errorf("%s is still listed in the sandbox 0.3 s after it was made:\n%s", tc.dir, out)
			}
			moved := blockedOne(t, res, ws, tc.dir)
			if tc.file != "" {
				if _, err := os.Stat(filepath.Join(moved, tc.file)); err != nil {
					t.Errorf("the moved directory does not hold %s: %v", tc.file, err)
				}
			}
			// Whatever the mkdir case wrote went with the directory.
			if tc.name == "mkdir" {
				if _, err := os.Lstat(filepath.Join(ws, "tasks.json")); err == nil {
					t.Errorf("tasks.json landed in the workspace")
				}
			}
			if tc.name == "symlink" {
				if fi, err := os.Lstat(moved); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the moved .idea is not the symlink: %v", err)
				}
			}
		})
	}
}

// The guard moves a new write-deny directory aside while the command
// still runs, and a second one made at the same path gets a name of its
// own.
func TestGuardMovesAsideDuringRun(t *testing.T) {
	t.Parallel()
	ws := gitRepo(t)
	res, out := runIn(t, ws, `mkdir .claude; sleep 0.5; test -d .claude && echo still-there || echo gone
mkdir .claude; sleep 0.5; test -d .claude && echo still-there || echo gone`)
	if out != "gone\ngone\n" {
		t.Errorf("stdout %q, want gone twice", out)
	}
	got, _ := filepath.Glob(filepath.Join(ws, ".claude.gatehouse-blocked-*"))
	slices.Sort(got)
	want := []string{filepath.Join(ws, ".claude.gatehouse-blocked-t1"), filepath.Join(ws, ".claude.gatehouse-blocked-t1-2")}
	if !slices.Equal(got, want) {
		t.Errorf("moved aside: %q, want %q", got, want)
	}
	b := slices.Clone(res.Blocked)
	slices.Sort(b)
	if !slices.Equal(b, want) {
		t.Errorf("Blocked = %q, want %q", res.Blocked, want)
	}
}

// A watched file the command creates is moved aside by the guard too, and
// an entry in the way of the first name is never replaced.
func TestGuardNeverReplaces(t *testing.T) {
	t.Parallel()
	ws := gitRepo(t)
	res, out := runIn(t, ws, `echo mine > .mcp.json.gatehouse-blocked-t1; echo '{}' > .mcp.json; sleep 0.3; test -e .mcp.json && echo still-there || echo gone`)
	if out != "gone\n" {
		t.Errorf("stdout %q, want gone", out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".mcp.json.gatehouse-blocked-t1")); err != nil || string(b) != "mine\n" {
		t.Errorf("the command's own file was replaced: %q, %v", b, err)
	}
	if !slices.Equal(res.Blocked, []string{filepath.Join(ws, ".mcp.json.gatehouse-blocked-t1-2")}) {
		t.Errorf("Blocked = %q", res.Blocked)
	}
}

// watchIn returns the directories a guard over the write-deny names in ws
// watches, keeping only names.
func watchIn(t *testing.T, ws string, names ...string) []watchDir {
	t.Helper()
	p, err := Discover([]string{ws}, nil, names)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p.watchDirs()
}

// The guard's goroutine and descriptors end with it.
func TestGuardStops(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	g, err := startGuard(watchIn(t, ws, ".vscode", ".mcp.json"), "s")
	if err != nil || g == nil {
		t.Fatalf("startGuard: %v", err)
	}
	os.Mkdir(filepath.Join(ws, ".vscode"), 0o755)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Lstat(filepath.Join(ws, ".vscode")); err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	moved := g.stop("")
	if !slices.Equal(moved, []string{filepath.Join(ws, ".vscode.gatehouse-blocked-s")}) {
		t.Errorf("moved %q", moved)
	}
	// Nothing watches any more.
	os.Mkdir(filepath.Join(ws, ".vscode"), 0o755)
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(ws, ".vscode")); err != nil {
		t.Errorf("the stopped guard moved .vscode: %v", err)
	}
	var none *guard
	if none.stop("") != nil {
		t.Errorf("a nil guard moved something")
	}
}

// A guard stopped with the init's path hands its inotify instance to a
// "linger" process: this process holds it no more when stop returns, so
// its exit does not wait for the kernel to retire the watches. Without an
// init to start, the instance stays with the guard (closed as before).
func TestGuardHandsOffItsInotifyInstance(t *testing.T) {
	ws := t.TempDir()
	g, err := startGuard(watchIn(t, ws, ".vscode"), "h")
	if err != nil || g == nil {
		t.Fatalf("startGuard: %v", err)
	}
	fd := int(g.f.Fd())
	isInotify := func() bool {
		link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		return err == nil && link == "anon_inode:inotify"
	}
	if !isInotify() {
		t.Fatalf("fd %d is not the guard's inotify instance", fd)
	}
	if g.handOff(filepath.Join(ws, "no-such-init")) || !isInotify() {
		t.Fatalf("a hand-off to a missing init claimed success or closed the instance")
	}
	g.stop(os.Args[0]) // the test binary serves as the init
	if isInotify() {
		t.Errorf("after stop with a hand-off, this process still holds the inotify instance")
	}
}

// A repository's .git is bound over itself; the guard watches it through
// that bind like any other directory: a .git/hooks the repository lacked
// is moved aside as the command makes it.
func TestGuardInsideGitDir(t *testing.T) {
	t.Parallel()
	ws := gitRepo(t)
	if err := os.RemoveAll(filepath.Join(ws, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	res, out := runIn(t, ws, `mkdir .git/hooks; sleep 0.3; test -d .git/hooks && echo still-there || echo gone`)
	if out != "gone\n" {
		t.Errorf("stdout %q, want gone", out)
	}
	blockedOne(t, res, filepath.Join(ws, ".git"), "hooks")
}

// A watched directory replaced by a link before the guard starts is not
// watched through the link: what appears where the link leads is not the
// workspace's and is never moved.
func TestGuardNeverFollowsReplacedDir(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, "proj/.git"), 0o755)
	p, err := Discover([]string{ws}, nil, []string{".vscode", ".mcp.json"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	os.Rename(filepath.Join(ws, "proj"), filepath.Join(ws, "proj2"))
	os.Symlink(outside, filepath.Join(ws, "proj"))
	g, err := startGuard(p.watchDirs(), "r")
	if err != nil || g == nil {
		t.Fatalf("startGuard: %v", err)
	}
	// Made in this order: the guard reads its events in order, so once
	// the watched .mcp.json is gone, an event for .vscode would have been
	// handled already.
	os.Mkdir(filepath.Join(outside, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(ws, ".mcp.json"), nil, 0o644)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Lstat(filepath.Join(ws, ".mcp.json")); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the guard did not move the watched .mcp.json")
		}
	}
	moved := g.stop("")
	if _, err := os.Stat(filepath.Join(outside, ".vscode")); err != nil {
		t.Errorf("the directory the link leads to was moved: %v", err)
	}
	if !slices.Equal(moved, []string{filepath.Join(ws, ".mcp.json.gatehouse-blocked-r")}) {
		t.Errorf("moved %q", moved)
	}
}
