//go:build unix

package nofollow

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// victim is a directory standing for ~/.ssh: nothing below a Dir may
// write, change or remove anything in it.
type victim struct {
	dir    string
	before string
}

func newVictim(t *testing.T) *victim {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config"), []byte("Host *\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "id_ed25519"), []byte("secret key"), 0o600)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o700)
	os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("f"), 0o644)
	return &victim{dir: dir, before: snapshot(t, dir)}
}

// check fails t when the victim's tree changed in any way.
func (v *victim) check(t *testing.T) {
	t.Helper()
	if now := snapshot(t, v.dir); now != v.before {
		t.Errorf("the victim directory changed:\nbefore:\n%s\nafter:\n%s", v.before, now)
	}
}

// snapshot is every entry below dir with its type, mode and content hash.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
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
		s += fmt.Sprintf("%s %v %x\n", p, fi.Mode(), sum[:6])
		return nil
	})
	return s
}

// openTmp returns an open Dir over a fresh directory.
func openTmp(t *testing.T) (*Dir, string) {
	t.Helper()
	p := t.TempDir()
	d, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, p
}

// bothWays runs f with openat2 where the kernel has it, and with the
// element-wise walk every other system uses.
func bothWays(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("elementwise", func(t *testing.T) {
		was := noOpenat2.Swap(true)
		defer noOpenat2.Store(was)
		f(t)
	})
}

func TestNamesThatLeaveTheDirAreRefused(t *testing.T) {
	d, _ := openTmp(t)
	for _, name := range []string{"", "/etc", "..", ".", "a/../b", "a//b", "a/./b", "a/", "../x"} {
		if _, err := d.MkdirAll(name, 0o700); !errors.Is(err, ErrName) {
			t.Errorf("MkdirAll(%q): %v, want ErrName", name, err)
		}
		if err := d.WriteFile(name, nil, 0o600); !errors.Is(err, ErrName) {
			t.Errorf("WriteFile(%q): %v, want ErrName", name, err)
		}
		if err := d.RemoveAll(name); !errors.Is(err, ErrName) {
			t.Errorf("RemoveAll(%q): %v, want ErrName", name, err)
		}
	}
}

func TestOpenRefusesALink(t *testing.T) {
	v := newVictim(t)
	link := filepath.Join(t.TempDir(), "cache")
	os.Symlink(v.dir, link)
	if d, err := Open(link); !errors.Is(err, ErrNotDir) {
		d.Close()
		t.Fatalf("Open of a link: %v, want ErrNotDir", err)
	}
}

// Every operation refuses a link at any element of its name, and the
// link's target is left as it was.
func TestNoOperationFollowsALink(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		v := newVictim(t)
		d, p := openTmp(t)
		os.MkdirAll(filepath.Join(p, "a"), 0o700)
		os.Symlink(v.dir, filepath.Join(p, "a", "l"))
		os.Symlink(v.dir, filepath.Join(p, "top"))
		for _, in := range []string{"top", "a/l"} {
			ops := map[string]error{}
			_, ops["MkdirAll"] = d.MkdirAll(in+"/repository", 0o700)
			_, ops["OpenDir"] = d.OpenDir(in + "/sub")
			_, ops["OpenDir link"] = d.OpenDir(in)
			ops["WriteFile"] = d.WriteFile(in+"/planted", []byte("x"), 0o600)
			ops["Symlink"] = d.Symlink("/elsewhere", in+"/config")
			ops["Remove"] = d.Remove(in + "/config")
			ops["RemoveAll"] = d.RemoveAll(in + "/sub")
			_, ops["Lstat"] = d.Lstat(in + "/config")
			_, ops["Readlink"] = d.Readlink(in + "/config")
			_, ops["ReadDir"] = d.ReadDir(in)
			ops["Walk"] = d.Walk(in, func(string, Info) error { return nil })
			ops["Mkdir"] = d.Mkdir(in+"/new", 0o700)
			for op, err := range ops {
				if !errors.Is(err, ErrNotDir) {
					t.Errorf("%s through %s: %v, want ErrNotDir", op, in, err)
				}
			}
		}
		v.check(t)
	})
}

