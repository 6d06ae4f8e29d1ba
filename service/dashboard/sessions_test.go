package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

func (f *fakeService) Ports() []api.SessionNetwork {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.ports)
	for i := range out {
		out[i].Forwards = slices.Clone(out[i].Forwards)
	}
	return out
}

// OpenPort forwards a listed port to the next one up, as a service whose
// host has the port taken; it refuses a port nothing listens on, as the
// service does.
func (f *fakeService) OpenPort(req api.PortRequest) api.PortResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.portReqs = append(f.portReqs, fmt.Sprintf("open %s %s %d by %s", req.Agent, req.SessionID, req.Port, req.By))
	for i := range f.ports {
		n := &f.ports[i]
		if n.SessionID != req.SessionID || !slices.ContainsFunc(n.Listening, func(l api.ListeningPort) bool { return l.Port == req.Port }) {
			continue
		}
		fw := api.PortForward{Agent: n.Agent, SessionID: n.SessionID, Port: req.Port, HostPort: req.Port + 1, Since: time.Now(), By: req.By}
		n.Forwards = append(n.Forwards, fw)
		return api.PortResponse{Forward: &fw}
	}
	return api.PortResponse{Error: fmt.Sprintf("port: nothing listens on %d in session %s", req.Port, req.SessionID)}
}

func (f *fakeService) ClosePort(req api.PortRequest) api.PortResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.portReqs = append(f.portReqs, fmt.Sprintf("close %s %s %d by %s", req.Agent, req.SessionID, req.Port, req.By))
	for i := range f.ports {
		n := &f.ports[i]
		if j := slices.IndexFunc(n.Forwards, func(fw api.PortForward) bool { return fw.Port == req.Port }); n.SessionID == req.SessionID && j >= 0 {
			fw := n.Forwards[j]
			n.Forwards = slices.Delete(n.Forwards, j, j+1)
			return api.PortResponse{Forward: &fw}
		}
	}
	return api.PortResponse{Error: fmt.Sprintf("port: session %s has no forward of port %d", req.SessionID, req.Port)}
}

func (f *fakeService) portsAsked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.portReqs)
}

// viewSessions pairs listening ports and forwards by port: a port bound
// on two addresses is one row, a forward whose port no longer listens
// keeps its row (to be closed).
func TestViewSessions(t *testing.T) {
	t.Parallel()
	fw := func(port, host int) api.PortForward { return api.PortForward{Port: port, HostPort: host} }
	v := viewSessions([]api.SessionNetwork{{Agent: "claude-code", SessionID: "s1",
		Listening: []api.ListeningPort{{Port: 3000, Addr: "127.0.0.1"}, {Port: 3000, Addr: "::1"}, {Port: 5173, Addr: "0.0.0.0"}},
		Forwards:  []api.PortForward{fw(3000, 3001), fw(8080, 8080)}}})
	var got []string
	for _, r := range v.Sessions[0].Rows {
		host := 0
		if r.Forward != nil {
			host = r.Forward.HostPort
		}
		got = append(got, fmt.Sprintf("%d %q %d", r.Port, r.Addr, host))
	}
	want := []string{`3000 "127.0.0.1, ::1" 3001`, `5173 "0.0.0.0" 0`, `8080 "" 8080`}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if viewSessions(nil).State == v.State {
		t.Error("the state of two lists is the same")
	}
}

// The Sessions page lists each session's ports with Open or Close, and
// the forms reach the service's OpenPort and ClosePort from the
// dashboard, with its CSRF token; the service's refusal is shown as it
// says it.
func TestSessionsPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	f.svc.ports = []api.SessionNetwork{{Agent: "claude-code", SessionID: "0123456789abcdef", Since: time.Now(), LastUsed: time.Now(), Running: 1,
		Listening: []api.ListeningPort{{Port: 5173, Addr: "127.0.0.1"}}, Forwards: []api.PortForward{}}}
	c := f.client()
	f.login(c)
	page := func() string {
		_, body := f.getBody(c, f.base+"/sessions", nil)
		return body
	}
	for _, want := range []string{"claude-code · session 0123456789abcdef", `<tr data-port="5173">`, "Open on this machine", `action="/sessions/open"`} {
		if body := page(); !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	token := f.csrf(c, "/sessions")
	form := url.Values{"csrf": {token}, "agent": {"claude-code"}, "session_id": {"0123456789abcdef"}, "port": {"5173"}}
	// Without the token, nothing is asked.
	if resp, _ := f.post(c, "/sessions/open", f.base, url.Values{"session_id": {"0123456789abcdef"}, "port": {"5173"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an open without the CSRF token: %s", resp.Status)
	}
	if resp, _ := f.post(c, "/sessions/open", "http://evil.example", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an open from another origin: %s", resp.Status)
	}
	f.post(c, "/sessions/open", f.base, form)
	if body := page(); !strings.Contains(body, "Opened port 5173 of session 0123456789abcdef on this machine: http://127.0.0.1:5174/") ||
		!strings.Contains(body, `href="http://127.0.0.1:5174/"`) || !strings.Contains(body, `action="/sessions/close"`) {
		t.Errorf("after open:\n%s", body)
	}
	f.post(c, "/sessions/close", f.base, form)
	if body := page(); !strings.Contains(body, "Closed the forward of port 5173 of session 0123456789abcdef (127.0.0.1:5174).") {
		t.Errorf("after close:\n%s", body)
	}
	form.Set("port", "22")
	f.post(c, "/sessions/open", f.base, form)
	if body := page(); !strings.Contains(body, "Port 22 not opened: port: nothing listens on 22 in session 0123456789abcdef") {
		t.Errorf("a refused open:\n%s", body)
	}
	want := []string{"open claude-code 0123456789abcdef 5173 by dashboard", "close claude-code 0123456789abcdef 5173 by dashboard", "open claude-code 0123456789abcdef 22 by dashboard"}
	if got := f.svc.portsAsked(); !slices.Equal(got, want) {
		t.Errorf("the service was asked %q, want %q", got, want)
	}
	// The script's digest follows the list.
	_, st1 := f.getBody(c, f.base+"/sessions/state", nil)
	f.svc.mu.Lock()
	f.svc.ports = nil
	f.svc.mu.Unlock()
	if _, st2 := f.getBody(c, f.base+"/sessions/state", nil); st1 == st2 || !strings.Contains(st2, `"state":"`+viewSessions(nil).State+`"`) {
		t.Errorf("the state before %s and after %s the session went", st1, st2)
	}
	if body := page(); !strings.Contains(body, `id="no-sessions"`) {
		t.Errorf("no session:\n%s", body)
	}
}
