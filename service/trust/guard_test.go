package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// realTemp returns a fresh temporary directory, resolved (on macOS the
// temporary directory lies behind /var -> /private/var).
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func symlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func TestProblem(t *testing.T) {
	t.Parallel()
	const home = "/home/u"
	g := Guard{
		Home:         home,
		DenyRead:     []string{home + "/.ssh", home + "/.local/share/keyrings", home + "/src/app/.env", home + "/.local/state/gatehouse"},
		Mandatory:    []string{home + "/.ssh", home + "/.local/share/keyrings"},
		Private:      []string{home + "/.config/gatehouse", home + "/.local/state/gatehouse"},
		ManagedBound: nil,
	}
	bounded := g
	bounded.ManagedBound = []string{home + "/src/app", "/srv"}
	for _, tc := range []struct {
		name  string
		g     Guard
		real  string
		want  string // a substring of the problem; "" for none
		clean bool   // the problem must be empty
	}{
		{name: "root", g: g, real: "/", want: "the whole filesystem"},
		{name: "home", g: g, real: home, want: "the home directory"},
		{name: "home parent", g: g, real: "/home", want: "above the home directory"},
		{name: "etc", g: g, real: "/etc", want: "a system directory"},
		{name: "usr", g: g, real: "/usr", want: "a system directory"},
		{name: "var", g: g, real: "/var", want: "a system directory"},
		{name: "opt", g: g, real: "/opt", want: "a system directory"},
		{name: "tmp", g: g, real: "/tmp", want: "a system directory"},
		{name: "run", g: g, real: "/run", want: "a system directory"},
		{name: "srv", g: g, real: "/srv", want: "a system directory"},
		{name: "macOS System", g: g, real: "/System", want: "a system directory"},
		{name: "macOS Library", g: g, real: "/Library", want: "a system directory"},
		{name: "macOS private etc", g: g, real: "/private/etc", want: "a system directory"},
		{name: "macOS private tmp", g: g, real: "/private/tmp", want: "a system directory"},
		{name: "inside usr", g: g, real: "/usr/local/src/app", want: `inside the read-only system directory "/usr"`},
		{name: "inside etc", g: g, real: "/etc/nginx", want: `inside the read-only system directory "/etc"`},
		{name: "inside proc", g: g, real: "/proc/self", want: `"/proc"`},
		{name: "inside lib64", g: g, real: "/lib64/x", want: `"/lib64"`},
		{name: "inside libexec", g: g, real: "/libexec/x", want: `"/libexec"`},
		{name: "inside System", g: g, real: "/System/Volumes/Data", want: `"/System"`},
		{name: "inside private etc", g: g, real: "/private/etc/ssh", want: `"/private/etc"`},
		{name: "etc lookalike", g: g, real: "/etcetera/app", clean: true},
		{name: "project in opt", g: g, real: "/opt/app", clean: true},
		{name: "project in srv", g: g, real: "/srv/app", clean: true},
		{name: "project in tmp", g: g, real: "/tmp/scratch", clean: true},
		{name: "project", g: g, real: home + "/src/app", clean: true},
		{name: "project holding a configured deny-read path", g: g, real: home + "/src", clean: true},
		{name: "inside a configured deny-read path", g: g, real: home + "/src/app/.env/x", want: `inside the deny-read path "/home/u/src/app/.env"`},
		{name: "inside ssh", g: g, real: home + "/.ssh/keys", want: `inside the deny-read path "/home/u/.ssh"`},
		{name: "ssh itself", g: g, real: home + "/.ssh", want: `inside the deny-read path "/home/u/.ssh"`},
		{name: "above a mandatory path", g: g, real: home + "/.local/share", want: `above the deny-read path "/home/u/.local/share/keyrings"`},
		{name: "own state", g: g, real: home + "/.local/state/gatehouse", want: "one of Gatehouse's own directories"},
		{name: "inside own state", g: g, real: home + "/.local/state/gatehouse/run", want: `inside Gatehouse's own directory`},
		{name: "above own state", g: g, real: home + "/.local", want: `above Gatehouse's own directory "/home/u/.local/state/gatehouse"`},
		{name: "own config", g: g, real: home + "/.config/gatehouse", want: "one of Gatehouse's own directories"},
		{name: "relative", g: g, real: "src/app", want: "not an absolute path"},
		{name: "inside the bound", g: bounded, real: home + "/src/app/sub", clean: true},
		{name: "the bound itself", g: bounded, real: home + "/src/app", clean: true},
		{name: "second bound", g: bounded, real: "/srv/app", clean: true},
		{name: "beside the bound", g: bounded, real: home + "/src/app_backup", want: `outside the managed workspace roots ["/home/u/src/app" "/srv"]`},
		{name: "above the bound", g: bounded, real: home + "/src", want: "outside the managed workspace roots"},
		{name: "bound does not lift the home check", g: Guard{Home: home, ManagedBound: []string{"/"}}, real: home, want: "the home directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.g.Problem(tc.real)
			if tc.clean {
				if got != "" {
					t.Errorf("Problem(%q) = %q, want none", tc.real, got)
				}
				return
			}
			if got == "" || !strings.Contains(got, tc.want) {
				t.Errorf("Problem(%q) = %q, want it to say %q", tc.real, got, tc.want)
			}
		})
	}
}

