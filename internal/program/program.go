// Package program names the gatehouse program a person runs: the path that
// hooks, service units and relays name.
package program

import (
	"fmt"
	"os"
	"path/filepath"
)

// Front and Core are the two programs of a gatehouse installation, side
// by side: the front program people run, and the full program it hands
// most command lines to.
const (
	Front = "gatehouse"
	Core  = "gatehouse-core"
)

// Executable is this program's absolute path, symbolic links resolved.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// Beside returns the program name in the directory of exe, or an error
// when there is no regular file of that name.
func Beside(exe, name string) (string, error) {
	p := filepath.Join(filepath.Dir(exe), name)
	fi, err := os.Stat(p)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a file", p)
	}
	return p, err
}

// Path is this program's absolute path, symbolic links resolved; for the
// full program (Core) with the front program beside it, the front's: a
// hook or a unit names what people run, which starts faster and hands
// the rest here.
func Path() (string, error) {
	exe, err := Executable()
	if err != nil {
		return "", err
	}
	if filepath.Base(exe) == Core {
		if front, err := Beside(exe, Front); err == nil {
			return front, nil
		}
	}
	return exe, nil
}
