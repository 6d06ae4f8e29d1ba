package policy

import (
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
)

// UserDataDirs are where user data lives besides the home directory: every
// user's home directory, root's, and mounted media. The workspace read
// posture hides them with the home directory.
var UserDataDirs = []string{"/home", "/root", "/mnt", "/media"}

// ReadHidden returns what the workspace read posture hides: the home
// directory and UserDataDirs, symlinks resolved, existing directories
// only, parents first.
func ReadHidden(home string) []string {
	var out []string
	for _, d := range append([]string{home}, UserDataDirs...) {
		if d == "" {
			continue
		}
		real := filepath.FromSlash(fspath.Resolve(filepath.ToSlash(d)))
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() || real == "/" || slices.Contains(out, real) {
			continue
		}
		out = append(out, real)
	}
	sort.Strings(out)
	return out
}

// ReadSet describes what commands may read under the configuration, for
// doctor and config show.
type ReadSet struct {
	// Posture is ReadHost or ReadWorkspace.
	Posture string `json:"posture"`
	// Hidden are the directories the workspace posture empties, and
	// Readable what of them commands still read (workspace roots, then
	// read_allow); both empty under host.
	Hidden   []string `json:"hidden,omitempty"`
	Readable []string `json:"readable,omitempty"`
	// DenyRead are the configured additions to the mandatory deny-read
	// set, which holds under either posture.
	DenyRead []string `json:"deny_read"`
}

// ReadSet returns what commands may read, home being the home directory.
// The agent's tool cache is readable too; the executor knows where.
func (c *Config) ReadSet(home string) ReadSet {
	rs := ReadSet{Posture: c.Exec.Sandbox.Read, DenyRead: slices.Clone(c.Exec.Sandbox.DenyRead)}
	if rs.Posture == "" {
		rs.Posture = ReadHost
	}
	if rs.Posture == ReadWorkspace {
		rs.Hidden = ReadHidden(home)
		rs.Readable = append(c.WorkspaceRootsEffective(), c.Exec.Sandbox.ReadAllow...)
	}
	return rs
}
