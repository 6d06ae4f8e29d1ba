package main

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/depstest"
)

// gatehouse-hook starts on every tool call Claude Code makes: it links the
// hook's input and output, the wire types, the socket's client and the
// relay, and nothing of the configuration, the audit store, the keychain
// or the OS service manager. A package outside this list (the standard
// library aside) is a start-up cost on every call; add it only with the
// measurement that says it is cheap.
var allowed = append([]string{"github.com/gatehouse-dev/gatehouse/app/gatehouse-hook"}, depstest.HookClient...)

func TestDependencyAllowlist(t *testing.T) {
	depstest.Check(t, "gatehouse-hook", allowed)
}
