package bwrap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
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

// hostGit runs git on the host, as the person would after the command,
// with no configuration of their own.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@example.com",
		"GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@example.com",
	}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// plant is shell that writes an executable hook at path which, when git
// runs it, creates marker.
func plant(path, marker string) string {
	return fmt.Sprintf(`mkdir -p "$(dirname %[1]s)" && printf '#!/bin/sh\ntouch %[2]s\n' > %[1]s && chmod +x %[1]s`, path, marker)
}

// A repository the command makes anywhere below the workspace, or points
// a .git file, core.hooksPath or include.path at, keeps no hook that the
// person's next `git commit` there runs on the host.
func TestNestedRepoHookNeverRunsOnHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		command func(marker string) string
		repo    string // where the person commits next
	}{
		{"deep", func(m string) string {
			return `mkdir -p a/b/c/d/e && git init -q a/b/c/d/e && ` + plant("a/b/c/d/e/.git/hooks/pre-commit", m)
		}, "a/b/c/d/e"},
		{"in node_modules", func(m string) string {
			return `mkdir -p node_modules/pkg && git init -q node_modules/pkg && ` + plant("node_modules/pkg/.git/hooks/pre-commit", m)
		}, "node_modules/pkg"},
		{"gitdir padded with newlines", func(m string) string {
			return `git init -q --separate-git-dir "$PWD/.git/nest" nested && ` + plant(".git/nest/hooks/pre-commit", m) +
				` && { printf 'gitdir: %s' "$PWD/.git/nest"; head -c 8000 /dev/zero | tr '\0' '\n'; } > nested/.git`
		}, "nested"},
		{"core.hooksPath", func(m string) string {
			return `mkdir -p a/b/c/d && git init -q a/b/c/d && ` + plant("a/b/c/d/.h/pre-commit", m) +
				` && git -C a/b/c/d config core.hooksPath .h`
		}, "a/b/c/d"},
		{"include.path", func(m string) string {
			return `mkdir -p a/b/c/d && git init -q a/b/c/d && ` + plant("hk/pre-commit", m) +
				` && printf '[core]\n\thooksPath = %s\n' "$PWD/hk" > inc.cfg && git -C a/b/c/d config include.path "$PWD/inc.cfg"`
		}, "a/b/c/d"},
		{"bare-looking directory", func(m string) string {
			return `git init -q --bare a/b/c/d/store.git && ` + plant("a/b/c/d/store.git/hooks/pre-commit", m) +
				` && mkdir -p a/b/c/d/wt && printf 'gitdir: ../store.git\n' > a/b/c/d/wt/.git && git -C a/b/c/d/wt config core.bare false`
		}, "a/b/c/d/wt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := gitRepo(t)
			marker := filepath.Join(sandboxtest.Dir(t), "hook-ran")
			res, _ := runIn(t, ws, tc.command(marker))
			out := hostGit(t, filepath.Join(ws, tc.repo), "commit", "-q", "--allow-empty", "-m", "next")
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the planted hook ran on the host at git commit in %s (Blocked %q; git: %s)", tc.repo, res.Blocked, out)
			}
			if len(res.Blocked) == 0 {
				t.Errorf("Blocked is empty")
			}
		})
	}
}

// treeSums returns every entry below dir with its type and content (a
// link's text).
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			sums[rel] = "link:" + l
		case d.IsDir():
			sums[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sums[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// A hooks directory the command replaced with a link is never listed
// through it: the person's files where it leads stay byte-identical and
// keep their names; the link itself is moved aside.
func TestSweepNeverFollowsHooksLink(t *testing.T) {
	t.Parallel()
	victim := sandboxtest.Dir(t)
	for _, tc := range []struct{ name, target string }{
		{"into the workspace", "../.."},
		{"out of the workspace", victim},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := gitRepo(t)
			for _, d := range []string{ws, victim} {
				gitTree(t, d, map[string]string{"README.md": "the person's\n", "src/main.go": "package main\n"})
			}
			beforeWS, beforeVictim := treeSums(t, ws), treeSums(t, victim)
			res, _ := runIn(t, ws, `mkdir nested && git init -q nested && rm -rf nested/.git/hooks && ln -s `+tc.target+` nested/.git/hooks`)
			for _, c := range []struct {
				dir    string
				before map[string]string
			}{{ws, beforeWS}, {victim, beforeVictim}} {
				after := treeSums(t, c.dir)
				for p, sum := range c.before {
					if after[p] != sum {
						t.Errorf("%s changed: %q, was %q", filepath.Join(c.dir, p), after[p], sum)
					}
				}
				for p := range after {
					if _, ok := c.before[p]; !ok && !strings.HasPrefix(p, "nested") {
						t.Errorf("%s is new", filepath.Join(c.dir, p))
					}
				}
			}
			moved := filepath.Join(ws, "nested/.git/hooks.gatehouse-blocked-t1")
			if l, err := os.Readlink(moved); err != nil || l != tc.target {
				t.Errorf("the link was not moved aside: %q, %v", l, err)
			}
			if !slices.Equal(res.Blocked, []string{moved}) {
				t.Errorf("Blocked = %q, want %q", res.Blocked, []string{moved})
			}
		})
	}
}

// runAny runs command as runIn does and returns the result whatever its
// status.
func runAny(t *testing.T, ws, command string) *sandbox.Result {
	t.Helper()
	bw := sandboxtest.RequireBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := &sandbox.Spec{
		Shell: "/bin/bash", Command: command, Dir: ws,
		Env:            []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + ws, "LC_ALL=C"},
		WorkspaceRoots: []string{ws}, WriteDeny: sandbox.DefaultWriteDeny,
		Seccomp: sandbox.SeccompPreferred, Timeout: 30 * time.Second, OutputMax: 1 << 20,
		InitPath: exe, BwrapPath: bw,
	}
	opt := RunOptions{CgroupFD: -1, BlockedSuffix: "t1"}
	opt.DisableUserns = probe.BwrapAtLeast(probe.Gather(bw), 0, 8, 0)
	var stdout, stderr bytes.Buffer
	return Run(context.Background(), spec, sandbox.Streams{Stdout: &stdout, Stderr: &stderr}, opt)
}

// deepPath is a chain of directories deeper than the sweep walks.
func deepPath() string {
	return strings.Repeat("d/", sweepMaxDepth+2)
}

// A workspace deeper than the sweep's bound is refused before anything
// runs; one the command makes deeper is swept as far as the bound goes
// and the event says the rest was not checked.
func TestSweepBoundFailsClosed(t *testing.T) {
	t.Parallel()
	t.Run("before", func(t *testing.T) {
		t.Parallel()
		ws := gitRepo(t)
		if err := os.MkdirAll(filepath.Join(ws, deepPath()), 0o755); err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(ws, "ran")
		res := runAny(t, ws, "touch "+marker)
		if res.Status != sandbox.StatusFailedToStart || res.StatusReason != "sweep_bound" || !strings.Contains(res.Error, "deeper than") {
			t.Errorf("status %s (%s): %s; want failed_to_start (sweep_bound)", res.Status, res.StatusReason, res.Error)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("the command ran")
		}
	})
	t.Run("after", func(t *testing.T) {
		t.Parallel()
		ws := gitRepo(t)
		res := runAny(t, ws, "mkdir -p "+deepPath())
		if res.Status != sandbox.StatusCompleted || res.StatusReason != "sweep_incomplete" || !strings.Contains(res.Error, "deeper than") {
			t.Errorf("status %s (%s): %s; want completed (sweep_incomplete)", res.Status, res.StatusReason, res.Error)
		}
	})
}
