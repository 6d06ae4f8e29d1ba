package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// judgeHome is a home whose deny-read set is partly there and partly
// behind symlinks: a store that is a link, one under a linked directory,
// a name below a missing one.
func judgeHome(t testing.TB) (home string, paths []string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(dir, "home")
	for _, d := range []string{".ssh", ".config/gcloud", "elsewhere/aws", "elsewhere/conf/gh", ".local/state/gatehouse", "src/proj"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{".aws": "elsewhere/aws", ".config/gh": filepath.Join(home, "elsewhere/conf/gh"), ".kube": "missing"} {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	paths = append(MandatoryDenyReadFor(home), filepath.Join(home, ".local/state/gatehouse"), filepath.Join(home, ".config/gh/hosts.yml"),
		filepath.Join(home, ".aws/credentials"), filepath.Join(home, "no/such/dir/file"), "relative/../path")
	return home, paths
}

// A step that resolves its paths through its judge gets what a resolution
// of its own gets: the judge's remembered directories change how often a
// directory is looked up, not where a path leads.
func TestRootJudgeResolveEachAgrees(t *testing.T) {
	t.Parallel()
	home, paths := judgeHome(t)
	l, got := loadIn(t, home, "", "policy:\n  workspace_roots: [~/src/proj]\n")
	if got != "" {
		t.Fatal(got)
	}
	judge := l.Config.RootJudge(home, []string{filepath.Join(home, ".local/state/gatehouse")})
	want := ResolveEach(paths)
	if by := judge.ResolveEach(paths); !reflect.DeepEqual(by, want) {
		t.Errorf("through the judge:\n%q\nresolved alone:\n%q", by, want)
	}
	// Asked again, from what it remembers, the same.
	if by := judge.ResolveEach(paths); !reflect.DeepEqual(by, want) {
		t.Errorf("through the judge, twice:\n%q\nresolved alone:\n%q", by, want)
	}
	// The links were followed.
	for _, w := range []string{"elsewhere/aws/credentials", "elsewhere/conf/gh/hosts.yml"} {
		if !slices.Contains(want, filepath.Join(home, w)) {
			t.Errorf("%s is not in the resolved set %q", w, want)
		}
	}
}

// BenchmarkRunStepDenyRead is what one step of an execution resolves:
// the judge of its workspace roots, then the sandbox's deny-read set
// (each mandatory path again, and more). "alone" resolves the set afresh,
// as the step did; "judge" resolves it through the judge's remembered
// directories.
func BenchmarkRunStepDenyRead(b *testing.B) {
	home, paths := judgeHome(b)
	l, err := Load(DefaultLoadOptions("linux", home, func(string) string { return "" }))
	if err != nil {
		b.Fatal(err)
	}
	private := []string{filepath.Join(home, ".local/state/gatehouse")}
	b.Run("alone", func(b *testing.B) {
		for b.Loop() {
			l.Config.RootJudge(home, private)
			ResolveEach(paths)
		}
	})
	b.Run("judge", func(b *testing.B) {
		for b.Loop() {
			l.Config.RootJudge(home, private).ResolveEach(paths)
		}
	})
}
