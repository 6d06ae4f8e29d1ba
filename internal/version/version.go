// Package version says which release a Gatehouse binary is: its version,
// the commit it was built from and when it was built.
//
// make build and make package set all three with
//
//	-ldflags "-X github.com/gatehouse-dev/gatehouse/internal/version.version=V
//	          -X github.com/gatehouse-dev/gatehouse/internal/version.commit=C
//	          -X github.com/gatehouse-dev/gatehouse/internal/version.date=D"
//
// from git (.ci/version.sh). Without them (go build, go install, go run)
// the Go toolchain's stamp stands in: the module version when installed as
// a module, else "devel", and the VCS revision and commit time when the
// build had them. The build id (internal/buildid) is another thing: it
// pairs gatehouse with its sandbox init, and changes with every edit.
package version

import (
	"runtime/debug"
	"sync"
)

// Set by the linker (-X); see the package comment.
var version, commit, date string

// Info is one binary's version.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
}

// Get returns this binary's version; a part nothing recorded is
// "unknown" (the version "devel").
func Get() Info {
	i := Info{Version: version, Commit: commit, Date: date}
	fb := fallback()
	if i.Version == "" {
		i.Version = fb.Version
	}
	if i.Commit == "" {
		i.Commit = fb.Commit
	}
	if i.Date == "" {
		i.Date = fb.Date
	}
	return i
}

var fallback = sync.OnceValue(func() Info {
	i := Info{Version: "devel", Commit: "unknown", Date: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return i
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		i.Version = v
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.Date = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && i.Commit != "unknown" {
		i.Commit += "-dirty"
	}
	return i
})

// String is the one line 'gatehouse version' prints.
func (i Info) String() string {
	return "gatehouse " + i.Version + " (commit " + i.Commit + ", built " + i.Date + ")"
}
