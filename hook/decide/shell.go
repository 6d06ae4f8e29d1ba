package decide

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// ShellCall is a shell command an agent's pre-tool hook asks about, in
// the words every agent's hook reads from its own input.
type ShellCall struct {
	// Agent is the agent's name on the record ("claude-code",
	// "gemini-cli"): its allowlists, grants and tool caches apply.
	Agent   string
	Command string
	// Cwd is the directory the command runs in.
	Cwd string
	// SessionID is the agent's session: approve-for-session grants and
	// tickets are kept per session.
	SessionID  string
	ProjectDir string
	// TimeoutSeconds is Gatehouse's timeout for the command; 0 for the
	// configured one.
	TimeoutSeconds int
	// Routing is the routing the hook was installed with; "" for the
	// configured one.
	Routing string
}

// Verdict is what becomes of a ShellCall.
type Verdict int

const (
	// Denied: the command does not run; Outcome.Reason says why.
	Denied Verdict = iota
	// Allowed: the command runs as the agent asked, in the agent's own
	// way (framework routing).
	Allowed
	// Routed: the command is replaced by Outcome.Relay, which redeems
	// the service's ticket and runs it in Gatehouse's sandbox.
	Routed
)

// Outcome is the service's answer to a ShellCall, said once for every
// agent's hook, which only encodes it in its agent's format.
type Outcome struct {
	Verdict Verdict
	// Reason is for the model: why it was denied, or a note on an allow.
	Reason string
	// Relay is the command that replaces the agent's, when Routed.
	Relay string
}

func deny(reason string) Outcome { return Outcome{Verdict: Denied, Reason: reason} }

// Shell asks the service to decide call and says what becomes of it. It
// fails closed: a call the service cannot decide is Denied with the
// reason. While the service holds the call for a person's approval, the
// wait line goes to env.Stderr.
func Shell(ctx context.Context, env Env, call ShellCall) Outcome {
	c, err := client(env)
	if err != nil {
		return deny(fmt.Sprintf("Gatehouse did not run this command: %v.", err))
	}
	ctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	stopWaiting := func() {}
	if env.Stderr != nil {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sayWaiting(wctx, env.Stderr, c, call.SessionID, call.Command, time.Now())
		}()
		stopWaiting = func() { stop(); <-done }
	}
	resp, err := c.Decide(ctx, api.DecideRequest{
		Request: api.ExecRequest{
			Command:        call.Command,
			Cwd:            call.Cwd,
			TimeoutSeconds: call.TimeoutSeconds,
			Agent:          call.Agent,
			Surface:        api.SurfaceAgentHook,
			SessionID:      call.SessionID,
			ProjectDir:     call.ProjectDir,
		},
		Route:   true,
		Routing: call.Routing,
	})
	stopWaiting()
	if err != nil {
		return deny(fmt.Sprintf("Gatehouse did not run this command: the Gatehouse service is not reachable (%v). "+
			"Ask the user to start it with `gatehouse service start` (or `gatehouse serve` in a terminal), then try again.", err))
	}
	if resp.Decision != api.DecisionAllow {
		reason := fmt.Sprintf("Gatehouse denied this command (%s): %s", resp.BlockedBy, resp.Reason)
		// The remedy is the service's, the one every face gives
		// (pipeline.Remedy).
		if resp.Hint != "" {
			reason += ". Remedy (for the user): " + resp.Hint
		}
		return deny(reason + warning(resp))
	}
	if resp.Ticket == "" {
		return Outcome{Verdict: Allowed, Reason: "Gatehouse allowed this command" + warning(resp)}
	}
	exe, err := selfPath()
	if err != nil {
		return deny(fmt.Sprintf("Gatehouse did not run this command: cannot find its own binary (%v).", err))
	}
	return Outcome{Verdict: Routed, Relay: claude.RelayCommand(exe, resp.Ticket),
		Reason: "Gatehouse admitted this command; it runs in Gatehouse's sandbox" + warning(resp)}
}
