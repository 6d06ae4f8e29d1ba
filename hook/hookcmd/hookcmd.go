// Package hookcmd is the command line of the hooks and the relay as the
// small programs run them: 'hook claude [--routing R]', 'hook codex',
// 'hook gemini', 'hook cursor' and 'relay TICKET', answering exactly as the
// full program's 'gatehouse hook …' and 'gatehouse relay' do (the same
// packages: hook/decide and hook/relay). gatehouse-hook is this alone; the
// front program gatehouse takes these command lines with it, so that a
// hook or relay naming gatehouse does not start the full program.
package hookcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/hook/cursor"
	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/hook/relay"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Run runs the hook or relay args name and returns its exit status; ok is
// false when args name none of them (or ask for help), and nothing ran.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int, ok bool) {
	fail := func(code int, format string, a ...any) (int, bool) {
		fmt.Fprintf(stderr, "gatehouse: error: "+format+"\n", a...)
		return code, true
	}
	env := decide.Env{Stdin: stdin, Getenv: getenv, Stderr: stderr}
	switch {
	case len(args) >= 2 && args[0] == "hook" && args[1] == "claude":
		fl := flag.NewFlagSet("hook claude", flag.ContinueOnError)
		fl.SetOutput(io.Discard)
		routing := fl.String("routing", "", "")
		if err := fl.Parse(args[2:]); errors.Is(err, flag.ErrHelp) {
			return 0, false
		} else if err != nil {
			return fail(2, "hook claude: %v", err)
		}
		if *routing != "" && *routing != api.RoutingGovernedShell && *routing != api.RoutingFramework {
			return fail(2, "hook claude: --routing %q: want governed_shell or framework", *routing)
		}
		out := decide.Claude(ctx, env, *routing)
		if out == nil {
			return 0, true // not ours: no answer, Claude Code goes on as usual
		}
		if err := out.Encode(stdout); err != nil {
			return fail(1, "%v", err)
		}
		return 0, true
	case len(args) == 2 && args[0] == "hook" && args[1] == "codex":
		// Codex runs the call when the hook exits with a status other
		// than 0 or 2: every answer, a denial included, is written with
		// status 0.
		if out := decide.Codex(ctx, env); out != nil {
			if err := out.Encode(stdout); err != nil {
				return fail(2, "%v", err) // status 2 with a reason: Codex blocks
			}
		}
		return 0, true
	case len(args) == 2 && args[0] == "hook" && args[1] == "gemini":
		return decide.Gemini(ctx, env, stdout), true
	case len(args) == 2 && args[0] == "hook" && args[1] == "cursor":
		return cursor.Hook(stdin, stdout, stderr), true
	case len(args) >= 1 && args[0] == "relay":
		if len(args) != 2 {
			return fail(2, "relay: usage: gatehouse relay TICKET")
		}
		p, err := decide.Paths(getenv)
		if err != nil {
			return fail(1, "%v", err)
		}
		return relay.Run(ctx, p.Relay, args[1], stdout, stderr), true
	}
	return 0, false
}
