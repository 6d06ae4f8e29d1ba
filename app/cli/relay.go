package cli

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/hook/relay"
)

var relayCmd = &command{name: "relay",
	summary: "run a command Gatehouse admitted for Claude Code (gatehouse relay TICKET)",
	hidden:  true,
	run:     runRelay,
}

func runRelay(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return usagef("relay: usage: gatehouse relay TICKET")
	}
	home, err := homeDir(env)
	if err != nil {
		return err
	}
	return ExitStatus(relay.Run(ctx, servicePaths(env, home).relay, args[0], env.Stdout, env.Stderr))
}
