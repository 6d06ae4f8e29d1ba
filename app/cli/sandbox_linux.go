package cli

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

func init() {
	register(&command{name: "sandbox-init", hidden: true, run: func(_ context.Context, _ *Env, args []string) error {
		return ExitStatus(sandboxinit.Init(args))
	}})
}
