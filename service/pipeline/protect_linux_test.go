package pipeline

// What the mount plan keeps read-only, pins or hides, each shown by what
// the person would do on the host afterwards: a git status that would run
// a planted fsmonitor, an editor reading its configuration, a later
// command reading a secret.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// hostGit runs git on the host as the person would, in dir; it fails the
// test when git fails.
func (f *fixture) hostGit(dir string, args ...string) string {
	f.t.Helper()
	out, err := f.hostGitErr(dir, args...)
	if err != nil {
		f.t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

func (f *fixture) hostGitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.email=p@example.com", "-c", "user.name=P", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + f.home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/local/bin:/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitFixture is a workspace that is a repository with a submodule, a
// linked worktree and a nested repository, all made on the host.
func gitFixture(t *testing.T) *fixture {
	f := bwrapFixture(t, nil)
	lib := filepath.Join(f.dir, "lib")
	for _, d := range []string{f.ws, lib, filepath.Join(f.ws, "pkgs", "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		f.hostGit(d, "init", "-q")
		f.hostGit(d, "commit", "-q", "--allow-empty", "-m", "first")
	}
	f.hostGit(f.ws, "submodule", "add", "-q", lib, "sub")
	f.hostGit(f.ws, "commit", "-qm", "sub")
	f.hostGit(f.ws, "worktree", "add", "-q", "wt")
	return f
}

// The files git reads to locate and configure a repository are read-only
// in every git directory: the top one, a submodule's, a linked worktree's
// and a nested repository's. The person's git status afterwards runs
// nothing, and the repositories still work.
func TestGitDirectoriesProtected(t *testing.T) {
	t.Parallel()
	f := gitFixture(t)
	marker := filepath.Join(f.dir, "fsmonitor-ran")
	gitDirs := []string{".git", ".git/modules/sub", ".git/worktrees/wt", "pkgs/inner/.git"}
	script := `mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/ && printf '[core]\n\tfsmonitor = "touch ` + marker + `"\n' > evil/config
for g in ` + strings.Join(gitDirs, " ") + `; do
  printf '[core]\n\tfsmonitor = "touch ` + marker + `"\n' >> $g/config && echo "wrote $g/config"
  echo "$PWD/evil" > $g/commondir && echo "wrote $g/commondir"
  printf '#!/bin/sh\ntouch ` + marker + `\n' > $g/hooks/post-checkout && echo "wrote $g/hooks"
  echo "$PWD/evil/objects" > $g/objects/info/alternates && echo "wrote $g/alternates"
  echo '* filter=x' > $g/info/attributes && echo "wrote $g/info/attributes"
done
echo "$PWD" > .git/worktrees/wt/gitdir && echo "wrote gitdir"
git -C wt -c user.email=a@example.com -c user.name=A commit -q --allow-empty -m in-worktree && echo committed-in-worktree
git -C sub -c user.email=a@example.com -c user.name=A commit -q --allow-empty -m in-submodule && echo committed-in-submodule
exit 0`
	o := f.run(script)
	for _, g := range gitDirs {
		// Existing ones are read-only; absent ones are moved aside.
		for _, name := range []string{"config", "hooks"} {
			if g == ".git/worktrees/wt" {
				continue // a linked worktree's are its common directory's
			}
			if strings.Contains(o.Result.Stdout, "wrote "+g+"/"+name+"\n") {
				t.Errorf("the command wrote %s/%s", g, name)
			}
		}
		for _, name := range []string{"commondir", "objects/info/alternates"} {
			p := filepath.Join(f.ws, g, name)
			if g == ".git/worktrees/wt" && name == "commondir" {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), "evil") {
					t.Errorf("%s/%s points at the planted directory", g, name)
				}
				continue
			}
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s/%s is in place on the host after the execution", g, name)
			}
		}
		if b, err := os.ReadFile(filepath.Join(f.ws, g, "config")); err != nil && !os.IsNotExist(err) || strings.Contains(string(b), "fsmonitor") {
			t.Errorf("%s/config after the execution: %v %q", g, err, b)
		}
	}
	if strings.Contains(o.Result.Stdout, "wrote gitdir") {
		t.Errorf("the command rewrote the worktree's gitdir")
	}
	for _, want := range []string{"committed-in-worktree", "committed-in-submodule"} {
		if !strings.Contains(o.Result.Stdout, want) {
			t.Errorf("%s missing: stdout %q stderr %q", want, o.Result.Stdout, o.Result.Stderr)
		}
	}
	// What the person does next.
	for _, dir := range []string{f.ws, filepath.Join(f.ws, "sub"), filepath.Join(f.ws, "wt"), filepath.Join(f.ws, "pkgs", "inner")} {
		f.hostGit(dir, "status", "--short")
		f.hostGit(dir, "checkout", "-q", "-b", "next-"+filepath.Base(dir))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a host git command ran what the sandboxed command planted")
	}
}

