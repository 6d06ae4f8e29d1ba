package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// workspaceEnv is an Env whose home directory is a fresh one.
func workspaceEnv(t *testing.T) (home string, env func() (*Env, *bytes.Buffer, *bytes.Buffer)) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(sandboxtest.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "PATH":
			return "/usr/bin:/bin"
		}
		return ""
	}
	return home, func() (*Env, *bytes.Buffer, *bytes.Buffer) {
		var out, errb bytes.Buffer
		return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: getenv}, &out, &errb
	}
}

// The statuses and the file the commands leave.
func TestWorkspaceCommands(t *testing.T) {
	home, newEnv := workspaceEnv(t)
	app := filepath.Join(home, "src", "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	run1 := func(args ...string) (ExitStatus, string, string) {
		env, out, errb := newEnv()
		return run(context.Background(), env, args), out.String(), errb.String()
	}
	for _, tc := range []struct {
		args []string
		code ExitStatus
		msg  string
	}{
		{[]string{"workspace", "add", app}, 0, "trusted " + app},
		{[]string{"workspace", "add", "/"}, 1, "gatehouse: error: workspace add /: refused: / is the whole filesystem\n"},
		{[]string{"workspace", "add", home}, 1, "is the home directory"},
		{[]string{"workspace", "add", "a", "b"}, 2, "too many arguments"},
		{[]string{"workspace", "rm"}, 2, "want one DIR"},
		{[]string{"workspace", "rm", home}, 1, home + " is not a trusted workspace"},
		{[]string{"workspace", "list", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"workspace", "bogus"}, 2, `unknown subcommand "bogus"`},
	} {
		code, out, errs := run1(tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.msg) {
			t.Errorf("gatehouse %q: exit %d %q, want %d and %q", tc.args, code, out+errs, tc.code, tc.msg)
		}
	}

	state := filepath.Join(home, ".local", "state", "gatehouse")
	for p, want := range map[string]os.FileMode{filepath.Join(state, trust.FileName): 0o600, state: 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", p, fi.Mode().Perm(), err, want)
		}
	}

	code, out, errs := run1("workspace", "list", "--json")
	if code != 0 {
		t.Fatalf("list: exit %d %s", code, errs)
	}
	var got api.WorkspacesResponse
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	want := []api.Workspace{
		{Path: filepath.Join(home, "src"), Origin: api.WorkspacePolicy},
		{Path: app, Origin: api.WorkspaceTrusted, By: api.ByCLI},
	}
	if len(got.Workspaces) != 2 || got.Workspaces[1].Added.IsZero() {
		t.Fatalf("list --json = %+v, want %+v with a time added", got.Workspaces, want)
	}
	got.Workspaces[1].Added = want[1].Added
	if !reflect.DeepEqual(got.Workspaces, want) {
		t.Errorf("list --json = %+v, want %+v", got.Workspaces, want)
	}

	if code, _, errs := run1("workspace", "rm", app); code != 0 {
		t.Errorf("rm: exit %d %s", code, errs)
	}
	if code, out, _ := run1("workspace", "list"); code != 0 || strings.Contains(out, "trusted") {
		t.Errorf("list after rm: exit %d %q, want no trusted workspace", code, out)
	}
}

// The CLI's Guard is the loaded configuration's: the managed roots bound
// what may be trusted, and Gatehouse's own directories may not be.
func TestWorkspaceGuard(t *testing.T) {
	home, newEnv := workspaceEnv(t)
	proj := filepath.Join(home, "src", "proj")
	other := filepath.Join(home, "other")
	for _, d := range []string{proj, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(other, filepath.Join(proj, "out")); err != nil {
		t.Fatal(err)
	}
	managed := filepath.Join(home, "managed.yaml")
	if err := os.WriteFile(managed, []byte("policy:\n  workspace_roots: [~/src/proj]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, _, _ := newEnv()
	opts, err := loadOptions(env, "")
	if err != nil {
		t.Fatal(err)
	}
	opts.ManagedFile = managed
	l, err := policy.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	g := workspaceGuard(env, l, opts)
	s := trust.Open(filepath.Join(t.TempDir(), trust.FileName))
	if p, err := s.Add(proj, api.ByCLI, g); err != nil || p != proj {
		t.Errorf("Add(%q) = %q, %v; want it trusted", proj, p, err)
	}
	for dir, want := range map[string]string{
		other:                            "outside the managed workspace roots",
		filepath.Join(proj, "out"):       "resolves to " + other + ", outside the managed workspace roots",
		filepath.Join(home, ".config"):   "above Gatehouse's own directory",
		filepath.Join(home, ".local"):    "above Gatehouse's own directory",
		filepath.Join(home, "src"):       "outside the managed workspace roots",
		filepath.Join(home, "src", ".."): "the home directory",
	} {
		os.MkdirAll(dir, 0o755)
		if _, err := s.Add(dir, api.ByCLI, g); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Add(%q) = %v, want a refusal saying %q", dir, err, want)
		}
	}
	// The socket's directory is Gatehouse's own too.
	runDir := filepath.Join(home, ".local", "state", "gatehouse", "run")
	if !slices.ContainsFunc(g.Private, func(p string) bool { return p == runDir }) {
		t.Errorf("Private = %q, want the socket's directory %q in it", g.Private, runDir)
	}
}
