package main

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/depstest"
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
func TestDependencies(t *testing.T) {
	depstest.Check(t, "gatehouse-init", allowed)
}