// A write-deny name that is a link leading nowhere (dangling, or a loop)
// refuses the run: the command could make what it leads to. One that
// leads out of the workspace, replaced by the command, is moved aside.
func TestWriteDenyLinks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, setup, command, check string
		refused                     bool
	}{
		{"dangling", "ln -s nowhere.json .mcp.json", `echo '{"mcpServers":{"x":{"command":"id"}}}' > nowhere.json`, ".mcp.json", true},
		{"loop", "ln -s .claude-x .claude && ln -s .claude .claude-x", `rm .claude-x && mkdir -p .claude-x/commands && echo evil > .claude-x/commands/x.md`, ".claude/commands/x.md", true},
		{"replaced", "ln -s /etc/hostname .mcp.json", `rm .mcp.json && echo '{"mcpServers":{"x":{"command":"id"}}}' > .mcp.json`, ".mcp.json", false},
		{"codex decoy", "mkdir decoy && ln -s decoy .codex", `echo 'notify = ["id"]' > decoy/config.toml`, ".codex/config.toml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := bwrapFixture(t, nil)
			sh := exec.Command("sh", "-c", tc.setup)
			sh.Dir = f.ws
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v %s", tc.setup, err, out)
			}
			o := f.run(tc.command)
			if refused := o.Event.Status == "failed_to_start" && o.Event.StatusReason == "write_deny_link"; refused != tc.refused {
				t.Errorf("status %q %q (%s), want refused %v", o.Event.Status, o.Event.StatusReason, o.Result.Stderr, tc.refused)
			}
			// The editor or agent opens its configuration.
			if b, err := os.ReadFile(filepath.Join(f.ws, tc.check)); err == nil && (strings.Contains(string(b), "mcpServers") || strings.Contains(string(b), "evil") || strings.Contains(string(b), "notify")) {
				t.Errorf("%s reads %q on the host after the execution (blocked %q, stderr %q)", tc.check, b, o.Event.WriteBlocked, o.Result.Stderr)
			}
		})
	}
}

