package bwrap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

func TestExecKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		conf string
		want []string
	}{
		{"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n", nil},
		{"[core]\n\thooksPath = .githooks\n", []string{"core.hookspath"}},
		{"[CORE]\n  FsMonitor = ./watch.sh\n", []string{"core.fsmonitor"}},
		{"[core]\n\tfsmonitor = true\n", nil},
		{"[alias]\n\tst = status\n\tx = \"!sh -c 'id'\"\n", []string{"alias.x"}},
		{"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\trequired = true\n", []string{"filter.lfs.clean"}},
		{"[diff \"bin\"]\n\ttextconv = ./conv\n[diff]\n\texternal = ./ext\n", []string{"diff.bin.textconv", "diff.external"}},
		{"[include]\n\tpath = ../evil.inc\n", []string{"include.path"}},
		{"[includeIf \"gitdir:~/\"]\n\tpath = x\n", []string{"includeif.gitdir:~/.path"}},
		{"[credential]\n\thelper = !cat /x\n", []string{"credential.helper"}},
		{"[core] sshCommand = ssh -oProxyCommand=x\n", []string{"core.sshcommand"}},
		{"[remote \"o\"]\n\turl = ext::sh -c id\n", []string{"remote.o.url"}},
		{"[pager]\n\tlog = ./p\n\tdiff = false\n", []string{"pager.log"}},
		{"[merge \"m\"]\n\tdriver = ./drv %O %A %B\n", []string{"merge.m.driver"}},
		{"# [core]\n; hooksPath = x\n", nil},
		{"[hook \"lint\"]\n\tcommand = ./lint.sh\n\tevent = pre-commit\n", []string{"hook.lint.command"}},
	} {
		got := execKeys([]byte(tc.conf))
		if !slices.Equal(got, tc.want) {
			t.Errorf("execKeys(%q) = %q, want %q", tc.conf, got, tc.want)
		}
	}
}

// gitTree writes files (path -> content; a trailing / makes a directory)
// under dir.
func gitTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSweepGit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	gitTree(t, ws, map[string]string{
		"old/.git/config":                 "[core]\n\tbare = false\n",
		"old/.git/hooks/pre-commit":       "#!/bin/sh\necho the user's own hook\n",
		"old/.git/hooks/pre-push.sample":  "#!/bin/sh\n",
		"old/.vscode/settings.json":       "{}",
		"old/.git/modules/sub/config":     "[core]\n",
		"old/.git/modules/sub/hooks/keep": "#!/bin/sh\n",
	})
	roots := []string{ws}
	plan, err := Discover(roots, nil, sandbox.DefaultWriteDeny)
	if err != nil {
		t.Fatal(err)
	}

	// What a command could do in the workspace.
	gitTree(t, ws, map[string]string{
		// A repository created by the command, with a hook, code in its
		// configuration and an editor task file.
		"new/.git/config":                          "[core]\n\thooksPath = hooks\n",
		"new/.git/hooks/post-merge":                "#!/bin/sh\nid\n",
		"new/.git/hooks/x.sample":                  "#!/bin/sh\n",
		"new/.vscode/tasks.json":                   `{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}`,
		"new/.gitattributes":                       "* filter=lfs\n",
		"new/ordinary.go":                          "package main\n",
		"clean/.git/config":                        "[core]\n\tbare = false\n",
		"clean/.git/hooks/a.sample":                "#!/bin/sh\n",
		"clean/README":                             "hi",
		"old/.git/modules/sub/hooks/post-checkout": "#!/bin/sh\nid\n",
		// A .git file pointing at a git directory kept elsewhere in the
		// workspace.
		"linked/.git":                       "gitdir: ../stash/linked.git\n",
		"stash/linked.git/hooks/pre-commit": "#!/bin/sh\nid\n",
		"stash/linked.git/config":           "[alias]\n\tco = !id\n",
	})
	moved, err := plan.Sweep("t1")
	if err != nil {
		t.Errorf("Sweep: %v", err)
	}
	rel := make([]string, len(moved))
	for i, m := range moved {
		r, _ := filepath.Rel(ws, m)
		rel[i] = r
	}
	slices.Sort(rel)
	want := []string{
		"stash/linked.git/config.gatehouse-blocked-t1",
		"new/.git/config.gatehouse-blocked-t1",
		"new/.git/hooks/post-merge.gatehouse-blocked-t1",
		"new/.vscode.gatehouse-blocked-t1",
		"old/.git/modules/sub/hooks/post-checkout.gatehouse-blocked-t1",
		"stash/linked.git/hooks/pre-commit.gatehouse-blocked-t1",
	}
	slices.Sort(want)
	if !slices.Equal(rel, want) {
		t.Errorf("moved:\n%s\nwant:\n%s", strings.Join(rel, "\n"), strings.Join(want, "\n"))
	}
	for _, keep := range []string{
		"old/.git/hooks/pre-commit", "old/.vscode/settings.json", "old/.git/modules/sub/hooks/keep",
		"new/.gitattributes", "new/ordinary.go", "new/.git/hooks/x.sample", "clean/.git/config",
	} {
		if _, err := os.Stat(filepath.Join(ws, keep)); err != nil {
			t.Errorf("%s was moved: %v", keep, err)
		}
	}
}

