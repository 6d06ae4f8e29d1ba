package claude

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The tool's arguments rebuild the input the command hook reads: the tool
// input an object again, the tool response any JSON value (text that is
// neither an object nor an array a string); a tool input that is not an
// object is refused.
func TestMCPHookArgs(t *testing.T) {
	t.Parallel()
	a := MCPHookArgs{HookEventName: "PostToolUse", SessionID: "s", Cwd: "/w", ToolName: "Bash",
		ToolInput: `{"command":"ls","timeout":5}`, ToolUseID: "t1", ToolResponse: `{"stdout":"x"}`, Routing: "governed_shell"}
	b, err := a.HookInput()
	if err != nil {
		t.Fatal(err)
	}
	in, err := Decode(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	want := &Input{SessionID: "s", Cwd: "/w", HookEventName: "PostToolUse", ToolName: "Bash", ToolUseID: "t1",
		ToolInput:    map[string]json.RawMessage{"command": json.RawMessage(`"ls"`), "timeout": json.RawMessage(`5`)},
		ToolResponse: json.RawMessage(`{"stdout":"x"}`)}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %+v\nwant %+v", in, want)
	}
	for resp, raw := range map[string]string{"plain text": `"plain text"`, "[1]": `[1]`, "42": `"42"`, "": ``} {
		a.ToolResponse = resp
		b, _ := a.HookInput()
		in, err := Decode(strings.NewReader(string(b)))
		if err != nil || string(in.ToolResponse) != raw {
			t.Errorf("tool_response %q: %s %v, want %s", resp, in.ToolResponse, err, raw)
		}
	}
	for _, bad := range []string{"x", `"s"`, `[1]`, `{"a":`} {
		a.ToolInput = bad
		if _, err := a.HookInput(); err == nil {
			t.Errorf("tool_input %q accepted", bad)
		}
	}
}

// The managed settings with the mcp_tool hook: the same events, each
// calling the hook's tool with every field the hook reads, with the same
// timeouts and failure modes; the session's end told by the command hook;
// and the tool denied to the model.
func TestRenderManagedMCP(t *testing.T) {
	t.Parallel()
	var m struct {
		Permissions struct {
			Deny []string `json:"deny"`
		} `json:"permissions"`
		Hooks map[string][]matcherGroup `json:"hooks"`
	}
	cmd := RenderManaged(ManagedOptions{Exe: "/usr/bin/gatehouse", Routing: "governed_shell"})
	if err := json.Unmarshal(RenderManaged(ManagedOptions{Exe: "/usr/bin/gatehouse", Routing: "governed_shell", HookKind: "mcp_tool"}), &m); err != nil {
		t.Fatal(err)
	}
	var c struct {
		Hooks map[string][]matcherGroup `json:"hooks"`
	}
	json.Unmarshal(cmd, &c)
	for ev, groups := range c.Hooks {
		got := m.Hooks[ev]
		if len(got) != 1 || len(got[0].Hooks) != 1 || got[0].Matcher != groups[0].Matcher {
			t.Fatalf("%s: %+v", ev, got)
		}
		h, ch := got[0].Hooks[0], groups[0].Hooks[0]
		if ev == EventSessionEnd {
			if !reflect.DeepEqual(h, ch) {
				t.Errorf("SessionEnd: %+v, want the command hook %+v", h, ch)
			}
			continue
		}
		if h.Type != "mcp_tool" || h.Server != MCPServerName || h.Tool != MCPHookTool || h.Command != "" ||
			h.Timeout != ch.Timeout || h.OnFailure != ch.OnFailure || h.StatusMessage != ch.StatusMessage {
			t.Errorf("%s: %+v, command hook %+v", ev, h, ch)
		}
		if h.Input["routing"] != "governed_shell" || h.Input["tool_input"] != "${tool_input}" || len(h.Input) != len(mcpHookFields)+1 {
			t.Errorf("%s: input %v", ev, h.Input)
		}
	}
	if d := m.Permissions.Deny; len(d) == 0 || d[len(d)-1] != "mcp__gatehouse__claude_hook" {
		t.Errorf("deny %v: the hook's tool is not denied to the model", d)
	}
	if strings.Contains(string(cmd), MCPHookPermission) {
		t.Error("the command hook's settings deny the MCP tool")
	}
}
