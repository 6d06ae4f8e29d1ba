package probe

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Gather collects the facts about this host. bwrapPath names the bubblewrap
// binary; empty means look up "bwrap" in PATH. On Linux it runs
// `bwrap --version` (bounded by a short timeout); elsewhere it only looks at
// files. It never fails: what it cannot learn is left zero and explained in
// the Facts.
func Gather(bwrapPath string) Facts {
	f := Facts{GOOS: runtime.GOOS, Uid: os.Getuid()}
	gatherOS(&f, bwrapPath)
	return f
}

// parseSysctl parses the contents of a /proc/sys file holding one integer.
func parseSysctl(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return nil
	}
	return &n
}
