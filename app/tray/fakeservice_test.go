package tray_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/socket"
)

// The fake service's dashboard login: a code, and the sign-in page that
// would post it.
const (
	fakeLoginCode  = "Zm9yZ2VkLWxvZ2luLWNvZGUtbm90LWEtcmVhbC1vbmUx"
	fakeSignInPage = "/run/user/1000/gatehouse/dashboard/login-0123456789abcdef.html"
)

// fakeService serves the part of the admission API the tray reads, on a
// unix socket, from state the test sets: status, events, approvals,
// answers, workspaces and the live stream. It can be stopped and started
// again on the same socket, as a service restarts.
type fakeService struct {
	t    *testing.T
	path string

	mu         sync.Mutex
	status     api.Status
	events     []api.Event // newest first
	approvals  []api.Approval
	workspaces []api.Workspace
	answers    []api.AnswerRequest
	subs       map[chan api.StreamNotice]bool
	srv        *http.Server

	// sessions are the session networks; ports the opens and closes
	// asked, in order.
	sessions []api.SessionNetwork
	ports    []portAsk
}

func newFakeService(t *testing.T, path string) *fakeService {
	f := &fakeService{t: t, path: path, subs: map[chan api.StreamNotice]bool{}}
	t.Cleanup(f.stop)
	return f
}

func (f *fakeService) start() {
	l, err := socket.Listen(f.path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.PathStatus, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		st := f.status
		st.Approvals = len(f.approvals)
		f.mu.Unlock()
		reply(w, st)
	})
	mux.HandleFunc("GET "+api.PathEvents, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, api.EventsResponse{Events: slices.Clone(f.events)})
	})
	mux.HandleFunc("GET "+api.PathApprovals, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, api.ApprovalsResponse{Approvals: slices.Clone(f.approvals)})
	})
	mux.HandleFunc("GET "+api.PathWorkspaces, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, api.WorkspacesResponse{Workspaces: slices.Clone(f.workspaces)})
	})
	mux.HandleFunc("POST "+api.PathAnswer, func(w http.ResponseWriter, r *http.Request) {
		var req api.AnswerRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.answers = append(f.answers, req)
		i := slices.IndexFunc(f.approvals, func(a api.Approval) bool { return a.ID == req.ID })
		if i < 0 || !slices.Contains(f.approvals[i].Answers, req.Answer) {
			f.mu.Unlock()
			reply(w, api.AnswerResponse{Error: "no such request, or an answer it does not offer"})
			return
		}
		a := f.approvals[i]
		f.mu.Unlock()
		f.push(api.StreamNotice{Type: api.NoticeApprovalAnswered, Approval: &a,
			Answer: &api.ApprovalRecord{ID: a.ID, Kind: a.Kind, Answer: req.Answer, By: req.By}})
		reply(w, api.AnswerResponse{OK: true})
	})
	mux.HandleFunc("GET "+api.PathPorts, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, api.PortsResponse{Sessions: cloneSessions(f.sessions)})
	})
	mux.HandleFunc("POST "+api.PathPortsOpen, f.port(true))
	mux.HandleFunc("POST "+api.PathPortsClose, f.port(false))
	mux.HandleFunc("GET "+api.PathStream, f.stream)
	mux.HandleFunc("GET "+api.PathDoctor, func(w http.ResponseWriter, r *http.Request) {
		reply(w, api.DoctorReport{OK: true, Checks: []api.DoctorCheck{{Name: "service", State: api.DoctorOK, Message: "running"}},
			Facts: []api.DoctorFact{{Label: "backend", Value: "bubblewrap (requested auto)"}}})
	})
	mux.HandleFunc("POST "+api.PathDashboardLogin, func(w http.ResponseWriter, r *http.Request) {
		reply(w, api.DashboardLoginResponse{URL: "http://127.0.0.1:1/login", Code: fakeLoginCode, LaunchFile: fakeSignInPage})
	})
	srv := &http.Server{Handler: mux}
	f.mu.Lock()
	f.srv = srv
	f.mu.Unlock()
	go srv.Serve(l)
}

