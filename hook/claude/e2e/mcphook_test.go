package e2e

// Gatehouse's hook as a tool of its MCP server (hook kind mcp_tool):
// Claude Code calls gatehouse mcp's claude_hook tool for PreToolUse,
// PostToolUse and PermissionRequest instead of starting the hook's
// process. The same decisions, and the same failures closed: with the
// server missing, failing, or its service down, no command runs outside
// Claude Code's sandbox without a person.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
)

// mcpSettings writes the managed settings rendered with the mcp_tool
// hook, changed by edit, and the MCP configuration that runs the server
// they call, and returns their paths.
func (w *world) mcpSettings(name string, edit func(m map[string]any)) (settings, mcpConfig string) {
	var m map[string]any
	must(w.TB, json.Unmarshal(w.ghRun("managed-settings", "--hook-kind", "mcp_tool"), &m))
	if h := hookCommand(m); h == nil || h["type"] != "mcp_tool" {
		w.TB.Fatalf("the settings carry no mcp_tool hook: %v", m)
	}
	if edit != nil {
		edit(m)
	}
	settings = writeJSON(w.TB, filepath.Join(w.Dir, name+".json"), m)
	mcpConfig = filepath.Join(w.Dir, name+"-mcp.json")
	must(w.TB, os.WriteFile(mcpConfig, w.ghRun("managed-settings", "--mcp-config"), 0o644))
	return settings, mcpConfig
}

// The whole, as TestRelayRunsOutsideClaudeSandbox with the command hook:
// the relay of a routed command (gatehouse's own, the server's program)
// runs outside Claude Code's sandbox, the command in Gatehouse's, a
// model's own request to leave the sandbox included; the service records
// both with Claude Code's session.
func TestMCPHookRelayOutside(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	hostNet, err := os.Readlink("/proc/self/ns/net")
	must(t, err)
	const where = "echo gh-exec=$GATEHOUSE_EXECUTION_ID; echo net=$(readlink /proc/self/ns/net); " +
		"cat ~/.ssh/id_e2e 2>/dev/null || echo ssh-hidden; touch ~/escaped-a 2>/dev/null && echo home-writable || echo home-read-only"
	calls := []toolCall{
		{"Bash", map[string]any{"command": waitRelease + where, "description": "e2e", "timeout": 60000}},
		{"Bash", map[string]any{"command": where, "description": "e2e", "dangerouslyDisableSandbox": true}},
		// The model calling the hook's tool itself: refused by the
		// settings' permissions.deny, which the hooks' calls pass.
		{claude.MCPHookPermission, map[string]any{"hook_event_name": "PreToolUse", "session_id": "x", "cwd": w.Workspace,
			"tool_name": "Bash", "tool_input": `{"command":"echo model-ticket"}`}},
	}
	// MCP tools offered to the model whole, not behind a search: what
	// the model is offered is then what the settings allow.
	w.extraEnv = []string{"ENABLE_TOOL_SEARCH=false"}
	s, mc := w.mcpSettings("mcp", nil)
	fa, p, ok, out := w.watchedConversation(s, calls, "--mcp-config", mc)
	if !ok {
		t.Fatalf("no relay process seen while the command waited\nclaude: %s", out)
	}
	if p.netns != hostNet {
		t.Errorf("the relay (pid %d) ran in network namespace %s, not the host's %s: inside Claude Code's sandbox", p.pid, p.netns, hostNet)
	}
	// Two results: the fake API asks for a tool only when Claude Code
	// offers it, and the rule takes the hook's tool off the model's list.
	res := fa.all(t, 2)
	for i, r := range res {
		contains(t, fmt.Sprintf("tool_result %d", i), r.Content, "gh-exec=", "ssh-hidden", "home-read-only")
		if r.IsError || strings.Contains(r.Content, "gh-exec=\n") || strings.Contains(r.Content, "net="+hostNet) {
			t.Errorf("tool_result %d: the command did not run in Gatehouse's sandbox:\n%s", i, r.Content)
		}
	}
	noEscape(t, w)
	var runs int
	for _, e := range w.Events() {
		if e.ParentID != "" {
			runs++
			if e.Status != "completed" || e.SessionID == "" || !strings.HasPrefix(e.SandboxMode, "bubblewrap") {
				t.Errorf("execution event: %+v", e)
			}
		}
	}
	if runs != 2 {
		t.Errorf("%d executions recorded, want 2: %+v", runs, w.Events())
	}

	// Without the rule the model is offered the tool, and its call is
	// refused in claude -p (no rule allows it, and no one is asked).
	open, _ := w.mcpSettings("mcp-open", func(m map[string]any) {
		p := m["permissions"].(map[string]any)
		p["deny"] = slices.DeleteFunc(p["deny"].([]any), func(r any) bool { return r == claude.MCPHookPermission })
	})
	fa, _, _, _ = w.watchedConversation(open, calls[2:], "--mcp-config", mc)
	r := fa.result(t)
	t.Logf("the model calling the hook's tool, the rule taken out: %s", outcome(r))
	if !r.IsError || strings.Contains(r.Content, "relay") {
		t.Errorf("the model called the hook's tool: %s", outcome(r))
	}
}

