package cli

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

var sandboxInitCmd = &command{name: "sandbox-init", hidden: true, run: func(_ context.Context, _ *Env, args []string) error {
	return ExitStatus(sandboxinit.Init(args))
}}
