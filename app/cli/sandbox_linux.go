package cli

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

func init() {
	register("sandbox-init", command{hidden: true, run: func(_ context.Context, _ *Env, args []string) error {
		return ExitStatus(sandboxinit.Init(args))
	}})
}
