package bwrap

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestArgsGolden(t *testing.T) {
	t.Parallel()
	spec := &sandbox.Spec{
		Shell:          "/bin/bash",
		Command:        "echo hi",
		Dir:            "/home/u/src/proj",
		WorkspaceRoots: []string{"/home/u/src", "/home/u/work"},
		TmpfsSize:      1 << 30,
		InitPath:       "/usr/local/bin/gatehouse",
		Pins:           []sandbox.Pin{{Path: "/home/u/src/proj/build.sh", Source: "/home/u/.local/state/gatehouse/pins/ab12"}},
		ExtraBinds:     []sandbox.Bind{{Source: "/var/tmp/gh-cred-1", Target: "/run/gatehouse/cred"}},
		Egress: &sandbox.Egress{Socket: "/tmp/gatehouse-egress-1/proxy.sock",
			ResolvConf: "/tmp/gatehouse-egress-1/resolv.conf", ResolvConfTarget: "/etc/resolv.conf"},
	}
	m := &Mounts{
		HideDirs:     []string{"/home/u/.ssh", "/home/u/.aws"},
		HideFiles:    []string{"/home/u/.netrc"},
		Anchors:      []string{"/home/u/src/proj", "/home/u/src/proj/.git"},
		ProtectDirs:  []string{"/home/u/src/proj/.git/hooks", "/home/u/src/.vscode"},
		ProtectFiles: []string{"/home/u/src/proj/.git/config"},
		Covers: []Cover{{Dir: "/home/u", Entries: []CoverEntry{{Name: ".bashrc", Link: "dotfiles/bashrc"}, {Name: ".ssh"}, {Name: "src"}, {Name: "work"}},
			Placeholders: []string{".kube", ".aws"}}},
	}
	got := strings.Join(append(Args(spec, m, Options{DisableUserns: true}), InitCommand...), "\n") + "\n"
	golden := filepath.Join("testdata", "args.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("Args changed; run go test -update and review the diff.\ngot:\n%s", got)
	}
}

// Under the workspace posture the home directory and the other places of
// user data are empty tmpfs, made read-only last; read_allow entries come
// back read-only before the workspace roots, and a deny-read path nothing
// brought back needs no mount of its own.
func TestArgsWorkspaceGolden(t *testing.T) {
	t.Parallel()
	spec := &sandbox.Spec{
		Shell:          "/bin/bash",
		Command:        "echo hi",
		Dir:            "/home/u/src/proj",
		WorkspaceRoots: []string{"/home/u/src"},
		Read:           sandbox.ReadWorkspace,
		ReadHide:       []string{"/home", "/home/u", "/mnt"},
		ReadAllow:      []string{"/home/u/go/pkg/mod", "/home/u/.npm", "/home/u/src/vendor"},
		InitPath:       "/usr/local/bin/gatehouse",
		ToolCache:      &sandbox.ToolCache{Root: "/home/u/.cache/gatehouse/sandbox", Dir: "/home/u/.cache/gatehouse/sandbox/cli"},
	}
	m := &Mounts{
		HideDirs:  []string{"/home/u/.ssh", "/home/u/src/proj/.secrets", "/etc/gatehouse"},
		HideFiles: []string{"/home/u/.netrc"},
	}
	got := strings.Join(append(Args(spec, m, Options{}), InitCommand...), "\n") + "\n"
	golden := filepath.Join("testdata", "args_workspace.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("Args changed; run go test -update and review the diff.\ngot:\n%s", got)
	}
	// A hidden directory that is a root, or inside a read_allow entry, is
	// not hidden: a remount would hit the bind that brings it back.
	over := *spec
	over.WorkspaceRoots = []string{"/mnt"}
	over.ReadHide = []string{"/home", "/mnt", "/media/u"}
	over.ReadAllow = []string{"/media"}
	a := strings.Join(Args(&over, &Mounts{}, Options{}), " ")
	if strings.Contains(a, "--tmpfs /mnt") || strings.Contains(a, "--remount-ro /mnt") || strings.Contains(a, "/media/u") ||
		!strings.Contains(a, "--tmpfs /home") || !strings.Contains(a, "--ro-bind /media /media") {
		t.Errorf("hidden roots: %s", a)
	}
	// Without paths to hide, the posture changes nothing.
	spec.ReadHide = nil
	host := *spec
	host.Read, host.ReadAllow = sandbox.ReadHost, nil
	if a, b := Args(spec, m, Options{}), Args(&host, m, Options{}); !slices.Equal(a, b) {
		t.Errorf("workspace without ReadHide:\n%q\nhost:\n%q", a, b)
	}
}