// GuardFor resolves what it is given, and follows the credential stores
// to what they lead to.
func TestGuardFor(t *testing.T) {
	t.Parallel()
	tmp := realTemp(t)
	realHome := mkdir(t, tmp, "real-home")
	home := symlink(t, realHome, filepath.Join(tmp, "home")) // $HOME is a symlink
	mkdir(t, realHome, ".ssh")
	keys := mkdir(t, realHome, "keys")
	if err := os.WriteFile(filepath.Join(keys, "id_ed25519"), []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(keys, "id_ed25519"), filepath.Join(realHome, ".ssh", "id_ed25519"))
	src := mkdir(t, realHome, "src")
	app := mkdir(t, src, "app")
	state := filepath.Join(home, ".local", "state", "gatehouse") // not made yet
	userFile := filepath.Join(app, "gatehouse.yaml")
	if err := os.WriteFile(userFile, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, src, filepath.Join(realHome, "src-link"))
	cfg := &policy.Config{Managed: &policy.ManagedPaths{WorkspaceRoots: []string{filepath.Join(home, "src-link")}, Field: "policy.workspace_roots"}}
	cfg.Exec.Sandbox.DenyRead = []string{filepath.Join(home, "src", "app", "secrets")}

	g := GuardFor(cfg, home, []string{state, userFile})
	if g.Home != realHome {
		t.Errorf("Home = %q, want %q", g.Home, realHome)
	}
	if len(g.ManagedBound) != 1 || g.ManagedBound[0] != src {
		t.Errorf("ManagedBound = %q, want [%q]", g.ManagedBound, src)
	}
	for _, tc := range []struct {
		real, want string
	}{
		{app, ""}, // holds the private user file and a configured deny-read path
		{filepath.Join(app, "secrets", "x"), "inside the deny-read path"},
		{keys, "above the deny-read path"}, // where a key in ~/.ssh leads
		{filepath.Join(realHome, ".ssh"), "inside the deny-read path"},
		{filepath.Join(realHome, ".local"), "above Gatehouse's own directory"}, // missing, still refused
		{realHome, "the home directory"},
		{tmp, "above the home directory"},
		{filepath.Join(realHome, "elsewhere"), "outside the managed workspace roots"},
	} {
		got := g.Problem(tc.real)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("Problem(%q) = %q, want %q", tc.real, got, tc.want)
		}
	}

	// Without a configuration or a managed bound, nothing bounds the roots.
	if g := GuardFor(nil, home, nil); g.ManagedBound != nil || g.Problem(filepath.Join(realHome, "elsewhere")) != "" {
		t.Errorf("GuardFor(nil) bounds the roots: %+v", g)
	}
}

func TestTop(t *testing.T) {
	t.Parallel()
	tmp := realTemp(t)
	home := mkdir(t, tmp, "home")
	mkdir(t, home, ".git") // a dotfiles repository in the home directory
	repo := mkdir(t, home, "src", "repo")
	mkdir(t, repo, ".git")
	deep := mkdir(t, repo, "cmd", "tool")
	wt := mkdir(t, home, "src", "worktree")
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+repo+"/.git/worktrees/w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := mkdir(t, home, "src", "plain", "sub")
	outside := mkdir(t, tmp, "outside", "x")
	for _, tc := range []struct{ dir, want string }{
		{repo, repo},
		{deep, repo},
		{wt, wt},
		{plain, plain}, // the walk stops below the home directory's own .git
		{home, home},
		{outside, outside},
	} {
		if got := Top(tc.dir, home); got != tc.want {
			t.Errorf("Top(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
	if got := Top(mkdir(t, wt, "pkg"), home); got != wt {
		t.Errorf("Top(worktree/pkg) = %q, want %q", got, wt)
	}
}

// The places whose files run later on the host are refused at once, as
// the home directory and ~/.ssh are: each itself, anything inside one and
// anything above one, wherever a symlink leads. A project beside them is
// trusted.
func TestAddRefusesAutorunPlaces(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, rel := range []string{
		".config/autostart", ".local/bin", ".config/systemd/user", ".cache/gatehouse",
		".cache/gatehouse/sandbox/claude-code/cargo", ".config/environment.d",
		".bashrc.d", ".config/fish/conf.d", ".oh-my-zsh/custom", ".local/share/dbus-1/services",
		".local/share/systemd/user", ".config/git", "bin",
		"Library/LaunchAgents", "Library/Application Support/com.apple.backgroundtaskmanagementagent",
	} {
		dir := mkdir(t, f.home, rel)
		f.refused(t, dir, "run later on the host")
	}
	// Above one: ~/.cache holds Gatehouse's caches.
	f.refused(t, filepath.Join(f.home, ".cache"), `above "`+filepath.Join(f.home, ".cache", "gatehouse")+`"`)
	// Through a symlink: a project link that leads into ~/.local/bin.
	link := symlink(t, filepath.Join(f.home, ".local", "bin"), filepath.Join(f.src, "tools"))
	f.refused(t, link, "run later on the host")
	// A dotfiles layout: ~/.config/autostart is a link into a repository,
	// so that repository holds an autorun place.
	dots := mkdir(t, f.home, "dotfiles", "autostart")
	symlink(t, dots, filepath.Join(f.home, ".config", "autostart-scripts"))
	f.guard = GuardFor(nil, f.home, []string{f.state})
	f.refused(t, filepath.Dir(dots), "above")
	// A project beside them is trusted.
	f.add(t, mkdir(t, f.src, "app"))
}

// The autorun places are refused as policy.workspace_roots too, by the
// same list: the guard and the configuration agree.
func TestAutorunListIsOne(t *testing.T) {
	t.Parallel()
	home := "/home/u"
	g := Guard{Home: home, Autorun: policy.AutorunFor(home)}
	for _, rel := range policy.AutorunHome {
		if p := g.Problem(filepath.Join(home, rel)); !strings.Contains(p, "run later on the host") {
			t.Errorf("~/%s: problem %q", rel, p)
		}
	}
	for _, abs := range policy.AutorunSystem {
		if p := g.Problem(abs); p == "" {
			t.Errorf("%s: no problem", abs)
		}
	}
}
