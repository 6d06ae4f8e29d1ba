package decide

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/internal/program"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// permissionTimeout bounds the service's answer to a ticket check: it
// looks the ticket up and waits for nothing.
const permissionTimeout = 10 * time.Second

// permission answers a PermissionRequest: Claude Code asks the person
// whether a Bash call may run, most often because it asks to run outside
// Claude Code's sandbox (dangerouslyDisableSandbox, which Route sets on
// the relay). It allows exactly one thing: the relay the PreToolUse hook
// wrote, by this same program, of a ticket the service issued for this
// session and that is still pending. A relay form of a ticket that is not
// (guessed, used, expired, another session's) is denied with the reason.
// Anything else gets no answer: the person decides, as without Gatehouse
// (in claude -p, which asks no one, that is a denial).
func permission(ctx context.Context, env Env, in *claude.Input) *claude.Output {
	if in.ToolName != claude.ToolBash {
		return nil
	}
	b, err := in.Bash()
	if err != nil {
		return nil
	}
	exe, ticket, ok := claude.ParseRelayCommand(b.Command)
	if !ok {
		return nil
	}
	self, err := ownPath()
	if err != nil || exe != self {
		return nil // not this program's relay: not Gatehouse's to vouch for
	}
	c, err := client(env)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, permissionTimeout)
	defer cancel()
	resp, err := c.CheckTicket(ctx, api.TicketCheckRequest{Ticket: ticket, Agent: "claude-code", SessionID: in.SessionID})
	if err != nil {
		return nil // the relay cannot run without the service either
	}
	if !resp.Live {
		return claude.PermissionDeny("Gatehouse did not let this relay run: " + resp.Reason +
			". Run the command you meant instead; Gatehouse decides it and runs it in its sandbox.")
	}
	return claude.PermissionAllow()
}

// ownPath is selfPath; a test names a gatehouse program instead of
// itself.
var ownPath = selfPath

// selfPath is the gatehouse program's absolute path, symbolic links
// resolved (program.Path): the path the PreToolUse hook writes into the
// relay command.
func selfPath() (string, error) { return program.Path() }
