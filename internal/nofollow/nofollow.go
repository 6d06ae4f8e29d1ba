// Package nofollow makes, opens, walks and removes files below an open
// directory without ever following a symbolic link. Gatehouse uses it for
// every host-side operation on a place a sandboxed command can write (the
// agents' tool caches, the credential directories): a command that
// replaces a directory there with a link to ~/.ssh, even while the host
// is at work, cannot make Gatehouse write, change or remove anything
// outside.
//
// # Rules
//
//   - A Dir is opened once (Open), before the command that could change
//     what is below it runs. The elements of that path before the last are
//     the caller's to trust (the user's cache or runtime directory); the
//     last must be a directory, not a link.
//   - Every name given to a Dir's methods is a slash-separated path below
//     it. An empty, absolute or "."/".." element is refused (ErrName).
//   - No element of a name is followed when it is a symbolic link: an
//     element that is a link, or anything but a directory where a
//     directory must be, is an error that matches ErrNotDir. On Linux the
//     descriptor is opened with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
//     where the kernel has it; elsewhere (and as the fallback) one element
//     at a time with O_NOFOLLOW.
//   - A removal removes the entry itself: a link goes, never what it
//     points at. A new file is made exclusively (O_CREAT|O_EXCL), never
//     written through an existing one.
//
// On systems without a sandbox that binds paths (Windows), Dir is an
// os.Root: links below it are followed, but never out of it.
package nofollow

import (
	"errors"
	"io/fs"
	"runtime"
	"strings"
	"time"
)

var (
	// ErrNotDir: an element of a name that must be a directory is a
	// symbolic link or another kind of file.
	ErrNotDir = errors.New("a symbolic link or other non-directory where a directory belongs")
	// ErrName: a name is empty, absolute, or has an empty, "." or ".."
	// element.
	ErrName = errors.New("not a plain relative path")
)

// Info describes one entry, as lstat sees it (a link is described, not
// followed).
type Info struct {
	// Name is the entry's last element.
	Name string
	// Mode holds the type bits and the permissions.
	Mode fs.FileMode
	Size int64
	// ModTime and AccessTime are the modification and access times.
	ModTime, AccessTime time.Time
	// Uid is the owner's user id (-1 where the system has none).
	Uid int
}

// IsDir reports whether the entry is a directory (not a link to one).
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// A WalkFunc is called by Walk for each entry below the walked directory,
// with its slash-separated path relative to that directory. Returning
// fs.SkipDir from a directory's call skips what is below it; another
// error ends the walk with that error.
type WalkFunc func(name string, info Info) error

// split checks name and returns its elements.
func split(name string) ([]string, error) {
	if name == "" || strings.HasPrefix(name, "/") || runtime.GOOS == "windows" && strings.Contains(name, "\\") {
		return nil, ErrName
	}
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, ErrName
		}
	}
	return parts, nil
}

// join is the display path of name below dir.
func join(dir, name string) string {
	if name == "" {
		return dir
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}
