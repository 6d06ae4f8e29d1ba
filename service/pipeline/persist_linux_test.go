package pipeline

// Persistence planted in the workspace for the host to run later, in
// repositories that did not exist when the sandbox started: each case runs
// in the real sandbox, and afterwards nothing git or an editor would run on
// the host is left in place.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPersistenceSwept(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		command string
		planted []string // paths (workspace-relative) that must not remain
		kept    []string // paths that must remain
	}{
		{"hook in a new repository", `git init -q fresh && printf '#!/bin/sh\nid\n' > fresh/.git/hooks/pre-commit && chmod +x fresh/.git/hooks/pre-commit`,
			[]string{"fresh/.git/hooks/pre-commit"}, []string{"fresh/.git/HEAD"}},
		{"hook in a repository made in /tmp and copied in", `git init -q /tmp/r && printf '#!/bin/sh\nid\n' > /tmp/r/.git/hooks/post-checkout && cp -r /tmp/r moved`,
			[]string{"moved/.git/hooks/post-checkout"}, []string{"moved/.git/HEAD"}},
		{"repository moved from deep below the search depth", `mkdir -p a/b/c/d && git init -q a/b/c/d/deep && printf 'id\n' > a/b/c/d/deep/.git/hooks/pre-push && mv a/b/c/d/deep up`,
			[]string{"up/.git/hooks/pre-push"}, nil},
		{"hooksPath in a new repository's config", `git init -q cfg && git -C cfg config core.hooksPath .githooks && mkdir cfg/.githooks && echo id > cfg/.githooks/pre-commit`,
			[]string{"cfg/.git/config"}, []string{"cfg/.githooks/pre-commit"}},
		{"shell alias in a new repository's config", `git init -q al && git -C al config alias.st '!id'`,
			[]string{"al/.git/config"}, nil},
		{"filter driver in a new repository's config", `git init -q fl && git -C fl config filter.x.smudge 'sh -c id' && echo '* filter=x' > fl/.gitattributes`,
			[]string{"fl/.git/config"}, []string{"fl/.gitattributes"}},
		{"fsmonitor hook", `git init -q fs && git -C fs config core.fsmonitor ./watch.sh`,
			[]string{"fs/.git/config"}, nil},
		{"a .git file pointing at a planted git directory", `mkdir store && git init -q --separate-git-dir=store/sep.git sep && echo id > store/sep.git/hooks/post-commit`,
			[]string{"store/sep.git/hooks/post-commit"}, []string{"sep/.git"}},
		{"editor task file in a new repository", `git init -q ed && mkdir ed/.vscode && echo '{}' > ed/.vscode/tasks.json && cp ed/.vscode/tasks.json ed/.mcp.json`,
			[]string{"ed/.vscode", "ed/.mcp.json"}, nil},
		{"tool directories the workspace did not have", `mkdir .cursor .husky && echo '{"mcpServers":{}}' > .cursor/mcp.json && echo id > .husky/pre-commit`,
			[]string{".cursor", ".husky"}, nil},
		{"git files the workspace did not have", `echo '[submodule "x"]' > .gitmodules; echo '* diff=x' > .gitattributes; echo '[alias] x = !id' > .gitconfig; echo 'yarnPath: x.js' > .yarnrc.yml`,
			[]string{".gitmodules", ".gitattributes", ".gitconfig", ".yarnrc.yml"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := bwrapFixture(t, nil)
			o := f.run(tc.command)
			if exitOf(o) != 0 {
				t.Logf("exit %d; stderr %q", exitOf(o), o.Result.Stderr)
			}
			for _, p := range tc.planted {
				if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
					t.Errorf("%s is in place on the host after the execution", p)
				}
				if !slices.ContainsFunc(o.Event.WriteBlocked, func(b string) bool {
					return strings.HasPrefix(b, filepath.Join(f.ws, p)+".gatehouse-blocked-")
				}) {
					t.Errorf("write_deny_blocked %q does not list %s", o.Event.WriteBlocked, p)
				}
			}
			for _, p := range tc.kept {
				if _, err := os.Lstat(filepath.Join(f.ws, p)); err != nil {
					t.Errorf("%s was moved: %v (stderr %q)", p, err, o.Result.Stderr)
				}
			}
		})
	}
}

// Ordinary work with repositories moves nothing aside.
func TestPersistenceOrdinaryGit(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	o := f.run(`set -e
git init -q src && cd src
echo hi > README && git add README
git -c user.email=a@example.com -c user.name=A commit -qm first
git config user.name 'A Person'
git clone -q . ../copy
git checkout -qb topic`)
	if exitOf(o) != 0 {
		t.Fatalf("exit %d; stderr %q", exitOf(o), o.Result.Stderr)
	}
	if len(o.Event.WriteBlocked) != 0 {
		t.Errorf("write_deny_blocked = %q, want nothing for ordinary git use", o.Event.WriteBlocked)
	}
	for _, p := range []string{"src/.git/config", "copy/.git/config", "copy/README"} {
		if _, err := os.Stat(filepath.Join(f.ws, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A watched tool directory that does not exist is not there while the
// command runs: no mount point stands in for it.
func TestWatchedDirectoriesAbsent(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	o := f.run(`ls -a | grep -c -e '^.cursor$' -e '^.husky$' -e '^.zed$' -e '^.devcontainer$' -e '^.gemini$'; exit 0`)
	if o.Result.Stdout != "0\n" {
		t.Errorf("ls -a counts %q of the watched directories, want 0", o.Result.Stdout)
	}
}
