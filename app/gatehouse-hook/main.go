// Command gatehouse-hook is the small client Claude Code runs on every
// tool call: 'gatehouse-hook hook claude [--routing R]' is the PreToolUse
// hook (and the PostToolUse, PermissionRequest and SessionEnd one, by the
// event its input names) and 'gatehouse-hook relay TICKET' the relay of a
// routed command,
// answering exactly as 'gatehouse hook claude' and 'gatehouse relay' do
// (the same packages: hook/decide and hook/relay). 'hook codex', 'hook
// gemini' and 'hook cursor' are the other agents' hooks.
//
// It exists because these two run once or twice per Bash call and their
// start is on the call's critical path: this program links the hook's
// input and output, the wire types and the socket's client only (a test
// keeps it so), not the configuration model, SQLite, D-Bus or the OS
// service manager, whose initialisers the full binary runs before main.
// 'gatehouse install' and 'gatehouse managed-settings' name it when it is
// installed next to the gatehouse binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gatehouse-dev/gatehouse/hook/cursor"
	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/hook/relay"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "gatehouse: error: "+format+"\n", a...)
		return code
	}
	switch {
	case len(args) >= 2 && args[0] == "hook" && args[1] == "claude":
		fl := flag.NewFlagSet("hook claude", flag.ContinueOnError)
		fl.SetOutput(io.Discard)
		routing := fl.String("routing", "", "")
		if err := fl.Parse(args[2:]); err != nil {
			return fail(2, "hook claude: %v", err)
		}
		if *routing != "" && *routing != api.RoutingGovernedShell && *routing != api.RoutingFramework {
			return fail(2, "hook claude: --routing %q: want governed_shell or framework", *routing)
		}
		out := decide.Claude(ctx, decide.Env{Stdin: stdin, Getenv: getenv, Stderr: stderr}, *routing)
		if out == nil {
			return 0 // not ours: no answer, Claude Code goes on as usual
		}
		if err := out.Encode(stdout); err != nil {
			return fail(1, "%v", err)
		}
		return 0
	case len(args) == 2 && args[0] == "hook" && args[1] == "codex":
		// Codex runs the call when the hook exits with a status other
		// than 0 or 2: every answer, a denial included, is written with
		// status 0.
		if out := decide.Codex(ctx, decide.Env{Stdin: stdin, Getenv: getenv, Stderr: stderr}); out != nil {
			if err := out.Encode(stdout); err != nil {
				return fail(2, "%v", err) // status 2 with a reason: Codex blocks
			}
		}
		return 0
	case len(args) == 2 && args[0] == "hook" && args[1] == "gemini":
		return decide.Gemini(ctx, decide.Env{Stdin: stdin, Getenv: getenv, Stderr: stderr}, stdout)
	case len(args) == 2 && args[0] == "hook" && args[1] == "cursor":
		return cursor.Hook(stdin, stdout, stderr)
	case len(args) >= 1 && args[0] == "relay":
		if len(args) != 2 {
			return fail(2, "relay: usage: gatehouse relay TICKET")
		}
		p, err := decide.Paths(getenv)
		if err != nil {
			return fail(1, "%v", err)
		}
		return relay.Run(ctx, p.Relay, args[1], stdout, stderr)
	}
	return fail(2, "gatehouse-hook: want 'hook claude [--routing R]', 'hook codex', 'hook gemini', 'hook cursor' or 'relay TICKET'")
}
