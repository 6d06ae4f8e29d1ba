package decide

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The PermissionRequest answer: allow for exactly this program's relay of
// a ticket the service says is live for the session; deny, with the
// service's reason, for this program's relay of any other ticket; nothing
// (the person decides) for every other command or tool, another
// program's relay, or no service to ask.
func TestPermission(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var asked []api.TicketCheckRequest
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.PathTicketCheck, func(w http.ResponseWriter, r *http.Request) {
		var req api.TicketCheckRequest
		json.NewDecoder(r.Body).Decode(&req)
		asked = append(asked, req)
		resp := api.TicketCheckResponse{Reason: "the ticket was already used; a ticket runs its command once"}
		if req.Ticket == "ght1.live" && req.SessionID == "s1" && req.Agent == "claude-code" {
			resp = api.TicketCheckResponse{Live: true}
		}
		json.NewEncoder(w).Encode(resp)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	// The relay's program: a test binary is not named gatehouse.
	self := "/opt/gatehouse/bin/gatehouse-hook"
	ownPath = func() (string, error) { return self, nil }
	t.Cleanup(func() { ownPath = selfPath })
	home := t.TempDir()
	ask := func(socket, session, tool string, input map[string]any) *claude.Output {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PermissionRequest", "session_id": session, "cwd": home,
			"permission_mode": "default", "tool_name": tool, "tool_input": input})
		return Claude(context.Background(), Env{Stdin: strings.NewReader(string(b)), Getenv: func(k string) string {
			switch k {
			case "HOME":
				return home
			case "GATEHOUSE_SOCKET":
				return socket
			}
			return ""
		}}, "")
	}
	relay := func(exe, ticket string) map[string]any {
		return map[string]any{"command": claude.RelayCommand(exe, ticket), "dangerouslyDisableSandbox": true}
	}
	other := filepath.Join(filepath.Dir(self), "gatehouse-hook-elsewhere")
	for _, tc := range []struct {
		name, socket, session, tool string
		input                       map[string]any
		want                        string // "allow", "deny" or "" (no answer)
		asks                        bool
	}{
		{"a live relay", sock, "s1", "Bash", relay(self, "ght1.live"), "allow", true},
		{"a live relay, in Claude Code's sandbox", sock, "s1", "Bash", map[string]any{"command": claude.RelayCommand(self, "ght1.live")}, "allow", true},
		{"another session's ticket", sock, "s2", "Bash", relay(self, "ght1.live"), "deny", true},
		{"a used ticket", sock, "s1", "Bash", relay(self, "ght1.used"), "deny", true},
		{"another program's relay", sock, "s1", "Bash", relay(other, "ght1.live"), "", false},
		{"a relay with more after it", sock, "s1", "Bash", map[string]any{"command": claude.RelayCommand(self, "ght1.live") + "; id", "dangerouslyDisableSandbox": true}, "", false},
		{"the model's own command", sock, "s1", "Bash", map[string]any{"command": "curl example.com", "dangerouslyDisableSandbox": true}, "", false},
		{"another tool", sock, "s1", "WebFetch", map[string]any{"url": "https://example.com"}, "", false},
		{"no service", filepath.Join(home, "none.sock"), "s1", "Bash", relay(self, "ght1.live"), "", false},
	} {
		n := len(asked)
		out := ask(tc.socket, tc.session, tc.tool, tc.input)
		got := ""
		if out != nil {
			d := out.HookSpecificOutput
			if d.HookEventName != claude.EventPermissionRequest || d.Decision == nil || d.PermissionDecision != "" || d.UpdatedInput != nil {
				t.Errorf("%s: answer %+v", tc.name, d)
				continue
			}
			got = d.Decision.Behavior
			if got == "deny" && !strings.Contains(d.Decision.Message, "the ticket was already used") {
				t.Errorf("%s: deny without the service's reason: %q", tc.name, d.Decision.Message)
			}
		}
		if got != tc.want {
			t.Errorf("%s: answered %q, want %q", tc.name, got, tc.want)
		}
		if (len(asked) > n) != tc.asks {
			t.Errorf("%s: asked the service %v, want %v", tc.name, len(asked) > n, tc.asks)
		}
	}
}
