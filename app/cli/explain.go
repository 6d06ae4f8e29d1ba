package cli

import (
	"context"
	"errors"
	"flag"

	"github.com/gatehouse-dev/gatehouse/app/cli/execface"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

var explainCmd = &command{name: "explain",
	summary: "show how a command is analysed and decided, without running it",
	usage:   explainUsage,
	flags:   runExplain,
}

const explainUsage = `usage: gatehouse explain [--json] [--cwd DIR] [--stdin FILE] [--config FILE] [--] COMMAND

Analyses COMMAND (the arguments, joined by spaces) as the governed shell
would and prints the command tree: every command with its resolved name,
arguments, where it sits, what is only known at run time, the rules that
matched it; the scripts it runs, with their SHA-256 (these are pinned when
the command runs); and the decision with its reason, in DIR or else the
current directory, as gatehouse exec would run it there: the whole
decision, credentials and workspaces included, asked of the running
service when there is one (a command a rule asks about is then "ask": a
call would wait for a person's approval) and made in this process when
there is none. Nothing runs, waits or is recorded.

The exit status is 0 whatever the decision (1 on an error, 2 on a bad
argument); --json prints the decision and the tree as JSON.`

func runExplain(fl *flag.FlagSet) runFunc {
	cwd := fl.String("cwd", "", "")
	stdinFile := fl.String("stdin", "", "")
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if fl.NArg() == 0 {
			return usagef("explain: missing COMMAND; usage: gatehouse explain [flags] 'COMMAND'")
		}
		req, err := cliRequest("explain", args, *cwd, *stdinFile)
		if err != nil {
			return err
		}
		// The running service explains it, with its approvals (an ask
		// would be held); else this process, as gatehouse exec would run it.
		cl, err := shellClient(env, *configFile, false, nil)
		if err != nil {
			return err
		}
		defer cl.Close()
		x, err := cl.Explain(ctx, req)
		var ae *pipeline.ArgError
		if errors.As(err, &ae) {
			return usagef("explain: %s: %s", execface.ArgFlag(ae.Arg), ae.Msg)
		}
		if err != nil {
			return err
		}
		// A command pasted from a transcript may hide what it does behind
		// terminal controls or bidi characters: both forms show them.
		if *asJSON {
			auditJSON(env.Stdout, x)
			return nil
		}
		esc := termesc.NewWriter(env.Stdout)
		x.WriteText(esc)
		return esc.Close()
	}
}
