package pipeline

import (
	"maps"
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest/escape"
)

// TestMain lets the test binary serve as Gatehouse's sandbox init (the
// stages this system has: sandbox-init on Linux, sandbox-exec on Linux and
// macOS) and as the escape probes run inside the sandbox.
func TestMain(m *testing.M) {
	stages := maps.Clone(sandboxinit.Stages)
	stages["escape-probe"] = escape.Main
	sandboxtest.Stage(stages)
	os.Exit(m.Run())
}
