package toolcache

// Every agent's commands write their own directory below Root, and may
// replace anything in it with a link while the host measures or trims:
// the survey walks through descriptors and removes by name below Root,
// never following a link (nofollow), so a unit can only be something in
// the caches, removed as an entry.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/nofollow"
)

// stampName is the file in Root whose modification time is the last time
// the caches were measured (Trim).
const stampName = ".trimmed"

// TrimEvery is how often MaybeTrim measures the caches: walking a large
// cache costs tens of milliseconds, so not after every execution.
const TrimEvery = 10 * time.Minute

// A unit is what trimming removes as a whole: a file, or an extracted Go
// module (its files are useless one by one). Its path is relative to the
// root, slash-separated.
type unit struct {
	path string
	size int64
	used time.Time
	dir  bool
}

// openRoot opens dir without following a link at its last element; nil
// and no error when it does not exist.
func openRoot(dir string) (*nofollow.Dir, error) {
	d, err := nofollow.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return d, err
}

// Size returns the bytes the files below dir take (0 when it is absent).
// Links are not followed.
func Size(dir string) (int64, error) {
	d, err := openRoot(dir)
	if d == nil {
		return 0, err
	}
	defer d.Close()
	return sizeOf(d)
}

func sizeOf(d *nofollow.Dir) (int64, error) {
	var n int64
	err := d.Walk(".", func(_ string, info nofollow.Info) error {
		if info.Mode.IsRegular() {
			n += info.Size
		}
		return nil
	})
	return n, err
}

// MaybeTrim runs Trim when the caches below root were last measured more
// than TrimEvery ago (or never), and reports whether it did.
func MaybeTrim(root string, max int64, now time.Time) (bool, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return false, err
	}
	d, err := nofollow.Open(root)
	if err != nil {
		return false, err
	}
	defer d.Close()
	if fi, err := d.Lstat(stampName); err == nil && now.Sub(fi.ModTime) < TrimEvery {
		return false, nil
	}
	if err := d.Remove(stampName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := d.WriteFile(stampName, nil, 0o600); errors.Is(err, fs.ErrExist) {
		return false, nil // another execution's trim took it
	} else if err != nil {
		return false, err
	}
	d.Chtimes(stampName, now, now)
	_, err = trim(d, max)
	return true, err
}

// Trim removes the least recently used files (and extracted Go modules)
// below root, across every agent's cache, until they take at most max
// bytes; it returns the bytes freed. A file's use is the later of its
// access and modification times; Go touches the build cache entries it
// uses.
func Trim(root string, max int64) (int64, error) {
	d, err := openRoot(root)
	if d == nil {
		return 0, err
	}
	defer d.Close()
	return trim(d, max)
}

// testOnlyAfterSurvey, when set, runs between the survey and the
// removals: a test plants its links there.
var testOnlyAfterSurvey func()

func trim(root *nofollow.Dir, max int64) (int64, error) {
	units, total, err := survey(root)
	if err != nil || total <= max {
		return 0, err
	}
	if testOnlyAfterSurvey != nil {
		testOnlyAfterSurvey()
	}
	sort.Slice(units, func(i, j int) bool { return units[i].used.Before(units[j].used) })
	var freed int64
	for _, u := range units {
		if total-freed <= max {
			break
		}
		if err := remove(root, u); err == nil {
			freed += u.size
		}
	}
	return freed, nil
}

// survey lists the units below root and their total size.
func survey(root *nofollow.Dir) ([]unit, int64, error) {
	var units []unit
	var total int64
	var mod *unit // the extracted module being walked
	err := root.Walk(".", func(p string, info nofollow.Info) error {
		if mod != nil && !strings.HasPrefix(p, mod.path+"/") {
			units = append(units, *mod)
			mod = nil
		}
		if info.IsDir() {
			if mod == nil && moduleDir(p) {
				mod = &unit{path: p, used: info.ModTime, dir: true}
			}
			return nil
		}
		if !info.Mode.IsRegular() || p == stampName {
			return nil
		}
		total += info.Size
		if mod != nil {
			mod.size += info.Size
			return nil
		}
		units = append(units, unit{path: p, size: info.Size, used: lastUse(info)})
		return nil
	})
	if mod != nil {
		units = append(units, *mod)
	}
	return units, total, err
}

// moduleDir reports whether p (relative to the root) is an extracted
// module in an agent's Go module cache: AGENT/go-mod/…/path@version, not
// in its download cache.
func moduleDir(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) >= 3 && parts[1] == "go-mod" && parts[2] != "cache" && strings.Contains(parts[len(parts)-1], "@")
}

// remove deletes a unit by its name below root, following no link: what
// stands at that name now, if the command replaced it, and nothing
// elsewhere. Go makes its extracted modules read-only, so directories are
// made writable first.
func remove(root *nofollow.Dir, u unit) error {
	if !u.dir {
		return root.Remove(u.path)
	}
	return root.RemoveAll(u.path)
}

// lastUse is the later of info's access and modification times.
func lastUse(info nofollow.Info) time.Time {
	if info.AccessTime.After(info.ModTime) {
		return info.AccessTime
	}
	return info.ModTime
}

// RemoveAll is os.RemoveAll for trees with read-only directories (Go's
// module cache): it makes each directory writable by its owner first. It
// follows no link below p's parent.
func RemoveAll(p string) error {
	d, err := openRoot(filepath.Dir(p))
	if d == nil {
		return err
	}
	defer d.Close()
	return d.RemoveAll(filepath.Base(p))
}

// Agents returns the agents' directory names below root, sorted. A link
// is not an agent's directory.
func Agents(root string) ([]string, error) {
	d, err := openRoot(root)
	if d == nil {
		return nil, err
	}
	defer d.Close()
	return agentsIn(d)
}

func agentsIn(d *nofollow.Dir) ([]string, error) {
	entries, err := d.ReadDir(".")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name)
		}
	}
	return out, err
}

// Clean removes agent's cache below root, or every agent's when agent is
// empty, and returns the bytes it freed.
func Clean(root, agent string) (int64, error) {
	d, err := openRoot(root)
	if d == nil {
		return 0, err
	}
	defer d.Close()
	var names []string
	if agent != "" {
		names = []string{dirName(agent)}
	} else if names, err = agentsIn(d); err != nil {
		return 0, err
	}
	var freed int64
	for _, n := range names {
		var size int64
		if sub, err := d.OpenDir(n); err == nil {
			size, _ = sizeOf(sub)
			sub.Close()
		}
		if err := d.RemoveAll(n); err != nil {
			return freed, err
		}
		freed += size
	}
	return freed, nil
}
