package seatbelt

import (
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// TestMain lets the test binary serve as the init's sandbox-exec stage.
func TestMain(m *testing.M) {
	sandboxtest.Stage(sandboxinit.Stages)
	os.Exit(m.Run())
}
