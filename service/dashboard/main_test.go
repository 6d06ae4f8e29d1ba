package dashboard

import (
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

func TestMain(m *testing.M) {
	// Inside a sandbox of the real service (sessions_linux_test.go) this
	// test binary is Gatehouse's init.
	sandboxtest.Stage(sandboxinit.Stages)
	os.Exit(m.Run())
}
