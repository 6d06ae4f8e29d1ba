package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// fixture is a home directory with projects, and the store in its state
// directory (not made yet).
type fixture struct {
	tmp, home, src string
	state          string
	store          *Store
	guard          Guard
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	tmp := realTemp(t)
	f := &fixture{tmp: tmp, home: mkdir(t, tmp, "home")}
	f.src = mkdir(t, f.home, "src")
	mkdir(t, f.home, ".ssh")
	f.state = filepath.Join(f.home, ".local", "state", "gatehouse")
	f.store = Open(filepath.Join(f.state, FileName))
	f.guard = GuardFor(nil, f.home, []string{f.state, filepath.Join(f.home, ".config", "gatehouse")})
	return f
}

func (f *fixture) add(t *testing.T, dir string) string {
	t.Helper()
	got, err := f.store.Add(dir, api.ByCLI, f.guard)
	if err != nil {
		t.Fatalf("Add(%q): %v", dir, err)
	}
	return got
}

func (f *fixture) refused(t *testing.T, dir, want string) {
	t.Helper()
	_, err := f.store.Add(dir, api.ByCLI, f.guard)
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), want) {
		t.Errorf("Add(%q) = %v, want a refusal saying %q", dir, err, want)
	}
	if re != nil && slices.Contains(f.store.Roots(), re.Path) {
		t.Errorf("Add(%q) refused yet trusted %q", dir, re.Path)
	}
}

func TestAdd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	app := mkdir(t, f.src, "app")
	before := time.Now().Add(-time.Second)
	if got := f.add(t, app); got != app {
		t.Errorf("Add = %q, want %q", got, app)
	}
	// Again: not an error, not a second entry.
	f.add(t, app)
	ws, err := f.store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Path != app || ws[0].Origin != api.WorkspaceTrusted || ws[0].By != api.ByCLI || ws[0].Added.Before(before) || ws[0].Added.After(time.Now()) {
		t.Errorf("List = %+v, want the one entry for %q, trusted by cli, added now", ws, app)
	}

	// The file and its directory are the user's alone.
	for p, want := range map[string]os.FileMode{f.store.Path(): 0o600, f.state: 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	var onDisk struct {
		Version    int `json:"version"`
		Workspaces []struct {
			Path, By string
			Added    time.Time
		} `json:"workspaces"`
	}
	data, err := os.ReadFile(f.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &onDisk); err != nil || onDisk.Version != 1 || len(onDisk.Workspaces) != 1 || onDisk.Workspaces[0].Path != app || onDisk.Workspaces[0].By != "cli" {
		t.Errorf("file = %s (%v), want version 1 and the one workspace", data, err)
	}
	if left, _ := filepath.Glob(filepath.Join(f.state, ".workspaces.json.*")); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}

	// A symlink is trusted where it leads.
	other := mkdir(t, f.src, "other")
	link := symlink(t, other, filepath.Join(f.home, "other-link"))
	if got := f.add(t, link); got != other {
		t.Errorf("Add(symlink) = %q, want %q", got, other)
	}
	if got := f.store.Roots(); !slices.Equal(got, []string{app, other}) {
		t.Errorf("Roots = %q, want [%q %q]", got, app, other)
	}
}

func TestAddRepositoryTop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	repo := mkdir(t, f.src, "repo")
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	} else {
		mkdir(t, repo, ".git")
	}
	sub := mkdir(t, repo, "internal", "pkg")
	if got := f.add(t, sub); got != repo {
		t.Errorf("Add(%q) = %q, want the repository's top %q", sub, got, repo)
	}
	// A .git in the home directory (dotfiles) does not make the home
	// directory the top: the walk stops below it.
	mkdir(t, f.home, ".git")
	plain := mkdir(t, f.src, "plain", "sub")
	if got := f.add(t, plain); got != plain {
		t.Errorf("Add(%q) = %q, want itself", plain, got)
	}
}

func TestAddRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	app := mkdir(t, f.src, "app")
	f.add(t, app)

	// A symlink to the home directory inside a trusted root is refused
	// as a workspace, naming where it leads.
	escape := symlink(t, f.home, filepath.Join(app, "escape"))
	f.refused(t, escape, fmt.Sprintf("refused: %s resolves to %s, the home directory", escape, f.home))
	f.refused(t, "/", "refused: / is the whole filesystem")
	f.refused(t, f.home, "is the home directory")
	f.refused(t, f.tmp, "above the home directory")
	f.refused(t, filepath.Join(f.home, ".ssh"), "inside the deny-read path")
	f.refused(t, mkdir(t, f.home, ".ssh", "sub"), "inside the deny-read path")
	f.refused(t, mkdir(t, f.home, ".aws", "x"), "inside the deny-read path")
	f.refused(t, mkdir(t, f.home, ".config", "gatehouse"), "is one of Gatehouse's own directories")
	f.refused(t, filepath.Join(f.home, ".config"), "above Gatehouse's own directory")
	f.refused(t, mkdir(t, f.state, "run"), "inside Gatehouse's own directory")
	for _, d := range []string{"/etc", "/usr", "/tmp", "/dev", "/proc"} {
		// (The temporary directory may lie above this home directory.)
		if _, err := os.Stat(d); err == nil && !strings.HasPrefix(f.home, d+"/") {
			f.refused(t, d, "a system directory")
		}
	}
	if _, err := os.Stat("/usr/bin"); err == nil {
		f.refused(t, "/usr/bin", `inside the read-only system directory "/usr"`)
	}
	if _, err := os.Stat("/etc"); err == nil {
		// However it is spelled, through a symlink in a trusted root.
		etc := symlink(t, "/etc", filepath.Join(app, "etc"))
		f.refused(t, etc, "system directory")
	}

	// A repository whose top is refused is refused, naming the top.
	secretRepo := mkdir(t, f.home, ".ssh", "repo")
	mkdir(t, secretRepo, ".git")
	f.refused(t, mkdir(t, secretRepo, "sub"), "resolves to "+secretRepo+", inside the deny-read path")

	// What is not a directory is an error naming it, and not a refusal.
	for _, dir := range []string{filepath.Join(f.src, "missing"), f.store.Path()} {
		_, err := f.store.Add(dir, api.ByCLI, f.guard)
		var re *RefusedError
		if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), dir) {
			t.Errorf("Add(%q) = %v, want an error naming it", dir, err)
		}
	}
	if got := f.store.Roots(); len(got) != 1 || got[0] != app {
		t.Errorf("Roots = %q after refusals, want only %q", got, app)
	}
}

func TestAddManagedBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	allowed := mkdir(t, f.src, "work")
	elsewhere := mkdir(t, f.home, "play")
	f.guard.ManagedBound = []string{allowed}
	f.add(t, mkdir(t, allowed, "app"))
	f.refused(t, elsewhere, "outside the managed workspace roots")
	// A symlink inside the bound that leads out of it is outside it.
	f.refused(t, symlink(t, elsewhere, filepath.Join(allowed, "out")), "resolves to "+elsewhere+", outside the managed")
	f.refused(t, mkdir(t, f.src, "work_backup"), "outside the managed")
}

func TestRemove(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b, c := mkdir(t, f.src, "a"), mkdir(t, f.src, "b"), mkdir(t, f.src, "c")
	for _, d := range []string{a, b, c} {
		f.add(t, d)
	}
	// As stored, and through a symlink that resolves to it.
	if err := f.store.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Remove(symlink(t, b, filepath.Join(f.home, "b-link"))); err != nil {
		t.Fatal(err)
	}
	// A trusted directory that no longer exists can still be removed.
	f.add(t, mkdir(t, f.src, "gone"))
	os.Remove(filepath.Join(f.src, "gone"))
	if err := f.store.Remove(filepath.Join(f.src, "gone")); err != nil {
		t.Errorf("Remove(gone): %v", err)
	}
	if got := f.store.Roots(); len(got) != 1 || got[0] != c {
		t.Errorf("Roots = %q, want [%q]", got, c)
	}
	err := f.store.Remove(a)
	if !errors.Is(err, ErrNotTrusted) || !strings.Contains(err.Error(), a) {
		t.Errorf("Remove(untrusted) = %v, want ErrNotTrusted naming %q", err, a)
	}
}