// A hidden path inside a hidden directory is left to the directory's mask.
func TestDiscoverNestedHidden(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	gitTree(t, home, map[string]string{
		"keys/id": "k", "keys/sub/": "", ".ssh/x": "x", "other": "o",
	})
	j := func(p string) string { return filepath.Join(home, p) }
	plan, err := Discover(nil, []string{j("keys/id"), j("keys/sub"), j("keys"), j(".ssh"), j("other"), j(".ssh/x")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{j("keys"), j(".ssh")}; !slices.Equal(plan.Mounts.HideDirs, want) {
		t.Errorf("HideDirs = %q, want %q", plan.Mounts.HideDirs, want)
	}
	if want := []string{j("other")}; !slices.Equal(plan.Mounts.HideFiles, want) {
		t.Errorf("HideFiles = %q, want %q", plan.Mounts.HideFiles, want)
	}
}

// BenchmarkDiscoverSweep is the cost per execution of the mounts' look
// at a workspace of 20 repositories (each with git's sample hooks) and of
// the sweep afterwards.
func BenchmarkDiscoverSweep(b *testing.B) {
	ws := b.TempDir()
	files := map[string]string{}
	for i := range 20 {
		repo := filepath.Join("p", string(rune('a'+i)))
		files[repo+"/.git/config"] = "[core]\n\tbare = false\n"
		files[repo+"/src/main.go"] = "package main\n"
		for _, h := range []string{"pre-commit", "pre-push", "commit-msg", "post-update", "pre-rebase", "update"} {
			files[repo+"/.git/hooks/"+h+".sample"] = "#!/bin/sh\n"
		}
	}
	for p, data := range files {
		full := filepath.Join(ws, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(data), 0o644)
	}
	b.Run("discover", func(b *testing.B) {
		for b.Loop() {
			Discover([]string{ws}, nil, sandbox.DefaultWriteDeny)
		}
	})
	b.Run("sweep", func(b *testing.B) {
		plan, _ := Discover([]string{ws}, nil, sandbox.DefaultWriteDeny)
		for b.Loop() {
			plan.Sweep("bench")
		}
	})
}

// What git follows from a .git entry is followed by the sweep as git
// does, without ever following a link: worktrees' commondir, .git files
// and links, included configuration. What it cannot reach so is moved
// aside when new, and left when it was there before.
func TestSweepGitPointers(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	outside := t.TempDir()
	gitTree(t, ws, map[string]string{
		"main/.git/config":                    "[include]\n\tpath = ../shared.cfg\n",
		"main/shared.cfg":                     "[user]\n\tname = p\n",
		"main/.git/worktrees/wt/commondir":    "../..\n",
		"main/.git/worktrees/wt/HEAD":         "ref: refs/heads/wt\n",
		"wt/.git":                             "gitdir: " + ws + "/main/.git/worktrees/wt\n",
		"old-outside/.git":                    "gitdir: " + outside + "/x.git\n",
		"main/.git/hooks/pre-commit":          "#!/bin/sh\necho the person's\n",
		"linkdir/keep/":                       "",
		"evil/hooks/":                         "",
		"main/.git/worktrees/wt/gitdir":       ws + "/wt/.git\n",
		"main/.git/worktrees/wt/config.extra": "",
		// The person's own hooks directory, named by their configuration.
		"hp/.git/config":          "[core]\n\thooksPath = .githooks\n",
		"hp/.githooks/pre-commit": "#!/bin/sh\necho the person's\n",
		// A repository whose hooks directory is the person's own link.
		"hl/.git/config":    "",
		"hl/shared/post-co": "#!/bin/sh\n",
	})
	os.Symlink("../shared", ws+"/hl/.git/hooks")
	os.Symlink(ws+"/linkdir", ws+"/alias")
	plan, err := Discover([]string{ws}, nil, sandbox.DefaultWriteDeny)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()

	gitTree(t, ws, map[string]string{
		// The worktree's common directory re-pointed at one with a hook.
		"main/.git/worktrees/wt/commondir": "../../../../evil\n",
		"evil/hooks/pre-commit":            "#!/bin/sh\nid\n",
		// An included file the person's own configuration names, changed.
		"main/shared.cfg": "[core]\n\thooksPath = /tmp/x\n",
		// A .git file through a link, one outside the roots, one whose
		// path a ".." through a link changes.
		"via-link/.git":   "gitdir: ../alias/g\n",
		"to-outside/.git": "gitdir: " + outside + "/y.git\n",
		"dotdot/.git":     "gitdir: ../alias/../evil\n",
		// A hook changed in the directory core.hooksPath names.
		"hp/.githooks/pre-commit": "#!/bin/sh\nid\n",
		// A hook planted where that link leads.
		"hl/shared/pre-commit": "#!/bin/sh\nid\n",
	})
	// A .git link is resolved as a path, never followed: one that leads
	// to a git directory in the workspace is swept like a .git file.
	os.MkdirAll(ws+"/linked-dot", 0o755)
	os.Symlink("../main/.git", ws+"/linked-dot/.git")
	moved, err := plan.Sweep("p")
	if err != nil {
		t.Errorf("Sweep: %v", err)
	}
	rel := make([]string, len(moved))
	for i, m := range moved {
		rel[i], _ = filepath.Rel(ws, m)
	}
	slices.Sort(rel)
	want := []string{
		"dotdot/.git.gatehouse-blocked-p",
		"evil/hooks/pre-commit.gatehouse-blocked-p",
		"hl/shared/pre-commit.gatehouse-blocked-p",
		"hp/.githooks/pre-commit.gatehouse-blocked-p",
		"main/shared.cfg.gatehouse-blocked-p",
		"to-outside/.git.gatehouse-blocked-p",
		"via-link/.git.gatehouse-blocked-p",
	}
	if !slices.Equal(rel, want) {
		t.Errorf("moved:\n%s\nwant:\n%s", strings.Join(rel, "\n"), strings.Join(want, "\n"))
	}
	for _, keep := range []string{"main/.git/hooks/pre-commit", "old-outside/.git", "wt/.git", "linkdir/keep", "linked-dot/.git", "hl/.git/hooks", "hl/shared/post-co"} {
		if _, err := os.Lstat(filepath.Join(ws, keep)); err != nil {
			t.Errorf("%s was moved: %v", keep, err)
		}
	}
}

func TestParseGitFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"gitdir: ../x\n", "../x", true},
		{"gitdir: /a/b" + strings.Repeat("\n", 5000), "/a/b", true},
		{"gitdir: a\r\n\r\n", "a", true},
		{"gitdir: a\x00b\n", "a", true},
		{"gitdir: a b \n", "a b ", true}, // git keeps trailing spaces
		{"gitdir:a\n", "", false},
		{"gitdir: \n", "", false},
		{"\ngitdir: a\n", "", false},
	} {
		got, ok := parseGitFile([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseGitFile(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
