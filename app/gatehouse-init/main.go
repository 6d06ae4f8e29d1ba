// Command gatehouse-init is Gatehouse's program inside the sandbox: pid 1 of
// the sandbox (sandbox-init) and the filtered stage that becomes the shell
// (sandbox-exec), both in sandbox/sandboxinit, and "connect", ssh's
// ProxyCommand inside the sandbox (a tunnel through the egress bridge).
// gatehouse starts it; it is installed next to the gatehouse binary. It links the standard library,
// golang.org/x/sys and the seccomp program only (deps_test.go), so that it
// starts in a fraction of the full binary's time, once per command.
package main

import (
	"os"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

func main() {
	os.Exit(sandboxinit.Main(os.Args[1:]))
}
