// Package program names the gatehouse program a person runs: the path that
// hooks, service units and relays name.
package program

import (
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

// Path is this program's absolute path, symbolic links resolved; for the
// full program (Core) with the front program beside it, the front's: a
// hook or a unit names what people run, which starts faster and hands
// the rest here.
func Path() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	if filepath.Base(exe) == Core {
		front := filepath.Join(filepath.Dir(exe), Front)
		if fi, err := os.Stat(front); err == nil && fi.Mode().IsRegular() {
			return front, nil
		}
	}
	return exe, nil
}