// The order of mounts is the security property: deny-read after the
// workspace binds, pins last.
func TestArgsOrder(t *testing.T) {
	t.Parallel()
	spec := &sandbox.Spec{Dir: "/w", WorkspaceRoots: []string{"/w"}, InitPath: "/gh",
		Pins: []sandbox.Pin{{Path: "/w/x.sh", Source: "/s"}}}
	m := &Mounts{HideDirs: []string{"/w/.ssh"}, ProtectFiles: []string{"/w/.git/config"}}
	a := strings.Join(Args(spec, m, Options{}), " ")
	idx := func(s string) int {
		i := strings.Index(a, s)
		if i < 0 {
			t.Fatalf("%q missing from %q", s, a)
		}
		return i
	}
	if !(idx("--ro-bind / /") < idx("--bind /w /w") &&
		idx("--bind /w /w") < idx("--ro-bind /w/.git/config") &&
		idx("--bind /w /w") < idx("--tmpfs /w/.ssh") &&
		idx("--tmpfs /w/.ssh") < idx("--ro-bind /s /w/x.sh")) {
		t.Errorf("mount order wrong: %s", a)
	}
	if strings.Contains(a, "--disable-userns") {
		t.Errorf("--disable-userns without the option")
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	home := filepath.Join(dir, "home")
	for _, d := range []string{
		ws + "/.git/hooks", ws + "/proj/.git", ws + "/a/b/c/deep/.git", ws + "/node_modules/x/.git",
		ws + "/.idea", home + "/.ssh",
	} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(ws+"/.git/config", nil, 0o644)
	os.WriteFile(ws+"/proj/.git/config", nil, 0o644)
	os.WriteFile(ws+"/.bashrc", nil, 0o644)
	os.WriteFile(home+"/.netrc", nil, 0o600)
	os.Symlink("/etc/passwd", ws+"/.profile") // outside the roots: read-only already

	p, err := Discover([]string{ws}, []string{home + "/.ssh", home + "/.netrc", home + "/.aws"}, sandbox.DefaultWriteDeny)
	if err != nil {
		t.Fatal(err)
	}
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	checks := []struct {
		list []string
		path string
		want bool
	}{
		{p.Mounts.HideDirs, home + "/.ssh", true},
		{p.Mounts.HideFiles, home + "/.netrc", true},
		{p.Mounts.HideDirs, home + "/.aws", false},
		{p.Mounts.Anchors, ws + "/.git", true},
		{p.Mounts.Anchors, ws + "/proj/.git", true},
		{p.Mounts.Anchors, ws + "/node_modules/x/.git", false},
		{p.Mounts.Anchors, ws + "/a/b/c/deep/.git", false}, // deeper than the search
		{p.Mounts.ProtectDirs, ws + "/.git/hooks", true},
		{p.Mounts.ProtectDirs, ws + "/proj/.git/hooks", false}, // absent: watched, not created
		{p.Watch, ws + "/proj/.git/hooks", true},
		{p.Mounts.ProtectFiles, ws + "/.git/config", true},
		{p.Mounts.ProtectFiles, ws + "/.bashrc", true},
		{p.Mounts.ProtectDirs, ws + "/.idea", true},
		{p.Mounts.ProtectDirs, ws + "/.vscode", false},
		{p.Watch, ws + "/.vscode", true},
		{p.Watch, ws + "/proj/.claude", true},
		{p.Watch, ws + "/.idea", false},
		{p.Mounts.ProtectFiles, ws + "/.profile", false},
		{p.Watch, ws + "/.mcp.json", true},
		{p.Watch, ws + "/proj/.zshrc", true},
	}
	for _, c := range checks {
		if got := has(c.list, c.path); got != c.want {
			t.Errorf("%s: listed %v, want %v", c.path, got, c.want)
		}
	}
	// Discover creates nothing: absent write-deny directories stay absent.
	for _, d := range []string{ws + "/.vscode", ws + "/.claude", ws + "/proj/.git/hooks", ws + "/proj/.idea"} {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s was created", d)
		}
	}
	if _, err := os.Stat(ws + "/.idea"); err != nil {
		t.Errorf("a pre-existing directory was removed: %v", err)
	}

	// Sweep moves aside a watched file the command created.
	os.WriteFile(ws+"/.mcp.json", []byte("{}"), 0o644)
	moved, err := p.Sweep("abc")
	if err != nil {
		t.Errorf("Sweep: %v", err)
	}
	if len(moved) != 1 || moved[0] != ws+"/.mcp.json.gatehouse-blocked-abc" {
		t.Errorf("Sweep = %q", moved)
	}
	// A watched directory is moved aside like a file, to a name of its
	// own when the first is taken; nothing is replaced.
	os.MkdirAll(ws+"/.vscode", 0o755)
	os.WriteFile(ws+"/.vscode/tasks.json", []byte("{}"), 0o644)
	os.WriteFile(ws+"/.mcp.json", []byte("again"), 0o644)
	moved, _ = p.Sweep("abc")
	want := []string{ws + "/.vscode.gatehouse-blocked-abc", ws + "/.mcp.json.gatehouse-blocked-abc-2"}
	if !slices.Equal(moved, want) {
		t.Errorf("Sweep = %q, want %q", moved, want)
	}
	if b, err := os.ReadFile(ws + "/.mcp.json.gatehouse-blocked-abc"); err != nil || string(b) != "{}" {
		t.Errorf("the first moved .mcp.json was replaced: %q, %v", b, err)
	}
	if _, err := os.Stat(ws + "/.vscode.gatehouse-blocked-abc/tasks.json"); err != nil {
		t.Errorf("the moved .vscode lost its file: %v", err)
	}
}

