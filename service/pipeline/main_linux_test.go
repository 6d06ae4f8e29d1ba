package pipeline

import (
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest/escape"
)

// TestMain lets the test binary serve as Gatehouse's sandbox init and as the
// escape probes run inside the sandbox.
func TestMain(m *testing.M) {
	sandboxtest.Stage(map[string]func([]string) int{
		"sandbox-init": sandboxinit.Init,
		"sandbox-exec": sandboxinit.Exec,
		"escape-probe": escape.Main,
	})
	os.Exit(m.Run())
}