// A file that cannot be read is an error naming it; Add and Remove leave
// it as it is, and Roots holds none until it is fixed.
func TestMalformedFile(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"garbage":         "{not json",
		"future version":  `{"version": 2, "workspaces": []}`,
		"relative path":   `{"version": 1, "workspaces": [{"path": "src/app", "added": "2025-01-02T15:04:05Z", "by": "cli"}]}`,
		"unclean path":    `{"version": 1, "workspaces": [{"path": "/a/../b", "added": "2025-01-02T15:04:05Z", "by": "cli"}]}`,
		"unknown field":   `{"version": 1, "workspaces": [], "roots": ["/"]}`,
		"no version":      `{"workspaces": []}`,
		"workspaces type": `{"version": 1, "workspaces": {}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			mkdir(t, f.state)
			if err := os.WriteFile(f.store.Path(), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := f.store.Roots(); len(got) != 0 {
				t.Errorf("Roots = %q, want none", got)
			}
			for what, err := range map[string]error{
				"Err":    f.store.Err(),
				"Add":    func() error { _, err := f.store.Add(mkdir(t, f.src, "app"), api.ByCLI, f.guard); return err }(),
				"Remove": f.store.Remove(f.src),
				"List":   func() error { _, err := f.store.List(); return err }(),
			} {
				if err == nil || !strings.Contains(err.Error(), f.store.Path()) {
					t.Errorf("%s = %v, want an error naming %s", what, err, f.store.Path())
				}
			}
			if data, _ := os.ReadFile(f.store.Path()); string(data) != content {
				t.Errorf("file is now %q, want it untouched", data)
			}
		})
	}
}

func TestUnreadableFile(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	f := newFixture(t)
	f.add(t, mkdir(t, f.src, "app"))
	if err := os.Chmod(f.store.Path(), 0); err != nil {
		t.Fatal(err)
	}
	if got := f.store.Roots(); len(got) != 0 {
		t.Errorf("Roots = %q, want none", got)
	}
	if err := f.store.Err(); err == nil || !strings.Contains(err.Error(), f.store.Path()) {
		t.Errorf("Err = %v, want one naming the file", err)
	}
	if _, err := f.store.Add(mkdir(t, f.src, "b"), api.ByCLI, f.guard); err == nil {
		t.Error("Add over an unreadable file succeeded")
	}
}

// Roots reads the file again when it changed, and only then.
func TestRootsReread(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := mkdir(t, f.src, "a")
	if got := f.store.Roots(); len(got) != 0 || f.store.Err() != nil {
		t.Fatalf("Roots of a missing file = %q, %v, want none and no error", got, f.store.Err())
	}
	// Another writer (the service, the CLI) adds: the next Roots sees it.
	other := Open(f.store.Path())
	if _, err := other.Add(a, "approval", f.guard); err != nil {
		t.Fatal(err)
	}
	if got := f.store.Roots(); !slices.Equal(got, []string{a}) {
		t.Fatalf("Roots = %q, want [%q]", got, a)
	}

	// An edit in place that keeps the size and the modification time
	// is not seen: Roots did not read the file again.
	fi, err := os.Stat(f.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.store.Path())
	b := filepath.Join(f.src, "b") // as long as "a"
	edited := strings.Replace(string(data), a, b, 1)
	if err := os.WriteFile(f.store.Path(), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.store.Path(), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := f.store.Roots(); !slices.Equal(got, []string{a}) {
		t.Errorf("Roots = %q after an edit that changed neither size nor time, want the cached [%q]", got, a)
	}
	// Its modification time changes: read again.
	later := fi.ModTime().Add(2 * time.Second)
	if err := os.Chtimes(f.store.Path(), later, later); err != nil {
		t.Fatal(err)
	}
	if got := f.store.Roots(); !slices.Equal(got, []string{b}) {
		t.Errorf("Roots = %q after the edit, want [%q]", got, b)
	}
	// Broken: none, and the error; fixed: back.
	if err := os.WriteFile(f.store.Path(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := f.store.Roots(); len(got) != 0 || f.store.Err() == nil {
		t.Errorf("Roots of a broken file = %q, %v, want none and an error", got, f.store.Err())
	}
	if err := os.WriteFile(f.store.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := f.store.Roots(); !slices.Equal(got, []string{a}) || f.store.Err() != nil {
		t.Errorf("Roots of the fixed file = %q, %v, want [%q]", got, f.store.Err(), a)
	}
	// Removed: none, no error.
	os.Remove(f.store.Path())
	if got := f.store.Roots(); len(got) != 0 || f.store.Err() != nil {
		t.Errorf("Roots of a removed file = %q, %v, want none", got, f.store.Err())
	}
}

// Writers through one Store and through two (as the CLI and the service
// are) lose no update, while readers read.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	stores := []*Store{f.store, Open(f.store.Path())}
	const n = 24
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = mkdir(t, f.src, fmt.Sprintf("p%02d", i))
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for _, s := range stores {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, r := range s.Roots() {
					if !filepath.IsAbs(r) {
						t.Errorf("Roots holds %q", r)
					}
				}
				if _, err := s.List(); err != nil {
					t.Errorf("List: %v", err)
				}
			}
		})
	}
	var writers sync.WaitGroup
	for i, d := range dirs {
		writers.Go(func() {
			if _, err := stores[i%2].Add(d, api.ByCLI, f.guard); err != nil {
				t.Errorf("Add: %v", err)
			}
		})
	}
	writers.Wait()
	// Remove half, concurrently, through the other store.
	for i, d := range dirs {
		if i%2 == 0 {
			writers.Go(func() {
				if err := stores[(i+1)%2].Remove(d); err != nil {
					t.Errorf("Remove: %v", err)
				}
			})
		}
	}
	writers.Wait()
	close(done)
	wg.Wait()
	for _, s := range stores {
		got := s.Roots()
		slices.Sort(got)
		var want []string
		for i, d := range dirs {
			if i%2 == 1 {
				want = append(want, d)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("Roots = %q, want %q", got, want)
		}
	}
}

// A directory trusted for one agent is that agent's root alone; trusting
// it for another adds that one, and for every agent lifts the names. The
// file says for whom.
func TestAddForAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	app := mkdir(t, f.src, "app")
	if _, err := f.store.AddFor(app, "claude-code", "approval", f.guard); err != nil {
		t.Fatal(err)
	}
	if got := f.store.RootsFor("claude-code"); !slices.Equal(got, []string{app}) {
		t.Errorf("claude-code's roots %q", got)
	}
	if got := f.store.RootsFor("codex"); len(got) != 0 {
		t.Errorf("codex's roots %q, want none", got)
	}
	ws, err := f.store.List()
	if err != nil || len(ws) != 1 || !slices.Equal(ws[0].Agents, []string{"claude-code"}) {
		t.Errorf("list %+v %v", ws, err)
	}
	f.store.AddFor(app, "codex", "approval", f.guard)
	f.store.AddFor(app, "codex", "approval", f.guard)
	if ws, _ := f.store.List(); !slices.Equal(ws[0].Agents, []string{"claude-code", "codex"}) {
		t.Errorf("after codex: %+v", ws)
	}
	if got := f.store.RootsFor("cli"); len(got) != 0 {
		t.Errorf("cli's roots %q, want none", got)
	}
	f.add(t, app) // every agent
	if ws, _ := f.store.List(); len(ws) != 1 || ws[0].Agents != nil {
		t.Errorf("after every agent: %+v", ws)
	}
	if got := f.store.RootsFor("cli"); !slices.Equal(got, []string{app}) {
		t.Errorf("cli's roots %q", got)
	}
	// Every agent's stays every agent's.
	f.store.AddFor(app, "codex", "approval", f.guard)
	if ws, _ := f.store.List(); ws[0].Agents != nil {
		t.Errorf("narrowed: %+v", ws)
	}
	b, _ := os.ReadFile(f.store.Path())
	if strings.Contains(string(b), "agents") {
		t.Errorf("file %s", b)
	}
	// An empty agents list in the file is refused, naming the field.
	os.WriteFile(f.store.Path(), []byte(`{"version": 1, "workspaces": [{"path": "`+app+`", "added": "2025-01-02T15:04:05Z", "by": "cli", "agents": []}]}`), 0o600)
	if err := f.store.Err(); err == nil || !strings.Contains(err.Error(), "workspaces[0].agents") {
		t.Errorf("empty agents: %v", err)
	}
}
