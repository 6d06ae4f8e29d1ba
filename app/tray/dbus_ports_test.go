package tray_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/notify/notifytest"
)

// The Sessions submenu over D-Bus: the real 'gatehouse tray' against the
// fake service lists a session's listening port; a click on Open asks the
// service to forward it, by the tray; the forward's Close item replaces
// it, a notification says where the forward is, and a click on Close
// closes it. A port that starts listening
// appears on the next execution's notice.
func TestTrayPortsOverDBus(t *testing.T) {
	conn := sessionBus(t)
	w := serveWatcher(t, conn)

	home := t.TempDir()
	sock := filepath.Join(home, "run", "s.sock")
	svc := newFakeService(t, sock)
	svc.status = api.Status{Version: "test", Sandbox: api.SandboxStatus{Backend: "bubblewrap", Mode: "bubblewrap"}}
	session := api.SessionNetwork{Agent: "claude-code", SessionID: "0123456789abcdef", Since: time.Now(), LastUsed: time.Now(),
		Listening: []api.ListeningPort{{Port: 5173, Addr: "127.0.0.1"}}}
	svc.setSessions([]api.SessionNetwork{session})
	svc.start()

	tr := startTray(t, conn, w, sock, home)
	const label = "claude-code · 01234567 · 0 running"
	items := func(root node) []string {
		sessions, _ := root.child("Sessions (1)")
		s, _ := sessions.child(label)
		return s.labels()
	}
	root := tr.waitFor("the session's port", func(root node) bool {
		return slices.Contains(items(root), "Open port 5173 on this machine")
	})
	if got, want := items(root), []string{"Ports of session 0123456789abcdef:", "Open port 5173 on this machine"}; !slices.Equal(got, want) {
		t.Errorf("the session's submenu %q, want %q", got, want)
	}
	click := func(root node, item string) {
		t.Helper()
		sessions, _ := root.child("Sessions (1)")
		s, _ := sessions.child(label)
		it, ok := s.child(item)
		if !ok {
			t.Fatalf("no %q in:\n%s", item, s)
		}
		tr.click(it.ID)
	}
	asked := func(n int) []portAsk {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); len(svc.portsAsked()) < n && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		return svc.portsAsked()
	}

	// Open: the service is asked, by the tray; the menu offers Close.
	click(root, "Open port 5173 on this machine")
	req := api.PortRequest{Agent: "claude-code", SessionID: "0123456789abcdef", Port: 5173, By: api.ByTray}
	if got, want := asked(1), []portAsk{{true, req}}; !slices.Equal(got, want) {
		t.Fatalf("the service was asked %+v, want %+v", got, want)
	}
	root = tr.waitFor("the forward", func(root node) bool {
		return slices.Contains(items(root), "Close forward 5173 → 127.0.0.1:5174")
	})
	// A notification says where it is, where a notification server runs.
	if notifytest.Available() || notifytest.Required() {
		waitNotification(t, "Gatehouse: port 5173 open on this machine", "http://127.0.0.1:5174/ reaches port 5173 of claude-code's session 01234567")
	}

	// Close: the service is asked; the menu offers Open again.
	click(root, "Close forward 5173 → 127.0.0.1:5174")
	if got, want := asked(2), []portAsk{{true, req}, {false, req}}; !slices.Equal(got, want) {
		t.Fatalf("the service was asked %+v, want %+v", got, want)
	}
	tr.waitFor("the forward closed", func(root node) bool {
		return slices.Contains(items(root), "Open port 5173 on this machine")
	})

	// A server starts listening: the next execution's notice brings it.
	session.Listening = append(session.Listening, api.ListeningPort{Port: 8080, Addr: "0.0.0.0"})
	svc.setSessions([]api.SessionNetwork{session})
	svc.push(api.StreamNotice{Type: api.NoticeExecutionEnded, Event: &api.Event{ID: "e1", Time: time.Now(), Agent: "claude-code",
		ActionType: api.ActionShellExecute, Decision: "allow", Status: "completed", SessionID: session.SessionID}})
	tr.waitFor("the new port", func(root node) bool {
		return slices.Contains(items(root), "Open port 8080 on this machine")
	})
}
