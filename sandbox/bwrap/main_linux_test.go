package bwrap

import (
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// TestMain lets the test binary serve as Gatehouse's sandbox init.
func TestMain(m *testing.M) {
	sandboxtest.Stage(map[string]func([]string) int{
		"sandbox-init": sandboxinit.Init,
		"sandbox-exec": sandboxinit.Exec,
		"linger":       sandboxinit.Linger,
		"session-net":  sandboxinit.SessionNet,
	})
	os.Exit(m.Run())
}
