package cli

import (
	"context"
	"flag"

	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

var hookCmd = &command{name: "hook",
	summary: "Claude Code's PreToolUse, PostToolUse and PermissionRequest hook: 'gatehouse hook claude' (installed by 'gatehouse install')",
	usage:   hookUsage,
	subs: []*command{{name: "hook claude", usage: hookUsage, flags: hookClaude},
		{name: "hook codex", usage: hookCodexUsage, flags: hookCodex},
		{name: "hook gemini", usage: hookGeminiUsage, flags: hookGemini},
		{name: "hook cursor", usage: hookCursorUsage, flags: hookCursor}},
	badSub: func(string) error { return usagef("hook: want 'gatehouse hook claude'") },
}

const hookUsage = `usage: gatehouse hook claude [--routing governed_shell|framework]

Claude Code runs this for every Bash call and every call of its file tools
(Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep), with the PreToolUse
JSON on stdin. It asks the Gatehouse service to decide and answers on stdout.
Bash: deny with the reason; allow; or, under governed_shell routing, allow
with the command replaced by a relay of Gatehouse's ticket. A file tool: deny
with the reason (Gatehouse's own files, the deny-read set, a write outside
the workspace roots), or no answer, leaving the call to Claude Code's own
permissions. It fails closed: when the service cannot be reached or the
input is malformed, the call is denied.

As the PostToolUse hook (Read, Grep, Glob, Bash and MCP tools) it has the
tool's output cleaned by the service (credential values and DLP patterns
redacted, as from a command's output) and answers with the cleaned output
when anything was redacted (updatedToolOutput), nothing otherwise. An output
the service cannot clean is withheld. A routed command's output was cleaned
as it ran and is passed at once.

As the PermissionRequest hook (Bash) it answers Claude Code's question to the
person, most often whether a command may run outside Claude Code's sandbox:
allow for exactly the relay the PreToolUse hook wrote (this program, a ticket
the service issued for this session and still pending), deny for a relay of
any other ticket, and nothing for anything else, which the person decides.`

func hookClaude(fl *flag.FlagSet) runFunc {
	routing := fl.String("routing", "", "")
	return func(ctx context.Context, env *Env, _ []string) error {
		if *routing != "" && *routing != api.RoutingGovernedShell && *routing != api.RoutingFramework {
			return usagef("hook claude: --routing %q: want governed_shell or framework", *routing)
		}
		out := decide.Claude(ctx, decide.Env{Stdin: env.Stdin, Getenv: env.Getenv, Stderr: env.Stderr}, *routing)
		if out == nil {
			return nil // not ours: no answer, Claude Code goes on as usual
		}
		return out.Encode(env.Stdout)
	}
}

const hookCodexUsage = `usage: gatehouse hook codex

Codex CLI runs this for every shell call (its PreToolUse hook, matcher
^Bash$, installed by 'gatehouse install --agent codex'), with the hook's JSON
on stdin. It asks the Gatehouse service to decide and answers on stdout: deny
with the reason, or allow with the command replaced by a relay of Gatehouse's
ticket; a command allowed unrouted gets no answer. It fails closed where Codex
lets it: when the service cannot be reached or the input is malformed, the
call is denied. Codex itself runs the call when the hook cannot start, exits
with another status than 0 or 2, or times out (docs/agents.md).`

func hookCodex(fl *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *Env, _ []string) error {
		if fl.NArg() > 0 {
			return usagef("hook codex: unexpected argument %q", fl.Arg(0))
		}
		out := decide.Codex(ctx, decide.Env{Stdin: env.Stdin, Getenv: env.Getenv, Stderr: env.Stderr})
		if out == nil {
			return nil // not ours, or allowed unrouted: Codex goes on as usual
		}
		return out.Encode(env.Stdout)
	}
}
