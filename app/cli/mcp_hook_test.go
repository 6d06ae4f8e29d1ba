package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
)

// The hook tool answers exactly what gatehouse hook claude answers, for
// every event it handles: a routed Bash call (the relay, its ticket
// aside), a denied one, a file tool's refusal, a PermissionRequest for a
// relay of a ticket the service never issued, a SessionEnd, a call it
// cannot read; and with no service, the same refusal.
func TestMCPHookTool(t *testing.T) {
	w := newMCPWorld(t, "policy:\n  rules:\n    - {name: no-curl, action: deny, command: [curl]}\n")
	w.hookTool = true
	exe, err := exec.LookPath("gatehouse")
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(w.home, "src")
	bash := func(cmd string) claude.MCPHookArgs {
		return claude.MCPHookArgs{HookEventName: "PreToolUse", SessionID: "s1", Cwd: ws, ToolName: "Bash",
			ToolInput: `{"command":` + quoteJSON(cmd) + `}`, Routing: "governed_shell"}
	}
	relay := claude.ShellQuote(exe) + " relay ght1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	cases := []struct {
		name string
		args claude.MCPHookArgs
		want string // held by both answers
	}{
		{"routed", bash("true"), `"updatedInput"`},
		{"denied", bash("curl https://example.com"), `"permissionDecision":"deny"`},
		{"file tool", claude.MCPHookArgs{HookEventName: "PreToolUse", SessionID: "s1", Cwd: ws, ToolName: "Read",
			ToolInput: `{"file_path":` + quoteJSON(filepath.Join(w.home, ".ssh", "id_rsa")) + `}`}, `"permissionDecision":"deny"`},
		{"permission", claude.MCPHookArgs{HookEventName: "PermissionRequest", SessionID: "s1", Cwd: ws, ToolName: "Bash",
			ToolInput: `{"command":` + quoteJSON(relay) + `,"dangerouslyDisableSandbox":true}`}, `"behavior":"deny"`},
		{"session end", claude.MCPHookArgs{HookEventName: "SessionEnd", SessionID: "s1", Cwd: ws}, ""},
		{"unreadable", claude.MCPHookArgs{HookEventName: "PreToolUse", SessionID: "s1", Cwd: ws, ToolName: "Bash", ToolInput: "not json"}, `"permissionDecision":"deny"`},
	}
	ticket := regexp.MustCompile(`ght1\.[A-Za-z0-9_-]+`)
	check := func(t *testing.T, s *mcp.ClientSession, service bool) {
		for _, tc := range cases {
			r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: claude.MCPHookTool, Arguments: tc.args})
			if err != nil || r.IsError || len(r.Content) != 1 {
				t.Fatalf("%s: %+v %v", tc.name, r, err)
			}
			got := strings.TrimSpace(r.Content[0].(*mcp.TextContent).Text)
			in, err := tc.args.HookInput()
			if err != nil {
				in = nil // unreadable: the tool decides on no input, as the command hook does
			}
			cmd := exec.Command(exe, "hook", "claude", "--routing", "governed_shell")
			cmd.Env, cmd.Stdin = w.env(), bytes.NewReader(in)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: hook claude: %v", tc.name, err)
			}
			want := strings.TrimSpace(string(out))
			if want == "" {
				want = "{}"
			}
			if ticket.ReplaceAllString(got, "TICKET") != ticket.ReplaceAllString(want, "TICKET") || service && !strings.Contains(got, tc.want) {
				t.Errorf("%s: the tool answered\n%s\nthe command hook\n%s", tc.name, got, want)
			}
		}
	}
	t.Run("no service", func(t *testing.T) { check(t, w.connect("claude-code", nil), false) })
	w.startService()
	t.Run("service", func(t *testing.T) { check(t, w.connect("claude-code", nil), true) })
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
