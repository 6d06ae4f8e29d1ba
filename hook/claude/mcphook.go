package claude

// Gatehouse's hook as a tool of its MCP server (type "mcp_tool" in Claude
// Code's settings, 2.1.118 and later): Claude Code calls the tool of the
// already running `gatehouse mcp` instead of starting the hook's process
// for each event. The tool takes the fields of the hook's input that the
// hook reads, each a string Claude Code fills in from its hook input
// (${path}; an object arrives as its JSON text), rebuilds the input the
// command hook reads on stdin, and answers with the same JSON, through
// the same decision (hook/decide).

import (
	"encoding/json"
	"errors"
	"strings"
)

// MCPHookTool is the hook's tool on Gatehouse's MCP server
// (MCPServerName): its settings name it by server and tool.
const MCPHookTool = "claude_hook"

// MCPHookPermission is the permission rule naming the hook's tool as the
// model would call it: the settings with the mcp_tool hook deny it, so that
// only Claude Code's hooks call it.
const MCPHookPermission = "mcp__" + MCPServerName + "__" + MCPHookTool

// HookKinds are the kinds of Gatehouse's hook in Claude Code's settings,
// the default first: a process per call, or a tool of the MCP server.
var HookKinds = []string{"command", "mcp_tool"}

// mcpHookFields are the hook input's fields the hook reads, passed to the
// tool by name.
var mcpHookFields = []string{"hook_event_name", "session_id", "cwd", "permission_mode",
	"tool_name", "tool_input", "tool_use_id", "tool_response"}

// mcpHookEntry returns the mcp_tool hook that asks the tool, with routing
// (the least routing the hook asks for, "" for the configured one).
func mcpHookEntry(routing string) hookEntry {
	in := map[string]string{}
	for _, f := range mcpHookFields {
		in[f] = "${" + f + "}"
	}
	if routing != "" {
		in["routing"] = routing
	}
	return hookEntry{Type: "mcp_tool", Server: MCPServerName, Tool: MCPHookTool, Input: in}
}

// MCPHookArgs are the tool's arguments.
type MCPHookArgs struct {
	HookEventName  string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode,omitempty"`
	ToolName       string `json:"tool_name,omitempty"`
	ToolInput      string `json:"tool_input,omitempty"`
	ToolUseID      string `json:"tool_use_id,omitempty"`
	ToolResponse   string `json:"tool_response,omitempty"`
	// Routing is the least routing the hook asks for, as the command
	// hook's --routing.
	Routing string `json:"routing,omitempty"`
}

// MCPHookInputSchema is the tool's input schema: every argument a string.
func MCPHookInputSchema() json.RawMessage {
	props := map[string]any{"routing": map[string]string{"type": "string"}}
	for _, f := range mcpHookFields {
		props[f] = map[string]string{"type": "string"}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props,
		"required": []string{"hook_event_name", "session_id", "cwd"}})
	return b
}

// HookInput returns the hook input the command hook would read on stdin:
// tool_input is its JSON object again, tool_response any JSON value (a
// text that is not an object or an array is a string).
func (a MCPHookArgs) HookInput() ([]byte, error) {
	in := struct {
		SessionID      string          `json:"session_id"`
		Cwd            string          `json:"cwd"`
		PermissionMode string          `json:"permission_mode,omitempty"`
		HookEventName  string          `json:"hook_event_name"`
		ToolName       string          `json:"tool_name,omitempty"`
		ToolInput      json.RawMessage `json:"tool_input,omitempty"`
		ToolUseID      string          `json:"tool_use_id,omitempty"`
		ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	}{SessionID: a.SessionID, Cwd: a.Cwd, PermissionMode: a.PermissionMode, HookEventName: a.HookEventName,
		ToolName: a.ToolName, ToolUseID: a.ToolUseID}
	if a.ToolInput != "" {
		if !strings.HasPrefix(strings.TrimSpace(a.ToolInput), "{") || !json.Valid([]byte(a.ToolInput)) {
			return nil, errors.New("tool_input is not a JSON object")
		}
		in.ToolInput = json.RawMessage(a.ToolInput)
	}
	if r := strings.TrimSpace(a.ToolResponse); r != "" {
		if (strings.HasPrefix(r, "{") || strings.HasPrefix(r, "[")) && json.Valid([]byte(r)) {
			in.ToolResponse = json.RawMessage(r)
		} else {
			in.ToolResponse, _ = json.Marshal(a.ToolResponse)
		}
	}
	return json.Marshal(in)
}
