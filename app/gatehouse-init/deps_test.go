package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// allowed are the only packages outside the standard library the init may
// link: it starts once per command, inside every sandbox, and each package
// costs start-up time (initialisers, page faults) and attack surface in a
// process that runs outside the seccomp filter. Grow this list only with a
// reason that belongs in the commit message.
var allowed = []string{
	"github.com/gatehouse-dev/gatehouse/app/gatehouse-init",
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit", // the stages
	"github.com/gatehouse-dev/gatehouse/sandbox/seccomp",     // the filter program
	"github.com/gatehouse-dev/gatehouse/sandbox/handoff",     // the bridge's byte, shared with the egress proxy
	"github.com/gatehouse-dev/gatehouse/internal/buildid",    // the build id the init checks
	"golang.org/x/sys/unix",
	"golang.org/x/net/bpf", // the seccomp package assembles its filter with it
}

// TestDependencies keeps the init's import graph to the standard library
// and the allowlist, for each system it is built for.
//
// The standard library is every package whose first path element has no
// dot. That rule includes the standard library's own vendored copies
// (vendor/golang.org/x/net/dns/dnsmessage and the like, in GOROOT/src/vendor):
// they come with the toolchain as parts of std packages (net, crypto), are
// not chosen by this module and change with Go releases, so they are
// allowed by rule rather than listed. A dependency of this module named
// golang.org/x/... without the vendor/ prefix is a module dependency and
// must be on the list.
func TestDependencies(t *testing.T) {
	// go test puts its own go command first in PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(gobin, "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v", goos, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			first, _, _ := strings.Cut(pkg, "/")
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			if !slices.Contains(allowed, pkg) {
				t.Errorf("GOOS=%s: gatehouse-init links %s, which is not on its allowlist (deps_test.go)", goos, pkg)
			}
		}
	}
}
