package main

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/depstest"
)

// gatehouse starts on every gatehouse exec an agent or a script runs: it
// links what gatehouse-hook links (the hooks, the relay, the wire types,
// the socket's client), exec's face and the service call, and nothing of the
// configuration, the audit store, the keychain or the OS service manager,
// which gatehouse-core links. A package outside this list (the standard
// library aside) is a start-up cost on every call; add it only with the
// measurement that says it is cheap.
var allowed = []string{
	"github.com/gatehouse-dev/gatehouse/app/gatehouse",
	"github.com/gatehouse-dev/gatehouse/app/cli/execface",
	"github.com/gatehouse-dev/gatehouse/hook/claude",
	"github.com/gatehouse-dev/gatehouse/hook/codex",
	"github.com/gatehouse-dev/gatehouse/hook/cursor",
	"github.com/gatehouse-dev/gatehouse/hook/decide",
	"github.com/gatehouse-dev/gatehouse/hook/gemini",
	"github.com/gatehouse-dev/gatehouse/hook/hookcmd",
	"github.com/gatehouse-dev/gatehouse/hook/hookjson",
	"github.com/gatehouse-dev/gatehouse/hook/relay",
	"github.com/gatehouse-dev/gatehouse/internal/fspath",
	"github.com/gatehouse-dev/gatehouse/internal/jsonobj",
	"github.com/gatehouse-dev/gatehouse/internal/program",
	"github.com/gatehouse-dev/gatehouse/internal/scale",
	"github.com/gatehouse-dev/gatehouse/sandbox",
	"github.com/gatehouse-dev/gatehouse/service/api",
	"github.com/gatehouse-dev/gatehouse/service/dirs",
	"github.com/gatehouse-dev/gatehouse/service/localapi",
	"github.com/gatehouse-dev/gatehouse/service/socket",
	"github.com/gatehouse-dev/gatehouse/service/svccall",
	"github.com/gatehouse-dev/gatehouse/service/termesc",
	"github.com/gatehouse-dev/gatehouse/service/waitline",
	// term says whether stderr is a terminal (a person there may be
	// asked: the full program takes the call); x/sys only.
	"golang.org/x/term",
	"golang.org/x/sys/unix",
	"golang.org/x/sys/windows",
}

func TestDependencyAllowlist(t *testing.T) {
	depstest.Check(t, "gatehouse", allowed)
}