// stream sends the service's state and the pending approvals, then every
// notice pushed, as the service's stream does.
func (f *fakeService) stream(w http.ResponseWriter, r *http.Request) {
	c := make(chan api.StreamNotice, 64)
	f.mu.Lock()
	st := f.status
	st.Approvals = len(f.approvals)
	first := []api.StreamNotice{{Type: api.NoticeService, State: "running", Status: &st, Sandbox: &st.Sandbox}}
	for _, a := range f.approvals {
		first = append(first, api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &a})
	}
	f.subs[c] = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.subs, c)
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for _, n := range first {
		api.WriteEvent(w, n)
	}
	rc.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case n := <-c:
			if api.WriteEvent(w, n) != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// push applies n to the fake's state and sends it to every subscriber.
// What n points to is copied: the caller may change it afterwards.
func (f *fakeService) push(n api.StreamNotice) {
	n.Event, n.Approval, n.Sandbox = clone(n.Event), clone(n.Approval), clone(n.Sandbox)
	if n.Time.IsZero() {
		n.Time = time.Now().UTC()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch n.Type {
	case api.NoticeApprovalOpened:
		f.approvals = append(f.approvals, *n.Approval)
	case api.NoticeApprovalAnswered:
		f.approvals = slices.DeleteFunc(f.approvals, func(a api.Approval) bool { return a.ID == n.Approval.ID })
	case api.NoticeExecutionStarted, api.NoticeExecutionEnded:
		f.events = slices.Insert(f.events, 0, *n.Event)
	case api.NoticeSandbox:
		f.status.Sandbox = *n.Sandbox
	}
	for c := range f.subs {
		c <- n
	}
}

// portAsk is one open (Open) or close asked of the fake.
type portAsk struct {
	Open bool
	api.PortRequest
}

// port opens or closes a forward as the service does: a port to open must
// listen in the session, and is forwarded to the next port up (as when
// the host's is taken); a close needs a forward. A change is told on the
// stream.
func (f *fakeService) port(open bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req api.PortRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.ports = append(f.ports, portAsk{open, req})
		var resp api.PortResponse
		i := slices.IndexFunc(f.sessions, func(n api.SessionNetwork) bool { return n.SessionID == req.SessionID && n.Agent == req.Agent })
		switch {
		case i < 0:
			resp.Error = "session_id: no session network " + req.SessionID
		case open && slices.ContainsFunc(f.sessions[i].Listening, func(l api.ListeningPort) bool { return l.Port == req.Port }):
			fw := api.PortForward{Agent: req.Agent, SessionID: req.SessionID, Port: req.Port, HostPort: req.Port + 1, By: req.By, Since: time.Now()}
			f.sessions[i].Forwards = append(f.sessions[i].Forwards, fw)
			resp.Forward = &fw
		case open:
			resp.Error = "port: nothing listens there"
		default:
			fws := f.sessions[i].Forwards
			if j := slices.IndexFunc(fws, func(fw api.PortForward) bool { return fw.Port == req.Port }); j >= 0 {
				resp.Forward = &fws[j]
				f.sessions[i].Forwards = slices.Delete(slices.Clone(fws), j, j+1)
			} else {
				resp.Error = "port: no forward of that port"
			}
		}
		f.mu.Unlock()
		if resp.Forward != nil {
			f.push(api.StreamNotice{Type: api.NoticePorts})
		}
		reply(w, resp)
	}
}

// portsAsked returns the opens and closes the fake was asked.
func (f *fakeService) portsAsked() []portAsk {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ports)
}

// setSessions replaces the session networks, telling no one.
func (f *fakeService) setSessions(list []api.SessionNetwork) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions = cloneSessions(list)
}

func cloneSessions(list []api.SessionNetwork) []api.SessionNetwork {
	out := slices.Clone(list)
	for i := range out {
		out[i].Listening = slices.Clone(out[i].Listening)
		out[i].Forwards = slices.Clone(out[i].Forwards)
	}
	return out
}

// answered returns the answers the fake was given.
func (f *fakeService) answered() []api.AnswerRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.answers)
}

// stop closes the socket and every connection, as a service that exits.
func (f *fakeService) stop() {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv != nil {
		if err := srv.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			f.t.Error(err)
		}
	}
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
