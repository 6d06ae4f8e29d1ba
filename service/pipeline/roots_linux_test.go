package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// rootFixture is a bubblewrap fixture whose workspace root ~/src/proj/sub
// lies inside the managed root ~/src/proj, as loaded from files. sub is a
// real directory when the configuration is loaded.
func rootFixture(t *testing.T) (f *fixture, sub string) {
	t.Helper()
	f = bwrapFixture(t, nil)
	sub = filepath.Join(f.home, "src", "proj", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	managed := f.write("etc/managed.yaml", "policy:\n  workspace_roots: [~/src/proj]\n")
	user := f.write("home/.config/gatehouse/config.yaml", "policy:\n  workspace_roots: [~/src/proj/sub]\nexec:\n  default_cwd: ~/src/proj/sub\n  sandbox:\n    backend: bubblewrap\n")
	l, err := policy.Load(policy.LoadOptions{ManagedFile: managed, UserFile: user, Home: f.home})
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	*f.cfg = l.Config
	return f, sub
}

// plant replaces the directory sub with a symlink to target, as a command
// running in the managed root could.
func plant(t *testing.T, sub, target string) {
	t.Helper()
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, sub); err != nil {
		t.Fatal(err)
	}
}

// writeHome is a command that tries to make the home directory's
// start-up places its own.
const writeHome = `mkdir -p "$HOME/.config/systemd/user" && echo x > "$HOME/.config/systemd/user/evil.service"; echo x > "$HOME/.gitconfig"; echo x > "$HOME/planted"`

func homeUntouched(t *testing.T, f *fixture) {
	t.Helper()
	for _, p := range []string{".config/systemd/user/evil.service", ".gitconfig", "planted"} {
		if _, err := os.Lstat(filepath.Join(f.home, p)); err == nil {
			t.Errorf("~/%s was written: the home directory was writable", p)
		}
	}
}

func TestSymlinkedRootPlantedAfterLoad(t *testing.T) {
	t.Parallel()
	f, sub := rootFixture(t)
	if o := f.run("pwd"); strings.TrimSpace(o.Result.Stdout) != sub {
		t.Fatalf("before the symlink: pwd = %q, want %q", o.Result.Stdout, sub)
	}
	plant(t, sub, f.home)
	_, err := f.try(writeHome)
	d := denial(err)
	if d == nil || d.Code != DenyWorkspaceRoot {
		t.Fatalf("got %v, want a %s denial", err, DenyWorkspaceRoot)
	}
	if !strings.Contains(d.Reason, "the home directory") || d.Event.BlockedBy != DenyWorkspaceRoot {
		t.Errorf("reason %q (blocked_by %q), want the home directory named", d.Reason, d.Event.BlockedBy)
	}
	homeUntouched(t, f)
}

func TestSymlinkedRootPlantedAfterDecision(t *testing.T) {
	t.Parallel()
	f, sub := rootFixture(t)
	ctx := context.Background()
	dec, err := f.ex.Decide(ctx, api.ExecRequest{Command: writeHome, Agent: "cli", Surface: api.SurfaceCLI})
	if err != nil {
		t.Fatalf("decide: %v", err)
	}
	plant(t, sub, f.home)
	o, err := f.ex.Run(ctx, dec, sandbox.Streams{}, f.ex.ExecutionEvent(dec))
	d := denial(err)
	if d == nil || d.Code != DenyWorkspaceRoot {
		t.Fatalf("got %v (outcome %+v), want a %s denial", err, o, DenyWorkspaceRoot)
	}
	if d.Event.Status != string(sandbox.StatusNeverRan) {
		t.Errorf("status = %q, want never_ran", d.Event.Status)
	}
	homeUntouched(t, f)
}

func TestSymlinkedRootOutOfManagedRoots(t *testing.T) {
	t.Parallel()
	f, sub := rootFixture(t)
	other := filepath.Join(f.home, "src", "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	plant(t, sub, other)
	_, err := f.try(`echo x > planted`)
	if d := denial(err); d == nil || d.Code != DenyWorkspaceRoot || !strings.Contains(d.Reason, "outside the managed policy.workspace_roots") {
		t.Fatalf("got %v, want a %s denial naming the managed roots", err, DenyWorkspaceRoot)
	}
	if _, err := os.Lstat(filepath.Join(other, "planted")); err == nil {
		t.Errorf("the command wrote outside the managed roots")
	}
}

func TestSymlinkedDenyReadHidesTarget(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	const secret = "SECRET-BEHIND-A-LINK-0815"
	real := f.write("home/dotfiles/ssh/id_ed25519", secret+"\n")
	if err := os.Symlink(filepath.Dir(real), filepath.Join(f.home, ".ssh")); err != nil {
		t.Fatal(err)
	}
	o := f.run(`cat ~/.ssh/id_ed25519 ` + real + `; ls ` + filepath.Dir(real))
	if strings.Contains(o.Result.Stdout, secret) || strings.Contains(o.Result.Stdout, "id_ed25519") {
		t.Errorf("the target of a symlinked deny-read path is readable: %q", o.Result.Stdout)
	}
}
