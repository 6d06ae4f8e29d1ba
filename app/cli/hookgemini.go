package cli

import (
	"context"
	"flag"

	"github.com/gatehouse-dev/gatehouse/hook/decide"
)

const hookGeminiUsage = `usage: gatehouse hook gemini

Gemini CLI runs this for every shell call (its BeforeTool hook, matcher
run_shell_command, installed by 'gatehouse install --agent gemini'), with the
hook's JSON on stdin. It asks the Gatehouse service to decide and answers on
stdout: deny with the reason (exit status 2), allow, or allow with the
command replaced by a relay of Gatehouse's ticket. A call held for a
person's approval waits for the answer. It fails closed where Gemini lets it:
when the service cannot be reached, the input is malformed, no decision
comes in time or the hook itself fails, the call is denied; the installed
command also blocks when this program is missing or killed. Gemini itself
runs the call when the hook times out, or in a folder it does not trust
(docs/agents.md).`

func hookGemini(fl *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *Env, _ []string) error {
		if fl.NArg() > 0 {
			return usagef("hook gemini: unexpected argument %q", fl.Arg(0))
		}
		if st := decide.Gemini(ctx, decide.Env{Stdin: env.Stdin, Getenv: env.Getenv, Stderr: env.Stderr}, env.Stdout); st != 0 {
			return ExitStatus(st)
		}
		return nil
	}
}
