//go:build unix

package toolcache

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A victim is a directory standing for ~/.ssh, which a command points a
// cache directory at.
type victim struct {
	dir, before string
}

func newVictim(t *testing.T, files map[string]string) *victim {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ssh")
	for name, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &victim{dir: dir, before: tree(dir)}
}

// check fails t unless the victim's files are byte-identical and it has
// no new entries.
func (v *victim) check(t *testing.T) {
	t.Helper()
	if now := tree(v.dir); now != v.before {
		t.Errorf("the victim directory changed:\nbefore:\n%s\nafter:\n%s", v.before, now)
	}
}

// tree is every entry below dir: its type, mode and content hash.
func tree(dir string) string {
	var s string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			s += fmt.Sprintf("%s: %v\n", p, err)
			return nil
		}
		fi, _ := d.Info()
		var sum [32]byte
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			sum = sha256.Sum256(b)
		}
		s += fmt.Sprintf("%s %v %x\n", p, fi.Mode(), sum[:8])
		return nil
	})
	return s
}

// A command that pointed its cache, or a directory in it, at another
// directory gets no file of that directory removed, replaced or added by
// the preparation before the next commands; the cache is whole again.
func TestPrepareFollowsNoLinkACommandPlanted(t *testing.T) {
	ssh := map[string]string{"config": "Host *\n  IdentityFile ~/.ssh/id_ed25519\n", "id_ed25519": "key", "env": "x", "bin/tool": "#!/bin/sh\n"}
	for _, plant := range []string{"", "cargo", "m2", "m2/repository", "go-build", "cargo/config"} {
		t.Run("link at "+plant, func(t *testing.T) {
			home := t.TempDir()
			cargo := filepath.Join(home, ".cargo")
			os.MkdirAll(filepath.Join(cargo, "bin"), 0o755)
			for _, name := range []string{"config.toml", "config", "env"} {
				os.WriteFile(filepath.Join(cargo, name), []byte("[net]\n"), 0o644)
			}
			c := For(filepath.Join(home, "cache"), "cli")
			if err := c.Prepare(home); err != nil {
				t.Fatal(err)
			}
			v := newVictim(t, ssh)
			at := filepath.Join(c.Dir, plant)
			if err := os.RemoveAll(at); err != nil {
				t.Fatal(err)
			}
			target := v.dir
			if plant == "cargo/config" {
				target = filepath.Join(v.dir, "config")
			}
			if err := os.Symlink(target, at); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := c.Prepare(home); err != nil {
					t.Fatalf("prepare: %v", err)
				}
			}
			v.check(t)
			for _, sub := range []string{".", "cargo", "m2", "m2/repository", "go-build", "npm"} {
				if fi, err := os.Lstat(filepath.Join(c.Dir, sub)); err != nil || !fi.IsDir() {
					t.Errorf("%s: %v %v, want a directory", sub, fi, err)
				}
			}
			for _, name := range cargoLinks {
				if l, err := os.Readlink(filepath.Join(c.Dir, "cargo", name)); err != nil || l != filepath.Join(cargo, name) {
					t.Errorf("cargo/%s: %q %v, want the link to the host's", name, l, err)
				}
			}
		})
	}
}

// Survey, then remove: a command that re-points a directory between the
// two, at a directory holding files of the same names, loses only what
// is in its cache.
func TestTrimRemovesNothingALinkPointsAt(t *testing.T) {
	root := t.TempDir()
	writeAged(t, filepath.Join(root, "cli", "go-build", "00", "old"), 400, 3*time.Hour)
	writeAged(t, filepath.Join(root, "cli", "go-mod", "example.com", "m@v1.0.0", "a.go"), 100, 2*time.Hour)
	writeAged(t, filepath.Join(root, "cli", "npm", "new"), 100, time.Minute)
	v := newVictim(t, map[string]string{
		"go-build/00/old":                  "precious",
		"go-mod/example.com/m@v1.0.0/a.go": "precious",
		"go-mod/example.com/m@v1.0.0/keep": "precious",
		"npm/new":                          "precious",
	})
	testOnlyAfterSurvey = func() {
		for _, sub := range []string{"go-build", "go-mod", "npm"} {
			at := filepath.Join(root, "cli", sub)
			os.Rename(at, at+".aside")
			if err := os.Symlink(filepath.Join(v.dir, sub), at); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { testOnlyAfterSurvey = nil }()
	if _, err := Trim(root, 0); err != nil {
		t.Logf("trim: %v", err)
	}
	v.check(t)
}
