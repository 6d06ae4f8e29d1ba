package decide

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/gemini"
)

// Gemini answers the BeforeTool call on env.Stdin, writing the answer to
// stdout, and returns the hook's exit status: 0, or gemini.ExitBlock when
// the call is denied. It fails closed wherever Gemini CLI lets it: a call
// it cannot read, that the service cannot decide, or that is not decided
// in time (geminiDeadline, below Gemini's timeout for the hook, which
// would let the call run) is denied with the reason, and so is a panic of
// the hook itself. A tool other than the shell gets no answer (0).
//
// What stands in for Claude Code's fields: Gemini passes session_id and
// cwd, used as Claude Code's are (session grants, the cwd the command is
// decided and run in, with the tool's dir_path resolved against it), and
// GEMINI_PROJECT_DIR as the project; it passes no tool-call id and the
// model sets no timeout, so the command gets the policy's timeout
// (policy.exec_timeout_seconds).
func Gemini(ctx context.Context, env Env, stdout io.Writer) (status int) {
	done := make(chan *gemini.Output, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- gemini.Deny(fmt.Sprintf("Gatehouse did not run this command: its hook failed (%v). This is a bug in Gatehouse; report it.", r))
			}
		}()
		done <- geminiAnswer(ctx, env)
	}()
	var out *gemini.Output
	select {
	case out = <-done:
	case <-time.After(geminiDeadline):
		out = gemini.Deny("Gatehouse did not run this command: no decision came in time. Ask the user to run `gatehouse doctor`.")
	}
	if out == nil {
		return 0
	}
	if err := out.Encode(stdout); err != nil || out.Blocks() {
		return gemini.ExitBlock
	}
	return 0
}

// geminiDeadline bounds the hook: the service's longest hold
// (decideTimeout) and a little more, below gemini.HookTimeoutMS.
const geminiDeadline = decideTimeout + 5*time.Second

func geminiAnswer(ctx context.Context, env Env) *gemini.Output {
	in, err := gemini.Decode(env.Stdin)
	if err != nil {
		return gemini.Deny(fmt.Sprintf("Gatehouse could not read this tool call (%v), so it did not run. This is a bug in the caller or in Gatehouse; report it.", err))
	}
	if in.ToolName != gemini.ToolShell {
		return nil
	}
	sh, err := in.Shell()
	if err != nil {
		return gemini.Deny(fmt.Sprintf("Gatehouse could not read this %s call (%v), so it did not run.", in.ToolName, err))
	}
	o := Shell(ctx, env, ShellCall{
		Agent:      gemini.Agent,
		Command:    sh.Command,
		Cwd:        sh.Dir,
		SessionID:  in.SessionID,
		ProjectDir: env.Getenv("GEMINI_PROJECT_DIR"),
	})
	switch o.Verdict {
	case Denied:
		return gemini.Deny(o.Reason)
	case Allowed:
		return gemini.Allow()
	}
	return gemini.Route(o.Relay)
}
