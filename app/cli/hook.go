package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
)

var hookCmd = &command{name: "hook",
	summary: "Claude Code's PreToolUse hook: 'gatehouse hook claude' (installed by 'gatehouse install')",
	run:     runHook,
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
input is malformed, the call is denied.`

// hookDecideTimeout bounds the wait for the service's decision.
const hookDecideTimeout = 20 * time.Second

func runHook(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "claude" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(env.Stdout, hookUsage)
			return nil
		}
		return usagef("hook: want 'gatehouse hook claude'")
	}
	return hookClaudeCommand.exec(ctx, env, args[1:])
}

var hookClaudeCommand = &command{name: "hook claude", usage: hookUsage, flags: hookClaude}

func hookClaude(fl *flag.FlagSet) runFunc {
	routing := fl.String("routing", "", "")
	return func(ctx context.Context, env *Env, _ []string) error {
		if *routing != "" && *routing != api.RoutingGovernedShell && *routing != api.RoutingFramework {
			return usagef("hook claude: --routing %q: want governed_shell or framework", *routing)
		}
		out := hookDecide(ctx, env, *routing)
		if out == nil {
			return nil // not ours: no answer, Claude Code goes on as usual
		}
		return out.Encode(env.Stdout)
	}
}

// hookDecide returns the hook's answer; nil passes the call through.
func hookDecide(ctx context.Context, env *Env, routing string) *claude.Output {
	in, err := claude.Decode(env.Stdin)
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this tool call (%v), so it did not run. This is a bug in the caller or in Gatehouse; report it.", err))
	}
	if in.ToolName != claude.ToolBash && !claude.IsFileTool(in.ToolName) {
		return nil
	}
	if err := in.CheckCwd(); err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this %s call (%v), so it did not run.", in.ToolName, err))
	}
	if in.ToolName != claude.ToolBash {
		return hookFile(ctx, env, in)
	}
	b, err := in.Bash()
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this Bash call (%v), so it did not run.", err))
	}
	c, err := serviceClient(env)
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse did not run this command: %v.", err))
	}
	ctx, cancel := context.WithTimeout(ctx, hookDecideTimeout)
	defer cancel()
	resp, err := c.Decide(ctx, api.DecideRequest{
		Request: api.ExecRequest{
			Command:        b.Command,
			Cwd:            in.Cwd,
			TimeoutSeconds: b.TimeoutSeconds(claude.ParseMS(env.Getenv("BASH_DEFAULT_TIMEOUT_MS"))),
			Agent:          "claude-code",
			Surface:        api.SurfaceAgentHook,
			SessionID:      in.SessionID,
		},
		Route:   true,
		Routing: routing,
	})
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse did not run this command: the Gatehouse service is not reachable (%v). "+
			"Ask the user to start it with `gatehouse service start` (or `gatehouse serve` in a terminal), then try again.", err))
	}
	if resp.Decision != "allow" {
		reason := fmt.Sprintf("Gatehouse denied this command (%s): %s", resp.BlockedBy, resp.Reason)
		if resp.Hint != "" {
			reason += ". Remedy (for the user): " + resp.Hint
		} else if hint := hookHint(resp.BlockedBy); hint != "" {
			reason += " " + hint
		}
		return claude.Deny(reason + hookWarning(resp))
	}
	if resp.Ticket == "" {
		return claude.Allow(in, "Gatehouse allowed this command"+hookWarning(resp))
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse did not run this command: cannot find its own binary (%v).", err))
	}
	return claude.Route(in, claude.RelayCommand(exe, resp.Ticket),
		"Gatehouse admitted this command; it runs in Gatehouse's sandbox"+hookWarning(resp))
}

// hookWarning is the service's warning, for the end of a reason: the
// model and its user learn that the call is not on the record.
func hookWarning(resp *api.DecideResponse) string {
	if resp.Warning == "" {
		return ""
	}
	return ". Warning: " + resp.Warning + "; tell the user to run `gatehouse doctor`"
}

// hookFile decides a file tool's call. An allowed call gets no answer: the
// hook approves nothing Claude Code's own permissions would not.
func hookFile(ctx context.Context, env *Env, in *claude.Input) *claude.Output {
	fa, err := in.FileAccess()
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse could not read this %s call (%v), so it did not run.", in.ToolName, err))
	}
	c, err := serviceClient(env)
	if err != nil {
		return claude.Deny(fmt.Sprintf("Gatehouse refused this %s: %v.", in.ToolName, err))
	}
	ctx, cancel := context.WithTimeout(ctx, hookDecideTimeout)
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
	if resp.Decision != "allow" {
		return claude.Deny(fmt.Sprintf("Gatehouse refused this %s (%s): %s", in.ToolName, resp.BlockedBy, resp.Reason))
	}
	return nil
}

// hookHint tells the model (and its user) what to do about a denial.
func hookHint(code string) string {
	switch code {
	case pipeline.DenyCwdOutside:
		return "Run it from a directory inside Gatehouse's workspace roots, or ask the user to add this project to policy.workspace_roots."
	case pipeline.DenySandboxUnavailable:
		return "Ask the user to run `gatehouse doctor` to see how to fix the sandbox."
	}
	return ""
}