// With the hook's server missing (no --mcp-config), failing to start, or
// without its tool, or with the service down, a model's command never runs
// outside Claude Code's sandbox without a person, asking to leave it or
// not: the PreToolUse hook blocks (onFailure block), and a
// PermissionRequest hook that fails leaves the question to the person.
func TestMCPHookFailsClosed(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	hostNet, err := os.Readlink("/proc/self/ns/net")
	must(t, err)
	s, mc := w.mcpSettings("mcp", nil)
	failing := filepath.Join(w.Dir, "failing-mcp.json")
	must(t, os.WriteFile(failing, []byte(`{"mcpServers": {"gatehouse": {"type": "stdio", "command": "/bin/false", "args": []}}}`), 0o644))
	noTool, _ := w.mcpSettings("no-tool", func(m map[string]any) {
		for _, ev := range []string{"PreToolUse", "PermissionRequest"} {
			hooksOf(m)[ev].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["tool"] = "nope"
		}
	})
	for _, tc := range []struct {
		id, name string
		settings string
		extra    []string
	}{
		{"nomcp", "server missing", s, nil},
		{"failing", "server failing", s, []string{"--mcp-config", failing}},
		{"notool", "tool missing", noTool, []string{"--mcp-config", mc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fa, p, seen, out := w.watchedConversation(tc.settings, escapeCalls(tc.id), tc.extra...)
			w.checkEscapes(t, tc.id, fa.all(t, 2), false)
			if seen && p.netns == hostNet {
				t.Errorf("a relay ran outside Claude Code's sandbox\nclaude: %s", out)
			}
		})
	}

	// The PermissionRequest hook's call failing, the PreToolUse one
	// routing: the relay asks, and Claude Code asks the person.
	t.Run("PermissionRequest failing", func(t *testing.T) {
		ps, _ := w.mcpSettings("perm-fails", func(m map[string]any) {
			hooksOf(m)["PermissionRequest"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["tool"] = "nope"
		})
		calls := []toolCall{{"Bash", map[string]any{"command": waitRelease + "echo routed > routed-perm", "description": "e2e", "timeout": 60000}}}
		fa, p, seen, out := w.watchedConversation(ps, calls, "--mcp-config", mc)
		r := fa.result(t)
		if seen && p.netns == hostNet {
			t.Errorf("the relay (pid %d) ran outside Claude Code's sandbox without Gatehouse's word\nclaude: %s", p.pid, out)
		}
		if _, err := os.Stat(filepath.Join(w.Workspace, "routed-perm")); err == nil || !r.IsError {
			t.Errorf("the routed command ran: %s", outcome(r))
		}
		contains(t, "tool_result", r.Content, "Run outside of the sandbox")
	})

	t.Run("service down", func(t *testing.T) {
		w.StopService()
		fa, _, _, _ := w.watchedConversation(s, escapeCalls("down"), "--mcp-config", mc)
		res := fa.all(t, 2)
		w.checkEscapes(t, "down", res, false)
		for i, r := range res {
			contains(t, fmt.Sprintf("call %d", i), r.Content, "not reachable")
		}
	})
}
