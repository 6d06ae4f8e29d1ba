package bwrap

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// The absent deny-read paths of one directory share its cover, each a
// placeholder in it; a directory too large to cover stays uncovered for
// every path in it; a path under a missing directory is a placeholder for
// that directory in the nearest one that exists.
func TestDiscoverCovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	big := filepath.Join(dir, "big")
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	os.MkdirAll(big, 0o755)
	os.WriteFile(filepath.Join(home, ".bashrc"), nil, 0o644)
	os.Symlink("elsewhere", filepath.Join(home, "link"))
	for i := 0; i <= coverMaxEntries; i++ {
		os.WriteFile(filepath.Join(big, "f"+strconv.Itoa(i)), nil, 0o644)
	}
	deny := []string{
		home + "/.aws", home + "/.kube", home + "/.config/gh", home + "/.config/op",
		home + "/no/such/dir/key", big + "/secret", big + "/other",
	}
	p, err := Discover(nil, deny, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want := []Cover{
		{Dir: home, Entries: []CoverEntry{{Name: ".bashrc"}, {Name: ".config"}, {Name: "link", Link: "elsewhere"}},
			Placeholders: []string{".aws", ".kube", "no"}},
		{Dir: home + "/.config", Placeholders: []string{"gh", "op"}},
	}
	if !reflect.DeepEqual(p.Mounts.Covers, want) {
		t.Errorf("covers:\n%+v\nwant\n%+v", p.Mounts.Covers, want)
	}
}

// BenchmarkDiscoverDenyRead is the mount plan of the whole deny-read set
// for a home where most credential stores are absent, as every execution
// and every warm sandbox makes it.
func BenchmarkDiscoverDenyRead(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	for _, d := range []string{".ssh", ".config/gh", ".local/share", "src/proj"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	deny := sandbox.DenyRead(home, nil)
	roots := []string{filepath.Join(home, "src/proj")}
	for b.Loop() {
		if _, err := discover(roots, deny, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}
