//go:build linux || darwin

package cli

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

var sandboxExecCmd = &command{name: "sandbox-exec", hidden: true, run: func(_ context.Context, _ *Env, args []string) error {
	return ExitStatus(sandboxinit.Exec(args))
}}