// MakeDir replaces a link or a file standing where its directory belongs;
// the link's target is not touched.
func TestMakeDirReplacesALink(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		v := newVictim(t)
		d, p := openTmp(t)
		os.Symlink(v.dir, filepath.Join(p, "m2"))
		os.WriteFile(filepath.Join(p, "cargo"), []byte("a file"), 0o600)
		for _, name := range []string{"m2/repository", "cargo", "m2/repository"} {
			sub, err := d.MakeDir(name, 0o700)
			if err != nil {
				t.Fatalf("MakeDir(%s): %v", name, err)
			}
			sub.Close()
			fi, err := os.Lstat(filepath.Join(p, name))
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v %v, want a 0700 directory", name, fi, err)
			}
		}
		if fi, _ := os.Lstat(filepath.Join(p, "m2")); !fi.IsDir() {
			t.Errorf("m2 is %v, want a directory", fi.Mode())
		}
		v.check(t)
	})
}

// RemoveAll removes a link as an entry, read-only directories and
// unreadable ones, and nothing a link points at.
func TestRemoveAllRemovesLinksNotTargets(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		v := newVictim(t)
		d, p := openTmp(t)
		mod := filepath.Join(p, "go-mod", "x@v1")
		os.MkdirAll(filepath.Join(mod, "sub"), 0o755)
		os.WriteFile(filepath.Join(mod, "sub", "f.go"), []byte("package f"), 0o444)
		os.Symlink(v.dir, filepath.Join(mod, "link"))
		os.Symlink(filepath.Join(v.dir, "config"), filepath.Join(mod, "sub", "filelink"))
		os.MkdirAll(filepath.Join(mod, "closed", "in"), 0o755)
		os.Chmod(filepath.Join(mod, "closed"), 0)
		os.Chmod(filepath.Join(mod, "sub"), 0o555)
		os.Chmod(mod, 0o555)
		if err := d.RemoveAll("go-mod/x@v1"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(mod); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the module is still there: %v", err)
		}
		if err := d.RemoveAll("go-mod/absent"); err != nil {
			t.Errorf("RemoveAll of nothing: %v", err)
		}
		os.Symlink(v.dir, filepath.Join(p, "l"))
		if err := d.RemoveAll("l"); err != nil {
			t.Errorf("RemoveAll of a link: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(p, "l")); err == nil {
			t.Error("the link is still there")
		}
		v.check(t)
	})
}

// Walk describes links as links and never enters them.
func TestWalkDoesNotEnterLinks(t *testing.T) {
	v := newVictim(t)
	d, p := openTmp(t)
	os.MkdirAll(filepath.Join(p, "a", "b"), 0o700)
	os.WriteFile(filepath.Join(p, "a", "b", "f"), []byte("12345"), 0o600)
	os.Symlink(v.dir, filepath.Join(p, "a", "l"))
	var seen []string
	err := d.Walk(".", func(name string, info Info) error {
		seen = append(seen, fmt.Sprintf("%s %v %d", name, info.Mode.Type(), info.Size))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a d--------- " + fmt.Sprint(sizeOf(t, filepath.Join(p, "a"))), "a/b d--------- " + fmt.Sprint(sizeOf(t, filepath.Join(p, "a", "b"))), "a/b/f ---------- 5", "a/l L--------- " + fmt.Sprint(len(v.dir))}
	if !slices.Equal(seen, want) {
		t.Errorf("walk saw\n%q\nwant\n%q", seen, want)
	}
}

func sizeOf(t *testing.T, p string) int64 {
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A command racing the host, re-pointing a directory at the victim as
// fast as it can while the host makes, walks and removes below it, never
// gets anything done in the victim.
func TestRacingALinkInNeverReachesTheTarget(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		v := newVictim(t)
		d, p := openTmp(t)
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, tmp := filepath.Join(p, "a"), filepath.Join(p, "a.tmp")
			for !stop.Load() {
				os.RemoveAll(a)
				os.Symlink(v.dir, tmp)
				os.Rename(tmp, a) // a is a link to the victim
				os.Remove(a)
				os.MkdirAll(filepath.Join(a, "sub"), 0o700) // a is a directory again
			}
		}()
		for i := range 500 {
			if sub, err := d.MakeDir("a/repository", 0o700); err == nil {
				sub.Close()
			}
			if sub, err := d.MkdirAll("a/sub/x", 0o700); err == nil {
				sub.Close()
			}
			d.WriteFile(fmt.Sprintf("a/planted%d", i), []byte("x"), 0o600)
			d.Symlink("/elsewhere", "a/config")
			d.Remove("a/config")
			d.RemoveAll("a/sub")
			d.Walk("a", func(string, Info) error { return nil })
		}
		stop.Store(true)
		wg.Wait()
		v.check(t)
	})
}
