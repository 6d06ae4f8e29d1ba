package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// symlinkHome makes a real home directory with ~/src/proj in it and a
// symlink ~/src/proj/escape pointing at the home directory itself, as a
// command in the workspace could make one. It returns the home directory,
// resolved (the temporary directory may itself lie behind a symlink).
func symlinkHome(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	for _, d := range []string{"src/proj", ".ssh", "src/other"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"src/proj/escape": home,
		"src/proj/ssh":    filepath.Join(home, ".ssh"),
		"src/proj/up":     "../other", // relative, out of the managed root
		"src/proj/inside": "../proj",  // relative, staying inside
		"src/link":        "proj",     // a symlink in front of the managed root
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// loadIn loads managed and user ("" for no file) with home.
func loadIn(t *testing.T, home, managed, user string) (*Loaded, string) {
	t.Helper()
	dir := t.TempDir()
	opts := LoadOptions{Home: home}
	if managed != "" {
		opts.ManagedFile = writeFile(t, dir, "managed.yaml", managed)
	}
	if user != "" {
		opts.UserFile = writeFile(t, dir, "config.yaml", user)
	}
	l, err := Load(opts)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		return nil, strings.ReplaceAll(msg, home, "~")
	}
	return l, ""
}

func TestNarrowResolvesSymlinks(t *testing.T) {
	t.Parallel()
	home := symlinkHome(t)
	const managedRoots = "policy:\n  workspace_roots: [~/src/proj]\n"
	tests := []struct {
		name, managed, user string
		want                string // "" when accepted
	}{
		{name: "root symlinked to home",
			managed: managedRoots, user: "policy:\n  workspace_roots: [~/src/proj/escape]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "~/src/proj/escape" (resolves to "~") is outside the managed list ["~/src/proj"] (managed.yaml:2); use one of those directories or one inside them`},
		{name: "root symlinked out by a relative link",
			managed: managedRoots, user: "policy:\n  workspace_roots:\n    - ~/src/proj\n    - ~/src/proj/up\n",
			want: `config.yaml:4: policy.workspace_roots[1]: "~/src/proj/up" (resolves to "~/src/other") is outside the managed list ["~/src/proj"] (managed.yaml:2); use one of those directories or one inside them`},
		{name: "root symlinked inside stays accepted",
			managed: managedRoots, user: "policy:\n  workspace_roots: [~/src/proj/inside]\n"},
		{name: "root spelled through a symlink to the managed root",
			managed: managedRoots, user: "policy:\n  workspace_roots: [~/src/link]\n"},
		{name: "not yet existing root under a symlink",
			managed: managedRoots, user: "policy:\n  workspace_roots: [~/src/proj/escape/later/on]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "~/src/proj/escape/later/on" (resolves to "~/later/on") is outside the managed list ["~/src/proj"] (managed.yaml:2); use one of those directories or one inside them`},
		{name: "not yet existing root inside",
			managed: managedRoots, user: "policy:\n  workspace_roots: [~/src/proj/later]\n"},
		{name: "default_cwd symlinked out",
			managed: "exec:\n  default_cwd: ~/src/proj\n", user: "exec:\n  default_cwd: ~/src/proj/up\n",
			want: `config.yaml:2: exec.default_cwd: "~/src/proj/up" (resolves to "~/src/other") is outside the managed value "~/src/proj" (managed.yaml:2); use that directory or one inside it`},
		{name: "inspection root symlinked out",
			managed: "policy:\n  script_inspection_roots: [~/src/proj]\n", user: "policy:\n  script_inspection_roots: [~/src/proj/escape]\n",
			want: `config.yaml:2: policy.script_inspection_roots[0]: "~/src/proj/escape" (resolves to "~") is outside the managed list ["~/src/proj"] (managed.yaml:2); use one of those directories or one inside them`},

		// A free field that changes what a managed field means.
		{name: "roots under a managed default_cwd alone",
			managed: "exec:\n  default_cwd: ~/src/proj\n", user: "policy:\n  workspace_roots: [~/src/other]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "~/src/other" is outside the managed exec.default_cwd "~/src/proj" (managed.yaml:2); use one of those directories or one inside them`},
		{name: "roots inside a managed default_cwd alone",
			managed: "exec:\n  default_cwd: ~/src/proj\n", user: "policy:\n  workspace_roots: [~/src/proj/a]\n"},
		{name: "inspection roots under a managed empty list mean the workspace roots",
			managed: managedRoots + "  script_inspection_roots: []\n", user: "policy:\n  script_inspection_roots: [~/src/other]\n",
			want: `config.yaml:2: policy.script_inspection_roots[0]: "~/src/other" is outside the managed list ["~/src/proj"] (managed.yaml:2); use one of those directories or one inside them`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := loadIn(t, home, tt.managed, tt.user)
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWorkspaceRootRefusedWhereItResolves(t *testing.T) {
	t.Parallel()
	home := symlinkHome(t)
	tests := []struct {
		name, user, want string // want "" when accepted
	}{
		{name: "symlink to home",
			user: "policy:\n  workspace_roots:\n    - ~/src/proj\n    - ~/src/proj/escape\n",
			want: `config.yaml:4: policy.workspace_roots[1]: "~/src/proj/escape" resolves to "~", the home directory; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "home itself",
			user: "policy:\n  workspace_roots: [~]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "~" is the home directory; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "above home",
			user: "policy:\n  workspace_roots: [" + filepath.Dir(home) + "]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "` + filepath.Dir(home) + `" is above the home directory; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "into a deny-read path",
			user: "policy:\n  workspace_roots: [~/src/proj/ssh]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "~/src/proj/ssh" resolves to "~/.ssh", inside the deny-read path "~/.ssh"; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "into a configured deny-read path",
			user: "exec:\n  sandbox:\n    deny_read: [~/src/proj/escape/secret]\npolicy:\n  workspace_roots: [~/secret/x]\n",
			want: `config.yaml:5: policy.workspace_roots[0]: "~/secret/x" is inside the deny-read path "~/secret"; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "over a mandatory deny-read path",
			user: "policy:\n  workspace_roots: [~/.terraform.d]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "~/.terraform.d" is above the deny-read path "~/.terraform.d/credentials.tfrc.json"; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "over Gatehouse's state directory",
			user: "policy:\n  workspace_roots: [~/.local/state]\n",
			want: `config.yaml:2: policy.workspace_roots[0]: "~/.local/state" is above the deny-read path "~/.local/state/gatehouse"; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "over a configured deny-read path is allowed",
			user: "exec:\n  sandbox:\n    deny_read: [~/src/proj/.env]\npolicy:\n  workspace_roots: [~/src/proj]\n"},
		{name: "default_cwd alone to home",
			user: "exec:\n  default_cwd: ~/src/proj/escape\n",
			want: `config.yaml:2: exec.default_cwd: "~/src/proj/escape" resolves to "~", the home directory; a workspace root is writable by every command, so want a project directory like ~/src/app`},
		{name: "default_cwd may be home when roots are set",
			user: "exec:\n  default_cwd: ~\npolicy:\n  workspace_roots: [~/src/proj]\n"},
		{name: "a managed root to home is refused too",
			user: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.user == "" {
				_, got := loadIn(t, home, "policy:\n  workspace_roots: [~/src/proj/escape]\n", "")
				if want := `managed.yaml:2: policy.workspace_roots[0]: "~/src/proj/escape" resolves to "~", the home directory`; !strings.HasPrefix(got, want) {
					t.Errorf("got  %q\nwant %q...", got, want)
				}
				return
			}
			if strings.Contains(tt.name, "state directory") && runtime.GOOS != "linux" {
				t.Skip("the state directory is elsewhere on " + runtime.GOOS)
			}
			_, got := loadIn(t, home, "", tt.user)
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestManagedPathsKept(t *testing.T) {
	t.Parallel()
	home := symlinkHome(t)
	l, got := loadIn(t, home, "policy:\n  workspace_roots: [~/src/proj]\n", "policy:\n  workspace_roots: [~/src/proj/a]\n")
	if got != "" {
		t.Fatal(got)
	}
	want := &ManagedPaths{WorkspaceRoots: []string{filepath.Join(home, "src/proj")}, Field: "policy.workspace_roots"}
	if !reflect.DeepEqual(l.Config.Managed, want) {
		t.Errorf("got %+v, want %+v", l.Config.Managed, want)
	}
	if l, _ := loadIn(t, home, "", "policy:\n  workspace_roots: [~/src/proj/a]\n"); l.Config.Managed != nil {
		t.Errorf("no managed file: got %+v, want nil", l.Config.Managed)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	home := symlinkHome(t)
	tests := []struct{ in, want string }{
		{home + "/src/proj", home + "/src/proj"},
		{home + "/src/proj/escape", home},
		{home + "/src/proj/escape/.ssh", home + "/.ssh"},
		{home + "/src/proj/escape/not/yet", home + "/not/yet"},
		{home + "/src/link/x/../y", home + "/src/proj/y"},
		{home + "/src/proj/escape/..", filepath.Dir(home)},
		{home + "/src/proj/up/../not/yet", home + "/src/not/yet"},
		{"relative/../x", "x"},
	}
	for _, tt := range tests {
		if got := Resolve(tt.in); got != tt.want {
			t.Errorf("Resolve(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestResolveWorkspaceRootsAfterLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, managed, user string
		plant               string // where ~/src/proj/sub points after load
		want                string // the error, with home as "~"; "" for none
	}{
		{name: "planted to home",
			managed: "policy:\n  workspace_roots: [~/src/proj]\n", user: "policy:\n  workspace_roots: [~/src/proj/sub]\n",
			plant: ".", want: `workspace root "~/src/proj/sub" now resolves to "~", the home directory; remove the symlink or change policy.workspace_roots`},
		{name: "planted out of the managed roots",
			managed: "policy:\n  workspace_roots: [~/src/proj]\n", user: "policy:\n  workspace_roots: [~/src/proj/sub]\n",
			plant: "src/other", want: `workspace root "~/src/proj/sub" now resolves to "~/src/other", outside the managed policy.workspace_roots ["~/src/proj"]; remove the symlink or change policy.workspace_roots`},
		{name: "planted into a deny-read path",
			user:  "policy:\n  workspace_roots: [~/src/proj/sub]\n",
			plant: ".ssh", want: `workspace root "~/src/proj/sub" now resolves to "~/.ssh", inside the deny-read path "~/.ssh"; remove the symlink or change policy.workspace_roots`},
		{name: "planted above a private path",
			user:  "policy:\n  workspace_roots: [~/src/proj/sub]\n",
			plant: ".local/state", want: `workspace root "~/src/proj/sub" now resolves to "~/.local/state", above the deny-read path "~/.local/state/gatehouse"; remove the symlink or change policy.workspace_roots`},
		{name: "default_cwd alone planted to home",
			user:  "exec:\n  default_cwd: ~/src/proj/sub\n",
			plant: ".", want: `workspace root "~/src/proj/sub" now resolves to "~", the home directory; remove the symlink or change policy.workspace_roots`},
		{name: "planted inside stays allowed",
			managed: "policy:\n  workspace_roots: [~/src/proj]\n", user: "policy:\n  workspace_roots: [~/src/proj/sub]\n",
			plant: "src/proj/real"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := symlinkHome(t)
			for _, d := range []string{"src/proj/sub", "src/proj/real", ".local/state/gatehouse"} {
				if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			l, got := loadIn(t, home, tt.managed, tt.user)
			if got != "" {
				t.Fatalf("load: %s", got)
			}
			private := []string{filepath.Join(home, ".local/state/gatehouse")}
			if _, err := l.Config.ResolveWorkspaceRoots(home, private); err != nil {
				t.Fatalf("before the symlink: %v", err)
			}
			// A judge made before the symlink was planted resolves the
			// roots anew: it sees the planted root as a fresh one does.
			judge := l.Config.RootJudge(home, private)
			sub := filepath.Join(home, "src/proj/sub")
			if err := os.Remove(sub); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(home, tt.plant), sub); err != nil {
				t.Fatal(err)
			}
			roots, err := l.Config.ResolveWorkspaceRoots(home, private)
			got = ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), home, "~")
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if err == nil && !reflect.DeepEqual(roots, []string{filepath.Join(home, tt.plant)}) {
				t.Errorf("roots = %q, want the resolved %s", roots, tt.plant)
			}
			byJudge, jerr := judge.Roots()
			if fmt.Sprint(jerr) != fmt.Sprint(err) || !reflect.DeepEqual(byJudge, roots) {
				t.Errorf("the judge made before: %q, %v; made after: %q, %v", byJudge, jerr, roots, err)
			}
		})
	}
}

func TestResolveWorkspaceRootsPrivateFile(t *testing.T) {
	t.Parallel()
	home := symlinkHome(t)
	l, got := loadIn(t, home, "", "policy:\n  workspace_roots: [~/src/proj]\n")
	if got != "" {
		t.Fatal(got)
	}
	// A user file named with --config inside a root is hidden there, so
	// the root stays; a private directory below a root refuses it.
	file := filepath.Join(home, "src/proj/gatehouse.yaml")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Config.ResolveWorkspaceRoots(home, []string{file}); err != nil {
		t.Errorf("private file inside a root: %v", err)
	}
	dir := filepath.Join(home, "src/proj/state")
	if _, err := l.Config.ResolveWorkspaceRoots(home, []string{dir}); err == nil || !strings.Contains(err.Error(), "above the deny-read path") {
		t.Errorf("private directory below a root: got %v, want it refused", err)
	}
}

// Over many paths at once, a path resolves where filepath.EvalSymlinks
// takes it, whether its own name or a directory above it is a symlink,
// and whatever was resolved before it.
func TestResolveEachAgreesWithEvalSymlinks(t *testing.T) {
	t.Parallel()
	home := symlinkHome(t)
	for _, d := range []string{"src/proj/sub/deeper", ".ssh/keys"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "src/proj/sub/file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A chain: chain -> link -> proj.
	if err := os.Symlink("link", filepath.Join(home, "src/chain")); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		home + "/src/proj/sub/deeper",
		home + "/src/link/sub/deeper",
		home + "/src/link/sub/file",
		home + "/src/chain/sub",
		home + "/src/chain/sub/deeper",
		home + "/src/proj/escape/.ssh/keys",
		home + "/src/proj/ssh/keys",
		home + "/src/proj/up",
		home + "/src/proj/inside/sub/file",
		home + "/src/proj/inside/inside/sub",
		home + "/src/link",
		home,
		"/",
		// ".." after a symlink leaves where it leads, as the kernel (and
		// the executor's check of the roots at each execution) takes it.
		home + "/src/proj/escape/..",
		home + "/src/proj/ssh/../src",
		home + "/src/proj/up/../proj/sub",
		home + "/src/link/../other",
	}
	// Every order: what one path's walk remembered must not change where
	// another resolves.
	for _, order := range [][]string{paths, reversed(paths)} {
		got := ResolveEach(order)
		for i, p := range order {
			want, err := filepath.EvalSymlinks(p)
			if err != nil {
				t.Fatal(err)
			}
			if got[i] != want {
				t.Errorf("ResolveEach: %s resolved to %q, EvalSymlinks to %q", p, got[i], want)
			}
		}
	}
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
