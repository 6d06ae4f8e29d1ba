package claude

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// DropInMinVersion is the first Claude Code that reads managed-settings.d
// (2.1.83): the *.json files there are merged, in name order, over
// managed-settings.json (arrays concatenated without duplicates, objects
// merged, the later scalar winning).
const DropInMinVersion = "2.1.83"

// DropInName is Gatehouse's file in managed-settings.d. It sorts late, so
// its scalars (the sandbox on, managed hooks only) win over earlier
// fragments'.
const DropInName = "90-gatehouse.json"

// DropInPath returns Gatehouse's drop-in beside the managed settings file
// managed.
func DropInPath(managed string) string {
	return filepath.Join(filepath.Dir(managed), "managed-settings.d", DropInName)
}

// ParseVersion reads the version `claude --version` prints
// ("2.1.332 (Claude Code)") as its numbers.
func ParseVersion(out string) ([]int, error) {
	f := strings.Fields(out)
	if len(f) == 0 {
		return nil, fmt.Errorf("no version in %q", out)
	}
	var v []int
	for _, p := range strings.Split(f[0], ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a version like 2.1.83", f[0])
		}
		v = append(v, n)
	}
	return v, nil
}

// ReadsDropIns reports whether the Claude Code version v reads
// managed-settings.d.
func ReadsDropIns(v []int) bool {
	min, _ := ParseVersion(DropInMinVersion)
	for i := range min {
		got := 0
		if i < len(v) {
			got = v[i]
		}
		if got != min[i] {
			return got > min[i]
		}
	}
	return true
}
