// Package decide is the hook's side of a Claude Code tool call: the
// PreToolUse input read, the service asked over its socket, the answer
// (deny, allow, or a routed command) made; and the PermissionRequest that
// lets exactly a live relay out of Claude Code's sandbox (permission.go). It is a thin client: it opens
// no configuration, audit store or keychain (the service holds them), and
// links only the hook's input and output (hook/claude), the wire types
// and the socket's client, so that the small gatehouse-hook program and
// 'gatehouse hook claude' answer alike.
package decide

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/socket"
)

// Env is what the hook uses of its process.
type Env struct {
	Stdin io.Reader
	// Getenv reads the environment (HOME, BASH_DEFAULT_TIMEOUT_MS and the
	// variables socket.Locate reads).
	Getenv func(string) string
	// Stderr, when set, gets the line saying a call is held for a
	// person's approval and how to answer (waitline.Line).
	Stderr io.Writer
}

// decideTimeout bounds the wait for the service's decision: a call held
// for a person's approval waits up to policy.approval_timeout_seconds (at
// most 600 s), and the service then answers.
const decideTimeout = 620 * time.Second

// Home returns the user's home directory from $HOME, falling back to the
// password database.
func Home(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory; set HOME")
	}
	return h, nil
}

// Paths are this user's service paths.
func Paths(getenv func(string) string) (socket.Paths, error) {
	home, err := Home(getenv)
	if err != nil {
		return socket.Paths{}, err
	}
	return socket.Locate(runtime.GOOS, home, getenv), nil
}

func client(env Env) (*localapi.Client, error) {
	p, err := Paths(env.Getenv)
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(p.Socket), nil
}

// Claude returns the answer to the PreToolUse call on env.Stdin, decided
// by the service under routing ("" for the configured one); nil passes the
// call through. It fails closed: a call it cannot read or the service
// cannot decide is denied with the reason. The same input may be a
// PostToolUse (toolOutput), a PermissionRequest (permission: allowing
// nothing it cannot vouch for) or a SessionEnd.
func Claude(ctx context.Context, env Env, routing string) *claude.Output {
	in, err := claude.Decode(env.Stdin)
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this tool call (%v), so it did not run. This is a bug in the caller or in Gatehouse; report it.", err))
	}
	if in.HookEventName == claude.EventSessionEnd {
		endSession(ctx, env, in.SessionID)
		return nil
	}
	if in.HookEventName == claude.EventPostToolUse {
		return toolOutput(ctx, env, in)
	}
	if in.HookEventName == claude.EventPermissionRequest {
		return permission(ctx, env, in)
	}
	if in.ToolName != claude.ToolBash && !claude.IsFileTool(in.ToolName) {
		return nil
	}
	if err := in.CheckCwd(); err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this %s call (%v), so it did not run.", in.ToolName, err))
	}
	if in.ToolName != claude.ToolBash {
		return file(ctx, env, in)
	}
	b, err := in.Bash()
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this Bash call (%v), so it did not run.", err))
	}
	o := Shell(ctx, env, ShellCall{
		Agent:          "claude-code",
		Command:        b.Command,
		Cwd:            in.Cwd,
		SessionID:      in.SessionID,
		ProjectDir:     env.Getenv("CLAUDE_PROJECT_DIR"),
		TimeoutSeconds: b.TimeoutSeconds(claude.ParseMS(env.Getenv("BASH_DEFAULT_TIMEOUT_MS"))),
		Routing:        routing,
	})
	switch o.Verdict {
	case Denied:
		return claude.Deny(o.Reason)
	case Allowed:
		return claude.Allow(in, o.Reason)
	}
	return claude.Route(in, o.Relay, o.Reason)
}

// warning is the service's warning, for the end of a reason: the
// model and its user learn that the call is not on the record.
func warning(resp *api.DecideResponse) string {
	if resp.Warning == "" {
		return ""
	}
	return ". Warning: " + resp.Warning + "; tell the user to run `gatehouse doctor`"
}

// file decides a file tool's call. An allowed call gets no answer: the
// hook approves nothing Claude Code's own permissions would not.
func file(ctx context.Context, env Env, in *claude.Input) *claude.Output {
	fa, err := in.FileAccess()
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this %s call (%v), so it did not run.", in.ToolName, err))
	}
	c, err := client(env)
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse refused this %s: %v.", in.ToolName, err))
	}
	ctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	resp, err := c.FileAccess(ctx, api.FileAccessRequest{
		Tool:      fa.Tool,
		Access:    fa.Access,
		Search:    fa.Search,
		Paths:     fa.Paths,
		Cwd:       in.Cwd,
		Agent:     "claude-code",
		Surface:   api.SurfaceAgentHook,
		SessionID: in.SessionID,
	})
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse refused this %s: the Gatehouse service is not reachable (%v). "+
			"Ask the user to start it with `gatehouse service start` (or `gatehouse serve` in a terminal), then try again.", in.ToolName, err))
	}
	if resp.Decision != api.DecisionAllow {
		return claude.Deny(fmt.Sprintf("Gatehouse refused this %s (%s): %s", in.ToolName, resp.BlockedBy, resp.Reason))
	}
	return nil
}

// outputTimeout bounds the cleaning of one tool output.
const outputTimeout = 30 * time.Second

// toolOutput has a tool's output cleaned by the service (credential values
// and DLP patterns redacted) before the model sees it: nil when nothing
// was redacted, the output replaced when something was. It fails closed:
// an output the service cannot clean is withheld. A routed Bash call's
// output (the relay's) was cleaned as it ran, and is passed at once.
func toolOutput(ctx context.Context, env Env, in *claude.Input) *claude.Output {
	if len(in.ToolResponse) == 0 || string(in.ToolResponse) == "null" {
		return nil
	}
	if in.ToolName == claude.ToolBash {
		if cmd, err := in.Bash(); err == nil && claude.IsRelayCommand(cmd.Command) {
			return nil
		}
	}
	c, err := client(env)
	if err != nil {
		return claude.Withhold(in, err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, outputTimeout)
	defer cancel()
	resp, err := c.ToolOutput(ctx, api.ToolOutputRequest{
		Tool:      in.ToolName,
		ToolUseID: in.ToolUseID,
		Output:    in.ToolResponse,
		Cwd:       in.Cwd,
		Agent:     "claude-code",
		Surface:   api.SurfaceAgentHook,
		SessionID: in.SessionID,
	})
	if err != nil {
		return claude.Withhold(in, "the Gatehouse service did not answer: "+err.Error())
	}
	if len(resp.Output) == 0 {
		return nil
	}
	return claude.ReplaceOutput(resp.Output)
}

// endSession tells the service that a Claude Code session ended: its
// approve-for-session grants end with it. Nothing is answered to Claude
// Code, and a service that is not there has no grants to end.
func endSession(ctx context.Context, env Env, session string) {
	if session == "" {
		return
	}
	c, err := client(env)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.EndSession(ctx, api.SessionEndRequest{Agent: "claude-code", SessionID: session})
}
