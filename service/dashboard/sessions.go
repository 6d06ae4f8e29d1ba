package dashboard

// The Sessions page: the agent sessions' shared networks, what listens in
// each and the ports the person opened on this machine, as the service
// lists them (GET /v1/ports serves the same list). Open and Close call the
// service's OpenPort and ClosePort, which decide what may be opened: the
// page offers Open on every listening port without a forward and leaves
// the refusals (an egress bridge, a port nothing listens on any more) to
// the service.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// A portRow is one port of a session: listening, forwarded, or both.
type portRow struct {
	Port int
	// Addr is what it listens on; "" when nothing listens any more and
	// only the forward is left.
	Addr    string
	Forward *api.PortForward
}

type sessionView struct {
	N    api.SessionNetwork
	Rows []portRow
}

type sessionsView struct {
	Sessions []sessionView
	// State is a digest of the list, which the page's script compares to
	// GET /sessions/state's to reload when the list changed.
	State string
}

// viewSessions pairs each session's listening ports with its forwards,
// by port.
func viewSessions(list []api.SessionNetwork) sessionsView {
	v := sessionsView{State: sessionsState(list)}
	for _, n := range list {
		sv := sessionView{N: n}
		fw := map[int]*api.PortForward{}
		for i := range n.Forwards {
			fw[n.Forwards[i].Port] = &n.Forwards[i]
		}
		seen := map[int]bool{}
		for _, l := range n.Listening {
			if seen[l.Port] {
				if r := &sv.Rows[len(sv.Rows)-1]; r.Port == l.Port {
					r.Addr += ", " + l.Addr
				}
				continue
			}
			seen[l.Port] = true
			sv.Rows = append(sv.Rows, portRow{Port: l.Port, Addr: l.Addr, Forward: fw[l.Port]})
		}
		for i := range n.Forwards {
			if f := &n.Forwards[i]; !seen[f.Port] {
				sv.Rows = append(sv.Rows, portRow{Port: f.Port, Forward: f})
			}
		}
		v.Sessions = append(v.Sessions, sv)
	}
	return v
}

// sessionsState is a digest of what the page shows of list.
func sessionsState(list []api.SessionNetwork) string {
	b, _ := json.Marshal(list)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request, ss *session) {
	s.render(w, http.StatusOK, "sessions", "Sessions", ss, viewSessions(s.opts.Service.Ports()))
}

// sessionsStateJSON is the digest of the list now, for the page's script.
func (s *Server) sessionsStateJSON(w http.ResponseWriter, r *http.Request, _ *session) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"state": sessionsState(s.opts.Service.Ports())})
}

// portRequest is the form's session and port, from the dashboard.
func portRequest(r *http.Request) api.PortRequest {
	port, _ := strconv.Atoi(strings.TrimSpace(r.PostFormValue("port")))
	return api.PortRequest{Agent: r.PostFormValue("agent"), SessionID: r.PostFormValue("session_id"), Port: port, By: api.ByDashboard}
}

// openPort asks the service to forward a session's port to this
// machine's loopback.
func (s *Server) openPort(w http.ResponseWriter, r *http.Request, ss *session) {
	req := portRequest(r)
	resp := s.opts.Service.OpenPort(req)
	if resp.Error != "" || resp.Forward == nil {
		s.setFlash(ss, fmt.Sprintf("Port %d not opened: %s", req.Port, termesc.Line(resp.Error)))
	} else {
		f := resp.Forward
		s.setFlash(ss, fmt.Sprintf("Opened port %d of session %s on this machine: http://127.0.0.1:%d/", f.Port, termesc.Line(f.SessionID), f.HostPort))
	}
	http.Redirect(w, r, "/sessions", http.StatusSeeOther)
}

// closePort ends a forward.
func (s *Server) closePort(w http.ResponseWriter, r *http.Request, ss *session) {
	req := portRequest(r)
	resp := s.opts.Service.ClosePort(req)
	if resp.Error != "" || resp.Forward == nil {
		s.setFlash(ss, fmt.Sprintf("Forward of port %d not closed: %s", req.Port, termesc.Line(resp.Error)))
	} else {
		f := resp.Forward
		s.setFlash(ss, fmt.Sprintf("Closed the forward of port %d of session %s (127.0.0.1:%d).", f.Port, termesc.Line(f.SessionID), f.HostPort))
	}
	http.Redirect(w, r, "/sessions", http.StatusSeeOther)
}
