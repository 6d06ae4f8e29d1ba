package toolcache

import (
	"errors"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// stampName is the file in Root whose modification time is the last time
// the caches were measured (Trim).
const stampName = ".trimmed"

// TrimEvery is how often MaybeTrim measures the caches: walking a large
// cache costs tens of milliseconds, so not after every execution.
const TrimEvery = 10 * time.Minute

// A unit is what trimming removes as a whole: a file, or an extracted Go
// module (its files are useless one by one).
type unit struct {
	path string
	size int64
	used time.Time
	dir  bool
}

// Size returns the bytes the files below dir take (0 when it is absent).
func Size(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

// MaybeTrim runs Trim when the caches below root were last measured more
// than TrimEvery ago (or never), and reports whether it did.
func MaybeTrim(root string, max int64, now time.Time) (bool, error) {
	stamp := filepath.Join(root, stampName)
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < TrimEvery {
		return false, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return false, err
	}
	if err := os.WriteFile(stamp, nil, 0o600); err != nil {
		return false, err
	}
	os.Chtimes(stamp, now, now)
	_, err := Trim(root, max)
	return true, err
}

// Trim removes the least recently used files (and extracted Go modules)
// below root, across every agent's cache, until they take at most max
// bytes; it returns the bytes freed. A file's use is the later of its
// access and modification times; Go touches the build cache entries it
// uses.
func Trim(root string, max int64) (int64, error) {
	units, total, err := survey(root)
	if err != nil || total <= max {
		return 0, err
	}
	sort.Slice(units, func(i, j int) bool { return units[i].used.Before(units[j].used) })
	var freed int64
	for _, u := range units {
		if total-freed <= max {
			break
		}
		if err := remove(u.path, u.dir); err == nil {
			freed += u.size
		}
	}
	return freed, nil
}

// survey lists the units below root and their total size.
func survey(root string) ([]unit, int64, error) {
	var units []unit
	var total int64
	var mod *unit // the extracted module being walked
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if mod != nil && !sandbox.Within(p, mod.path) {
			units = append(units, *mod)
			mod = nil
		}
		if d.IsDir() {
			if mod == nil && moduleDir(root, p) {
				fi, err := d.Info()
				if err != nil {
					return nil
				}
				mod = &unit{path: p, used: fi.ModTime(), dir: true}
			}
			return nil
		}
		if !d.Type().IsRegular() || (filepath.Dir(p) == root && d.Name() == stampName) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		total += fi.Size()
		if mod != nil {
			mod.size += fi.Size()
			return nil
		}
		units = append(units, unit{path: p, size: fi.Size(), used: lastUse(fi)})
		return nil
	})
	if mod != nil {
		units = append(units, *mod)
	}
	return units, total, err
}

// moduleDir reports whether p is an extracted module in an agent's Go
// module cache: ROOT/AGENT/go-mod/…/path@version, not in its download
// cache.
func moduleDir(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	return len(parts) >= 3 && parts[1] == "go-mod" && parts[2] != "cache" && strings.Contains(parts[len(parts)-1], "@")
}

// remove deletes a unit. Go makes its extracted modules read-only, so
// directories are made writable first.
func remove(p string, dir bool) error {
	if !dir {
		return os.Remove(p)
	}
	return RemoveAll(p)
}

// lastUse is the later of fi's access and modification times.
func lastUse(fi fs.FileInfo) time.Time {
	if a, ok := atime(fi); ok && a.After(fi.ModTime()) {
		return a
	}
	return fi.ModTime()
}

// RemoveAll is os.RemoveAll for trees with read-only directories (Go's
// module cache): it makes each directory writable by its owner first.
func RemoveAll(p string) error {
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o700 != 0o700 {
				os.Chmod(q, fi.Mode().Perm()|0o700)
			}
		}
		return nil
	})
	return os.RemoveAll(p)
}

// Agents returns the agents' directory names below root, sorted.
func Agents(root string) ([]string, error) {
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out, err
}

// Clean removes agent's cache below root, or every agent's when agent is
// empty, and returns the bytes it freed.
func Clean(root, agent string) (int64, error) {
	var dirs []string
	if agent != "" {
		dirs = []string{For(root, agent).Dir}
	} else {
		names, err := Agents(root)
		if err != nil {
			return 0, err
		}
		for _, n := range names {
			dirs = append(dirs, filepath.Join(root, n))
		}
	}
	var freed int64
	for _, d := range dirs {
		n, _ := Size(d)
		if err := RemoveAll(d); err != nil {
			return freed, err
		}
		freed += n
	}
	return freed, nil
}
