package decide

import (
	"context"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/hook/codex"
)

// CodexTimeoutSeconds is Gatehouse's timeout for a command Codex asked
// for. Codex's exec_command sets none Gatehouse can read (a long command
// keeps running while the model polls it), so it is Claude Code's default
// Bash timeout, less the same margin.
const CodexTimeoutSeconds = 118

// Codex returns the answer to Codex's PreToolUse call on env.Stdin; nil
// is no answer, and Codex runs the call as the model asked: a tool other
// than the shell (apply_patch, MCP tools), or a command the service
// allowed unrouted (framework routing), since Codex takes no plain
// "allow". It fails closed: a call it cannot read or the service cannot
// decide is denied with the reason. Codex's session id stands for the
// session (grants, tickets), its cwd is the command's; Codex has no
// session-end hook, so a session's grants end when they expire.
func Codex(ctx context.Context, env Env) *codex.Output {
	in, err := codex.Decode(env.Stdin)
	if err != nil {
		return codex.Deny(fmt.Sprintf("Gatehouse could not read this tool call (%v), so it did not run. This is a bug in the caller or in Gatehouse; report it.", err))
	}
	if in.ToolName != codex.ToolBash {
		return nil
	}
	if err := in.CheckCwd(); err != nil {
		return codex.Deny(fmt.Sprintf("Gatehouse could not read this shell call (%v), so it did not run.", err))
	}
	cmd, err := in.Command()
	if err != nil {
		return codex.Deny(fmt.Sprintf("Gatehouse could not read this shell call (%v), so it did not run.", err))
	}
	out := Shell(ctx, env, ShellCall{
		Agent:          codex.Agent,
		Command:        cmd,
		Cwd:            in.Cwd,
		SessionID:      in.SessionID,
		TimeoutSeconds: CodexTimeoutSeconds,
	})
	switch out.Verdict {
	case Routed:
		return codex.Route(in, out.Relay, out.Reason)
	case Allowed:
		return nil
	}
	return codex.Deny(out.Reason)
}
