package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Claude Code with gatehouse mcp as an MCP server (--mcp-config): the
// model's call to mcp__gatehouse__shell__execute runs in Gatehouse's
// sandbox, the tool_result holds the output, and the event is on the
// record with surface mcp and Claude Code's client name as the agent.
func TestMCPThroughClaude(t *testing.T) {
	w := newWorld(t)
	// MCP tools in the request itself, not behind Claude Code's tool
	// search, so that the fake API can call it at once.
	w.extraEnv = append(w.extraEnv, "ENABLE_TOOL_SEARCH=false")
	w.StartService()
	cfg := map[string]any{"mcpServers": map[string]any{"gatehouse": map[string]any{
		"type": "stdio", "command": e2etest.GatehouseBin, "args": []string{"mcp"}}}}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(w.Dir, "mcp.json")
	must(t, os.WriteFile(path, b, 0o644))

	fake := &fakeAPI{calls: []toolCall{{"mcp__gatehouse__shell__execute", map[string]any{
		"command": "echo from-mcp; cat ~/.ssh/id_e2e 2>/dev/null || echo ssh-hidden; touch ~/outside 2>/dev/null || echo outside-denied",
	}}, {"mcp__gatehouse__shell__execute", map[string]any{"command": "rm -rf ~"}}}}
	w.converse(w.Workspace, "", fake, "--mcp-config", path, "--strict-mcp-config", "--allowedTools", "mcp__gatehouse__shell__execute")
	both := fake.all(t, 2)
	res, denied := both[0], both[1]
	contains(t, "denied tool_result", denied.Content, "Gatehouse denied this command (policy_rule)", "rm-root")
	if !denied.IsError {
		t.Error("a denied call must reach the model as an error")
	}
	contains(t, "tool_result", res.Content, "from-mcp", "ssh-hidden", "outside-denied")
	if strings.Contains(res.Content, "SECRET-KEY") || res.IsError {
		t.Errorf("the tool_result: %+v", res)
	}
	evs := w.Events()
	if len(evs) != 2 {
		t.Fatalf("events %+v", evs)
	}
	e := evs[0]
	if evs[1].Decision != "deny" || evs[1].Surface != api.SurfaceMCP {
		t.Errorf("denied event %+v", evs[1])
	}
	if e.Surface != api.SurfaceMCP || e.Agent == "" || e.Agent == "mcp-client" || e.Status != "completed" || e.SandboxMode == "" {
		t.Errorf("event: surface %q agent %q status %q mode %q", e.Surface, e.Agent, e.Status, e.SandboxMode)
	}
}
