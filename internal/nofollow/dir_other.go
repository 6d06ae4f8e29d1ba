//go:build !unix

package nofollow

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"time"
)

// A Dir is an open directory: an os.Root, whose links are followed only
// within it. No sandbox that binds paths runs on these systems.
type Dir struct {
	r *os.Root
}

// Open opens the directory path, which must not be a link.
func Open(p string) (*Dir, error) {
	if fi, err := os.Lstat(p); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: ErrNotDir}
	}
	r, err := os.OpenRoot(p)
	if err != nil {
		return nil, err
	}
	return &Dir{r: r}, nil
}

// Name returns the path d was opened with.
func (d *Dir) Name() string { return d.r.Name() }

// Close closes d.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	return d.r.Close()
}

func (d *Dir) check(op, name string) error {
	if name == "." {
		return nil
	}
	if _, err := split(name); err != nil {
		return &fs.PathError{Op: op, Path: join(d.Name(), name), Err: err}
	}
	return nil
}

// OpenDir opens the directory name below d.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if err := d.check("open", name); err != nil {
		return nil, err
	}
	if fi, err := d.r.Lstat(name); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: join(d.Name(), name), Err: ErrNotDir}
	}
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &Dir{r: r}, nil
}

// Mkdir makes the directory name, which must not exist.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	if err := d.check("mkdir", name); err != nil {
		return err
	}
	return d.r.Mkdir(name, perm)
}

// MkdirAll makes the directory name and its parents and returns it open.
func (d *Dir) MkdirAll(name string, perm fs.FileMode) (*Dir, error) {
	if err := d.check("mkdir", name); err != nil {
		return nil, err
	}
	if err := d.r.MkdirAll(name, perm); err != nil {
		return nil, err
	}
	return d.OpenDir(name)
}

// MakeDir is MkdirAll that replaces an element that is not a directory.
func (d *Dir) MakeDir(name string, perm fs.FileMode) (*Dir, error) {
	parts, err := split(name)
	if err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: join(d.Name(), name), Err: err}
	}
	for i := range parts {
		p := path.Join(parts[:i+1]...)
		if fi, err := d.r.Lstat(p); err == nil && !fi.IsDir() {
			if err := d.r.Remove(p); err != nil {
				return nil, err
			}
		}
	}
	return d.MkdirAll(name, perm)
}

// Stat describes d itself.
func (d *Dir) Stat() (Info, error) {
	fi, err := d.r.Stat(".")
	if err != nil {
		return Info{}, err
	}
	return infoOf(fi), nil
}

// Lstat describes the entry name.
func (d *Dir) Lstat(name string) (Info, error) {
	if err := d.check("lstat", name); err != nil {
		return Info{}, err
	}
	fi, err := d.r.Lstat(name)
	if err != nil {
		return Info{}, err
	}
	return infoOf(fi), nil
}

// Readlink returns the target of the link name.
func (d *Dir) Readlink(name string) (string, error) {
	if err := d.check("readlink", name); err != nil {
		return "", err
	}
	return d.r.Readlink(name)
}

// Symlink makes name a link to target.
func (d *Dir) Symlink(target, name string) error {
	if err := d.check("symlink", name); err != nil {
		return err
	}
	return d.r.Symlink(target, name)
}

// WriteFile makes the file name, which must not exist.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := d.check("open", name); err != nil {
		return err
	}
	f, err := d.r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove removes the entry name.
func (d *Dir) Remove(name string) error {
	if err := d.check("remove", name); err != nil {
		return err
	}
	return d.r.Remove(name)
}

// RemoveAll removes name and everything below it.
func (d *Dir) RemoveAll(name string) error {
	if err := d.check("removeall", name); err != nil {
		return err
	}
	fs.WalkDir(d.r.FS(), name, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			if fi, err := e.Info(); err == nil && fi.Mode().Perm()&0o200 == 0 {
				d.r.Chmod(p, fi.Mode().Perm()|0o700)
			}
		}
		return nil
	})
	err := d.r.RemoveAll(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// ReadDir describes the entries of the directory name, sorted by name.
func (d *Dir) ReadDir(name string) ([]Info, error) {
	if err := d.check("readdir", name); err != nil {
		return nil, err
	}
	des, err := fs.ReadDir(d.r.FS(), name)
	var out []Info
	for _, de := range des {
		if fi, err := de.Info(); err == nil {
			out = append(out, infoOf(fi))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Walk calls fn for every entry below the directory name, parents first.
func (d *Dir) Walk(name string, fn WalkFunc) error {
	if err := d.check("walk", name); err != nil {
		return err
	}
	return fs.WalkDir(d.r.FS(), name, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == name {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		return fn(p, infoOf(fi))
	})
}

func infoOf(fi fs.FileInfo) Info {
	return Info{Name: fi.Name(), Mode: fi.Mode(), Size: fi.Size(), ModTime: fi.ModTime(), AccessTime: fi.ModTime(), Uid: -1}
}

// Chtimes sets the access and modification times of the entry name.
func (d *Dir) Chtimes(name string, atime, mtime time.Time) error {
	if err := d.check("chtimes", name); err != nil {
		return err
	}
	return d.r.Chtimes(name, atime, mtime)
}
