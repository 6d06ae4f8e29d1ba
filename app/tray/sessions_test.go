package tray

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A session's submenu says what it is, then its ports by port: Open on a
// listening port (one item for a port bound on two addresses), Close on
// a forward, also one whose port no longer listens; each click names the
// session, its agent and the port.
func TestMenuSessions(t *testing.T) {
	t.Parallel()
	s := running()
	s.Sessions = []api.SessionNetwork{
		{Agent: "claude-code", SessionID: "0123456789abcdef", Running: 1,
			Listening: []api.ListeningPort{{Port: 3000, Addr: "127.0.0.1"}, {Port: 3000, Addr: "::1"}, {Port: 5173, Addr: "0.0.0.0"}},
			Forwards:  []api.PortForward{{Port: 3000, HostPort: 3001, By: "cli"}, {Port: 8080, HostPort: 8080, By: "dashboard"}}},
		{Agent: "codex", SessionID: "s2"},
	}
	it := find(t, Menu(s, now), KeySessions)
	if it.Label != "Sessions (2)" || it.Disabled || it.Hidden {
		t.Errorf("the item %+v", it)
	}
	if got, want := labels(it.Children), []string{"claude-code · 01234567 · 1 running", "codex · s2 · 0 running"}; !slices.Equal(got, want) {
		t.Errorf("sessions %q, want %q", got, want)
	}
	first := it.Children[0]
	want := []string{"Ports of session 0123456789abcdef:", "Close forward 3000 → 127.0.0.1:3001", "Open port 5173 on this machine", "Close forward 8080 → 127.0.0.1:8080"}
	if got := labels(first.Children); !slices.Equal(got, want) {
		t.Errorf("the session's items %q, want %q", got, want)
	}
	if !first.Children[0].Disabled {
		t.Error("the session's heading is clickable")
	}
	acts := []Action{
		{Kind: ActClosePort, Agent: "claude-code", ID: "0123456789abcdef", Port: 3000},
		{Kind: ActOpenPort, Agent: "claude-code", ID: "0123456789abcdef", Port: 5173},
		{Kind: ActClosePort, Agent: "claude-code", ID: "0123456789abcdef", Port: 8080},
	}
	for i, a := range acts {
		if got := first.Children[i+1].Action; got != a {
			t.Errorf("item %q does %+v, want %+v", first.Children[i+1].Label, got, a)
		}
	}
	if tip := first.Children[3].Tooltip; tip != "opened by dashboard; nothing listens on it in the session now" {
		t.Errorf("the forward of a port nothing listens on says %q", tip)
	}
	if got := labels(it.Children[1].Children); !slices.Equal(got, []string{"Nothing listens in this session"}) {
		t.Errorf("an empty session's items %q", got)
	}

	// No session: shown, disabled; the service down: hidden.
	if it := find(t, Menu(running(), now), KeySessions); it.Label != "Sessions (0)" || !it.Disabled || it.Hidden {
		t.Errorf("no session: %+v", it)
	}
	if it := find(t, Menu(State{Tried: true}, now), KeySessions); !it.Hidden {
		t.Errorf("the service down: %+v", it)
	}
}

// The menu shows at most MaxSessions sessions and MaxPortItems ports of
// each, with a line saying how many more: the binding's places hold it.
func TestMenuSessionsCaps(t *testing.T) {
	t.Parallel()
	s := running()
	for i := range MaxSessions + 2 {
		n := api.SessionNetwork{Agent: "claude-code", SessionID: fmt.Sprint("session-", i)}
		for p := range MaxPortItems + 5 {
			n.Listening = append(n.Listening, api.ListeningPort{Port: 8000 + p, Addr: "127.0.0.1"})
		}
		s.Sessions = append(s.Sessions, n)
	}
	it := find(t, Menu(s, now), KeySessions)
	if len(it.Children) != MaxSessions+1 || it.Children[MaxSessions].Label != "2 sessions more: gatehouse ports lists them" || !it.Children[MaxSessions].Disabled {
		t.Errorf("sessions %q", labels(it.Children))
	}
	for _, c := range it.Children[:MaxSessions] {
		if len(c.Children) != sessionItems {
			t.Errorf("%d items in a session's submenu, want %d", len(c.Children), sessionItems)
		}
		if got := c.Children[len(c.Children)-1].Label; got != "5 more: gatehouse ports lists them" {
			t.Errorf("a session's last item %q", got)
		}
	}
}

// The session networks are read again on a forward opened or closed and
// on an execution's start or end, and polled while one runs.
func TestRefetchPorts(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]bool{api.NoticePorts: true, api.NoticeExecutionStarted: true, api.NoticeExecutionEnded: true,
		api.NoticeApprovalOpened: false, api.NoticeService: false, api.NoticeSandbox: false} {
		if got := RefetchPorts(api.StreamNotice{Type: typ}); got != want {
			t.Errorf("%s: %v, want %v", typ, got, want)
		}
	}
	s := running()
	s.Sessions = []api.SessionNetwork{{SessionID: "a"}, {SessionID: "b"}}
	if SessionsRunning(s) {
		t.Error("running with nothing running")
	}
	s.Sessions[1].Running = 1
	if !SessionsRunning(s) {
		t.Error("not running with an execution running")
	}
}

// A session id or agent that holds controls is shown escaped.
func TestMenuSessionsEscaped(t *testing.T) {
	t.Parallel()
	s := running()
	s.Sessions = []api.SessionNetwork{{Agent: "a\x1b[2Jb", SessionID: "\u202eevil-session"}}
	it := find(t, Menu(s, now), KeySessions).Children[0]
	if it.Label != `a\x1b[2Jb · \u202eevil-se · 0 running` {
		t.Errorf("label %q", it.Label)
	}
}