// Sweep never follows a directory the command replaced with a symlink: the
// watched path then leads out of the workspace.
func TestSweepReplacedParent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	os.MkdirAll(ws+"/proj/.git", 0o755)
	os.MkdirAll(outside+"/.vscode", 0o755)
	p, err := Discover([]string{ws}, nil, sandbox.DefaultWriteDeny)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Watch, ws+"/proj/.vscode") {
		t.Fatalf("Watch = %q, want proj/.vscode", p.Watch)
	}
	os.Rename(ws+"/proj", ws+"/proj2")
	os.Symlink(outside, ws+"/proj")
	moved, _ := p.Sweep("x")
	for _, m := range moved {
		if strings.HasPrefix(m, ws+"/proj/") {
			t.Errorf("Sweep moved %s through the symlink", m)
		}
	}
	if _, err := os.Stat(outside + "/.vscode"); err != nil {
		t.Errorf("the directory outside the workspace was moved: %v", err)
	}
}

// An absolute write-deny path is protected where it is, once, and only
// inside a workspace root; names still apply in every root.
func TestDiscoverAbsoluteWriteDeny(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws+"/app/config", 0o755)
	os.WriteFile(ws+"/app/settings.yaml", nil, 0o644)
	p, err := Discover([]string{ws}, nil, []string{ws + "/app/config", ws + "/app/settings.yaml", ws + "/app/new", "/etc/passwd", ".envrc"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Mounts.ProtectDirs, []string{ws + "/app/config"}) || !slices.Equal(p.Mounts.ProtectFiles, []string{ws + "/app/settings.yaml"}) {
		t.Errorf("protected dirs %q, files %q", p.Mounts.ProtectDirs, p.Mounts.ProtectFiles)
	}
	if !slices.Contains(p.Watch, ws+"/app/new") || !slices.Contains(p.Watch, ws+"/.envrc") || slices.Contains(p.Watch, "/etc/passwd") {
		t.Errorf("watched %q", p.Watch)
	}
	if !slices.Equal(p.names, []string{".envrc"}) {
		t.Errorf("names for the git sweep %q", p.names)
	}
}
