//go:build !linux && !darwin

package bwrap

import (
	"errors"
	"io/fs"
)

// Only Linux and macOS run sandboxes (run_linux.go, sandbox/seatbelt):
// elsewhere nothing is reached into a workspace, and the sweep finds
// nothing to do.

type dirFD int

var errNotBeneath = errors.ErrUnsupported

type fileStat struct {
	mode     fs.FileMode
	size     int64
	mtime    int64
	dev, ino uint64
}

func (s fileStat) isDir() bool     { return s.mode.IsDir() }
func (s fileStat) isLink() bool    { return s.mode&fs.ModeSymlink != 0 }
func (s fileStat) isRegular() bool { return s.mode.IsRegular() }

type dirent struct {
	name string
	typ  fs.FileMode
}

func openRootDir(string) (dirFD, error)                 { return -1, errors.ErrUnsupported }
func (d dirFD) close()                                  {}
func openDirAt(dirFD, string) (dirFD, error)            { return -1, errors.ErrUnsupported }
func openBeneath(dirFD, string) (dirFD, error)          { return -1, errors.ErrUnsupported }
func dupDir(dirFD) (dirFD, error)                       { return -1, errors.ErrUnsupported }
func validName(string) bool                             { return false }
func statAt(dirFD, string) (fileStat, error)            { return fileStat{}, errors.ErrUnsupported }
func statDir(dirFD) (fileStat, error)                   { return fileStat{}, errors.ErrUnsupported }
func readAt(dirFD, string, int64) ([]byte, error)       { return nil, errors.ErrUnsupported }
func readlinkAt(dirFD, string) (string, error)          { return "", errors.ErrUnsupported }
func renameAside(dirFD, string, string) (string, error) { return "", errors.ErrUnsupported }
func readNames(dirFD, []byte) ([]dirent, error)         { return nil, errors.ErrUnsupported }
