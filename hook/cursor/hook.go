// Package cursor speaks Cursor's side of Gatehouse. Cursor's
// beforeShellExecution hook can allow, deny or ask, but cannot rewrite the
// command, so Cursor's built-in shell tool cannot be routed through
// Gatehouse's relay as Claude Code's, Codex's and Gemini CLI's are.
// Instead Gatehouse's hook denies every command of that tool and tells the
// model to run it with the shell__execute tool of Gatehouse's MCP server
// (gatehouse mcp), which Cursor runs from its mcp.json: the built-in tool
// is denied, not routed. This package answers the hook, merges the hook
// into ~/.cursor/hooks.json and the server into ~/.cursor/mcp.json, and
// reports their drift for doctor.
//
// The wire format is Cursor's hooks (https://cursor.com/docs/hooks, as
// quoted in the threads hook_test.go cites): hooks.json is {"version": 1,
// "hooks": {"beforeShellExecution": [{"command": …, "failClosed": …}]}};
// the hook reads on stdin conversation_id, generation_id,
// hook_event_name "beforeShellExecution", workspace_roots, command and cwd
// (with model, cursor_version and user_email in later versions), and
// answers on stdout {"permission": "allow"|"deny"|"ask", "user_message",
// "agent_message"} (snake case since Cursor 2.0; 1.7 read userMessage and
// agentMessage, which the answer also carries). Exit status 2 blocks as a
// deny does; any other failure (a crash, a timeout, output that is not
// JSON) lets the command run unless the hook's entry sets failClosed.
package cursor

import (
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
)

// Agent is the agent name on the record of a call Cursor made through
// gatehouse mcp.
const Agent = "cursor"

// ClientName is the clientInfo name Cursor's MCP client gives in its
// initialize request; gatehouse mcp records its calls as Agent.
const ClientName = "cursor-vscode"

// EventBeforeShellExecution is the event the hook answers.
const EventBeforeShellExecution = "beforeShellExecution"

// ExitBlock is the exit status with which Cursor blocks the command
// whatever the hook wrote: the hook exits with it when it cannot write its
// answer.
const ExitBlock = 2

// maxInput bounds the hook's stdin.
const maxInput = 4 << 20

// MCPTool is the tool the model is sent to: shell__execute of the server
// named MCPServerName.
const MCPTool = "shell__execute"

// Input is the beforeShellExecution hook's input, as far as the hook reads
// it.
type Input struct {
	ConversationID string   `json:"conversation_id"`
	GenerationID   string   `json:"generation_id"`
	HookEventName  string   `json:"hook_event_name"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Command        string   `json:"command"`
	Cwd            string   `json:"cwd"`
	CursorVersion  string   `json:"cursor_version,omitempty"`
}

// Answer is the hook's answer. Cursor 2.0 and later read the snake-case
// messages, 1.7 the camel-case ones; each reads past the other's.
type Answer struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
	UserMsg17    string `json:"userMessage,omitempty"`
	AgentMsg17   string `json:"agentMessage,omitempty"`
}

// Deny returns the answer to a shell command: deny, and send the model to
// the MCP tool. in may be nil (an input the hook could not read).
func Deny(in *Input) Answer {
	where := ""
	if in != nil && in.Cwd != "" {
		where = fmt.Sprintf(" with cwd %q", in.Cwd)
	}
	agent := "Cursor's built-in shell tool is turned off here: Gatehouse runs shell commands. " +
		"Run the same command with the " + MCPTool + " tool of the " + MCPServerName + " MCP server" + where +
		" (arguments: command, cwd). It runs in Gatehouse's sandbox under the machine's policy; do not retry it with the built-in shell tool."
	user := "Gatehouse denied Cursor's shell tool; the agent is sent to the gatehouse MCP server's " + MCPTool + " tool (gatehouse doctor says more)"
	return Answer{Permission: "deny", UserMessage: user, AgentMessage: agent, UserMsg17: user, AgentMsg17: agent}
}

// Hook answers one beforeShellExecution call: it reads the input and
// denies the command, whatever the input says (an input it cannot read is
// denied too); an input of another event is not its to answer and gets no
// answer. It returns the exit status: ExitBlock when the answer could not
// be written, with the reason on stderr.
func Hook(stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := decode(stdin)
	if err == nil && in.HookEventName != "" && in.HookEventName != EventBeforeShellExecution {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: hook cursor: %v; the command is denied\n", err)
		in = nil
	}
	if err := hookjson.Write(stdout, Deny(in)); err != nil {
		fmt.Fprintf(stderr, "Gatehouse denied the command (use the gatehouse MCP server's %s tool); writing the answer failed: %v\n", MCPTool, err)
		return ExitBlock
	}
	return 0
}

func decode(r io.Reader) (*Input, error) {
	var in Input
	if err := hookjson.DecodeInput(r, maxInput, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// Routing is how Cursor's shell commands reach Gatehouse, as doctor says
// it: not through its built-in tool, which the hook denies.
const Routing = "the built-in shell tool is denied, not routed: commands run through the gatehouse MCP server's " + MCPTool
