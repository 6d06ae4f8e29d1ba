package analysis

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/depstest"
)

// TestDependencies keeps the analysis to mvdan.cc/sh and the standard
// library (docs/layout.md), plus internal/fspath, the one path check it
// shares with the sandbox (itself standard library only): the sandbox
// package links golang.org/x/sys, which the analysis has no use for.
func TestDependencies(t *testing.T) {
	depstest.Check(t, "service/analysis", []string{
		"github.com/gatehouse-dev/gatehouse/service/analysis",
		"github.com/gatehouse-dev/gatehouse/internal/fspath",
		"mvdan.cc/sh/v3/syntax",
		"mvdan.cc/sh/v3/fileutil",
		"mvdan.cc/sh/v3/expand",
		"mvdan.cc/sh/v3/pattern",
		"mvdan.cc/sh/v3/internal",
	})
}
