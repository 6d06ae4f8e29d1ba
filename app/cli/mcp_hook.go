package cli

// gatehouse mcp's second tool: Claude Code's hook, called by Claude Code
// itself (a hook of type mcp_tool, 'gatehouse managed-settings --hook-kind
// mcp_tool') rather than started as a process for each event. It answers
// exactly what 'gatehouse hook claude' answers, through the same
// decide.Claude.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

func claudeHookTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  claude.MCPHookTool,
		Title: "Gatehouse's Claude Code hook",
		Description: "Claude Code's PreToolUse, PostToolUse and PermissionRequest hook, called by Claude Code's settings " +
			"(a hook of type mcp_tool), not by the model: it answers with the hook's JSON output. " +
			"To run a command, use " + ToolName + " or Bash.",
		InputSchema: claude.MCPHookInputSchema(),
	}
}

// hook answers one hook event. Input it cannot read is denied, as the
// command hook denies it.
func (s *mcpServer) hook(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.calls.Add(1)
	defer s.calls.Done()
	var a claude.MCPHookArgs
	var stdin io.Reader = bytes.NewReader(nil)
	if err := json.Unmarshal(req.Params.Arguments, &a); err == nil {
		if in, err := a.HookInput(); err == nil {
			stdin = bytes.NewReader(in)
		}
	}
	if a.Routing != "" && a.Routing != api.RoutingGovernedShell && a.Routing != api.RoutingFramework {
		return toolError("routing " + a.Routing + ": want governed_shell or framework"), nil
	}
	out := decide.Claude(ctx, decide.Env{Stdin: stdin, Getenv: s.hookEnv}, a.Routing)
	var b bytes.Buffer
	if out == nil {
		b.WriteString("{}") // not ours: no answer, Claude Code goes on as usual
	} else if err := out.Encode(&b); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil
}

// hookEnv is the environment the hook reads. Claude Code gives a hook's
// process CLAUDE_PROJECT_DIR, the session's project directory; a server
// started without it was started there (startDir).
func (s *mcpServer) hookEnv(k string) string {
	if v := s.env.Getenv(k); v != "" || k != "CLAUDE_PROJECT_DIR" {
		return v
	}
	return s.startDir
}
