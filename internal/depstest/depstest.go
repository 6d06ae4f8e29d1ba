// Package depstest keeps a small program's import graph to an allowlist:
// the programs that start on every command or tool call (gatehouse-init,
// gatehouse-hook) pay for each package they link.
package depstest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Heavy are the standard-library packages no small program may link:
// net/http's initialisation and the first run of its code cost a short
// program's start about 1.5 ms here, and the admission API's client
// (service/localapi) reads the service's answers without it.
var Heavy = []string{"net/http"}

// Check fails t for every package outside the standard library that the
// package in the current directory (the program named name) links, for
// linux, darwin and windows, unless it is in allowed; and for every
// package of Heavy it links.
//
// The standard library is every package whose first path element has no
// dot. That rule includes the standard library's own vendored copies
// (vendor/golang.org/x/net/dns/dnsmessage and the like, in
// GOROOT/src/vendor): they come with the toolchain as parts of std
// packages (net, crypto), are not chosen by this module and change with Go
// releases, so they are allowed by rule rather than listed. A dependency of
// this module named golang.org/x/... without the vendor/ prefix is a
// module dependency and must be on the list.
func Check(t *testing.T, name string, allowed []string) {
	t.Helper()
	// go test puts its own go command first in PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(gobin, "list", "-deps", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v", goos, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			if slices.Contains(Heavy, pkg) {
				t.Errorf("GOOS=%s: %s links %s, which a small program may not (depstest.Heavy)", goos, name, pkg)
			}
			first, _, _ := strings.Cut(pkg, "/")
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			if !slices.Contains(allowed, pkg) {
				t.Errorf("GOOS=%s: %s links %s, which is not on its allowlist (deps_test.go)", goos, name, pkg)
			}
		}
	}
}
