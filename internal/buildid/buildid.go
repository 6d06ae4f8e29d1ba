// Package buildid names the build a Gatehouse binary comes from. The
// gatehouse binary and its sandbox init (app/gatehouse-init) are installed
// side by side and speak a private protocol (sandbox/sandboxinit); the init
// refuses a plan from a gatehouse of another build, so the two never run
// mismatched.
//
// make build sets the id with
//
//	-ldflags "-X github.com/gatehouse-dev/gatehouse/internal/buildid.id=ID"
//
// to a value computed from the source tree (.ci/build-id.sh: git describe
// plus a hash of every file in the tree), so the two binaries of one make
// build match and binaries built from different sources do not. Without it
// (a plain go build or go install) the id falls back to what the Go
// toolchain stamps: the VCS revision, with "-dirty" for a modified tree,
// or "devel" when there is none (go run, test binaries). The fallback
// cannot tell two different modified trees of one revision apart; make
// build can.
package buildid

import (
	"runtime/debug"
	"sync"
)

// id is set by the linker (-X); see the package comment.
var id string

var fallback = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "vcs-" + rev
})

// ID returns this binary's build id.
func ID() string {
	if id != "" {
		return id
	}
	return fallback()
}