// A configured write-deny path whose directory does not exist yet, new
// agent directories, and write-deny names in plain directories at any
// depth do not stay where the command put them.
func TestWriteDenyNamesAnywhere(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	f.cfg.Exec.Sandbox.WriteDeny = append(f.cfg.Exec.Sandbox.WriteDeny, filepath.Join(f.ws, "tools", "cfg", "settings.json"))
	if err := os.MkdirAll(filepath.Join(f.ws, "docs", "old", ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := f.run(`mkdir -p tools/cfg && echo '{"hooks":"id"}' > tools/cfg/settings.json
mkdir .codex .agents && echo x > .codex/config.toml && echo x > .agents/AGENTS.md && echo '--pre=id' > .ripgreprc
mkdir -p a/b/c/d/.claude/commands && echo evil > a/b/c/d/.claude/commands/x.md
echo evil > docs/old/.claude/settings.json && echo wrote-existing
exit 0`)
	for _, p := range []string{"tools/cfg/settings.json", ".codex", ".agents", ".ripgreprc", "a/b/c/d/.claude"} {
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%s is in place on the host after the execution", p)
		}
	}
	if strings.Contains(o.Result.Stdout, "wrote-existing") {
		t.Errorf("the command wrote into an existing .claude two levels down")
	}
	if _, err := os.Stat(filepath.Join(f.ws, "tools", "cfg")); err != nil {
		t.Errorf("the directory the command made was moved: %v", err)
	}
}

// A deny-read path in the workspace cannot be carried away by renaming a
// directory above it, nor a nested repository by renaming its parent.
func TestDenyReadParentsPinned(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	secret := filepath.Join(f.ws, "config", "secrets.json")
	f.cfg.Exec.Sandbox.DenyRead = append(f.cfg.Exec.Sandbox.DenyRead, secret)
	for _, d := range []string{filepath.Dir(secret), filepath.Join(f.ws, "pkgs", "lib")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("TOPSECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.hostGit(filepath.Join(f.ws, "pkgs", "lib"), "init", "-q")
	f.run(`mv config config-moved; mv pkgs pkgs-moved; exit 0`)
	o := f.run(`cat config-moved/secrets.json config/secrets.json; exit 0`)
	if strings.Contains(o.Result.Stdout, "TOPSECRET") {
		t.Errorf("a later command read the secret: %q", o.Result.Stdout)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "pkgs", "lib", ".git")); err != nil {
		t.Errorf("the nested repository was moved: %v", err)
	}
}

// A credential store made on the host while a command runs is hidden from
// it: the absent path had an empty read-only placeholder from the start.
func TestAbsentDenyReadHidden(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	ready, goAhead := filepath.Join(f.ws, "ready"), filepath.Join(f.ws, "go")
	done := make(chan *Outcome, 1)
	go func() {
		o, err := f.try(`touch ready; while [ ! -e go ]; do sleep 0.02; done; cat ~/.aws/credentials; exit 0`,
			func(r *api.ExecRequest) { r.TimeoutSeconds = 60 })
		if err != nil {
			t.Error(err)
		}
		done <- o
	}()
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case o := <-done:
			t.Fatalf("the command ended before it was ready: %+v", o)
		case <-time.After(20 * time.Millisecond):
		}
	}
	aws := filepath.Join(f.home, ".aws")
	if err := os.MkdirAll(aws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aws, "credentials"), []byte("aws_secret_access_key = HOSTSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goAhead, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o == nil {
		return
	}
	if strings.Contains(o.Result.Stdout, "HOSTSECRET") {
		t.Errorf("the command read a credential store made on the host while it ran: %q", o.Result.Stdout)
	}
	if !strings.Contains(o.Result.Stderr, ".aws/credentials") {
		t.Errorf("stderr %q, want cat's error", o.Result.Stderr)
	}
}

// A .git file padded with newlines past any small read is followed as git
// follows it: the configuration it leads to is checked, and the person's
// git status there runs nothing.
func TestPaddedGitPointer(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	marker := filepath.Join(f.dir, "fsmonitor-ran")
	f.run(`git init -q real && mv real/.git store && rmdir real && mkdir pad
{ printf 'gitdir: ../store'; head -c 9000 /dev/zero | tr '\0' '\n'; } > pad/.git
git --git-dir=store config core.fsmonitor 'touch ` + marker + `'
exit 0`)
	f.hostGitErr(filepath.Join(f.ws, "pad"), "status", "--short")
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the person's git status ran the fsmonitor planted behind a padded .git file")
	}
}

// A hooks link in a new repository that leads back into the workspace is
// moved aside itself; the sweep touches nothing the command did not make.
func TestHooksLinkIntoWorkspace(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	mine := []string{"README.md", "post-checkout", "notes/todo.txt"}
	for _, p := range mine {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(f.ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.ws, p), []byte("#!/bin/sh\ntouch "+filepath.Join(f.dir, "hook-ran")+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := f.run(`git init -q nested && rm -rf nested/.git/hooks && ln -s ../.. nested/.git/hooks`)
	for _, p := range append(mine, "nested/.git/HEAD") {
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err != nil {
			t.Errorf("%s was moved: %v (blocked %q)", p, err, o.Event.WriteBlocked)
		}
	}
	if fi, err := os.Lstat(filepath.Join(f.ws, "nested", ".git", "hooks")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t.Errorf("the hooks link is in place")
	}
	f.hostGit(filepath.Join(f.ws, "nested"), "commit", "-q", "--allow-empty", "-m", "x")
	f.hostGit(filepath.Join(f.ws, "nested"), "checkout", "-q", "-b", "other")
	if _, err := os.Stat(filepath.Join(f.dir, "hook-ran")); err == nil {
		t.Errorf("the person's git ran a workspace file as a hook")
	}
}
