package main

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/depstest"
)

// gatehouse starts on every gatehouse exec an agent or a script runs: it
// links what gatehouse-hook links (depstest.HookClient), exec's face and
// the service call, and nothing of the configuration, the audit store,
// the keychain or the OS service manager, which gatehouse-core links. A
// package outside this list (the standard library aside) is a start-up
// cost on every call; add it only with the measurement that says it is
// cheap.
var allowed = append([]string{
	"github.com/gatehouse-dev/gatehouse/app/gatehouse",
	"github.com/gatehouse-dev/gatehouse/app/cli/execface",
	"github.com/gatehouse-dev/gatehouse/service/svccall",
	// term says whether stderr is a terminal (a person there may be
	// asked: the full program takes the call); x/sys only.
	"golang.org/x/term",
}, depstest.HookClient...)

func TestDependencyAllowlist(t *testing.T) {
	depstest.Check(t, "gatehouse", allowed)
}
