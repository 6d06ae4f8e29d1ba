package pipeline

// This file is the agent sessions' shared networks
// (exec.sandbox.session_idle_seconds): the executions of one session
// (agent and session id) join one network namespace the service holds
// (sandbox/bwrap's SessionNet), so that what one call serves on localhost
// the session's next calls reach. Each execution keeps its own mount,
// pid, IPC and UTS namespaces, environment, credentials and egress proxy
// (its bridge listens on a port of its own there). Sessions never share
// with each other or with the host; the person alone opens a port of one
// on the host's loopback (OpenPort).

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Bridge ports of a session's executions: the first free one from
// bridgePortBase (3128, where a private sandbox's bridge listens).
const (
	bridgePortBase  = 3128
	bridgePortRange = 1024
	// hostPortTries is how many ports above the session's a forward
	// tries on the host when that one is taken.
	hostPortTries = 100
)

// maxSessionNets bounds the session networks open at once (each is a
// bwrap and a holder process): past it, an execution of a new session has
// a network of its own, and says so.
var maxSessionNets = 64

// SessionNets are the agent sessions' shared networks. The service holds
// one for its lifetime (configurations come and go; sessions stay) and
// sets it on each executor.
type SessionNets struct {
	log *slog.Logger

	mu     sync.Mutex
	m      map[sessionKey]*sessionNet
	closed bool
}

type sessionKey struct{ agent, id string }

type sessionNet struct {
	key   sessionKey
	n     *bwrap.SessionNet
	since time.Time
	// lastUsed is when an execution last joined or left; idle is how
	// long it stays after the last left (the configuration of the
	// execution that left last).
	lastUsed time.Time
	idle     time.Duration
	running  int
	bridges  map[int]bool // the running executions' bridge ports
	ended    bool         // the agent said the session ended
	forwards map[int]*portForward
	// gone says the network was closed: a warm sandbox started in it
	// serves no one (pool.go).
	gone atomic.Bool
}

// errSessionGone says a warm sandbox was not started: its session's
// network has closed.
var errSessionGone = errors.New("the session's network has closed")

// portForward is a session's port open on the host's loopback.
type portForward struct {
	api.PortForward
	ln net.Listener
}

// NewSessionNets returns an empty set of session networks.
func NewSessionNets(log *slog.Logger) *SessionNets {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SessionNets{log: log, m: map[sessionKey]*sessionNet{}}
}

// SetSessions gives e the service's session networks; without them every
// execution has a network of its own.
func (e *Executor) SetSessions(s *SessionNets) { e.sessions = s }

// joinSession gives an execution of req its session's network, started
// when the session has none: the Network for its spec and the release
// to call when it ends. A nil Network (with why, when the execution has a
// session) means a network of its own.
func (e *Executor) joinSession(req *api.ExecRequest, c backendChoice) (*sandbox.Network, *sessionNet, func(), string) {
	idle := time.Duration(e.cfg.Exec.Sandbox.SessionIdleSeconds) * time.Second
	switch {
	case req.SessionID == "":
		return nil, nil, func() {}, ""
	case !c.backend.OwnNetwork() || !c.backend.BindsPaths():
		return nil, nil, func() {}, ""
	case e.sessions == nil:
		return nil, nil, func() {}, "no session networks here (an in-process gatehouse exec)"
	case idle <= 0:
		return nil, nil, func() {}, "exec.sandbox.session_idle_seconds is 0"
	}
	return e.sessions.join(sessionKey{orUnknown(req.Agent), req.SessionID}, idle, c.bwrapPath, c.initPath)
}

func (s *SessionNets) join(k sessionKey, idle time.Duration, bwrapPath, initPath string) (*sandbox.Network, *sessionNet, func(), string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, func() {}, "the service is stopping"
	}
	sn := s.m[k]
	if sn != nil && !sn.n.Alive() {
		s.closeLocked(sn)
		sn = nil
	}
	if sn == nil && len(s.m) >= maxSessionNets {
		s.reapLocked()
		if len(s.m) >= maxSessionNets {
			return nil, nil, func() {}, fmt.Sprintf("%d session networks are open (the most there may be)", maxSessionNets)
		}
	}
	if sn == nil {
		n, err := bwrap.StartSessionNet(bwrapPath, initPath)
		if errors.Is(err, bwrap.ErrNoNsenter) {
			return nil, nil, func() {}, err.Error()
		}
		if err != nil {
			s.log.Warn("session network not started", "agent", k.agent, "session", k.id, "err", err)
			return nil, nil, func() {}, "the session's network did not start: " + err.Error()
		}
		now := time.Now()
		sn = &sessionNet{key: k, n: n, since: now, lastUsed: now,
			bridges: map[int]bool{}, forwards: map[int]*portForward{}}
		s.m[k] = sn
	}
	port, err := sn.bridgePort()
	if err != nil {
		return nil, nil, func() {}, err.Error()
	}
	sn.bridges[port] = true
	sn.running++
	sn.lastUsed = time.Now()
	netw := sn.n.Network(api.NetworkSessionPrefix + k.id)
	netw.Bridge = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var once sync.Once
	return netw, sn, func() { once.Do(func() { s.leave(sn, port, idle) }) }, ""
}

// bridgePort picks the first port from bridgePortBase no running
// execution's bridge has and nothing in the session listens on.
func (sn *sessionNet) bridgePort() (int, error) {
	taken := map[int]bool{}
	if ls, err := sn.n.Listening(); err == nil {
		for _, l := range ls {
			taken[l.Port] = true
		}
	}
	for p := bridgePortBase; p < bridgePortBase+bridgePortRange; p++ {
		if !sn.bridges[p] && !taken[p] {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no port from %d to %d is free in the session's network for the egress bridge", bridgePortBase, bridgePortBase+bridgePortRange-1)
}

// leave ends an execution's part in sn; the last to leave starts the idle
// clock (or closes the network of a session that ended).
func (s *SessionNets) leave(sn *sessionNet, port int, idle time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(sn.bridges, port)
	sn.running--
	sn.lastUsed = time.Now()
	sn.idle = idle
	if sn.running > 0 || s.m[sn.key] != sn {
		return
	}
	if sn.ended {
		s.closeLocked(sn)
		return
	}
	time.AfterFunc(idle, s.reap)
}

// reap closes the networks idle for their time with nothing running.
func (s *SessionNets) reap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
}

func (s *SessionNets) reapLocked() {
	for _, sn := range s.m {
		if sn.running == 0 && (!sn.n.Alive() || !time.Now().Before(sn.lastUsed.Add(sn.idle))) {
			s.closeLocked(sn)
		}
	}
}

// closeLocked ends sn's forwards and its holder. Executions still running
// in it keep the namespace until they end.
func (s *SessionNets) closeLocked(sn *sessionNet) {
	for _, f := range sn.forwards {
		f.ln.Close()
	}
	sn.forwards = map[int]*portForward{}
	sn.gone.Store(true)
	if s.m[sn.key] == sn {
		delete(s.m, sn.key)
	}
	go sn.n.Close()
	s.log.Info("session network closed", "agent", sn.key.agent, "session", sn.key.id)
}

// EndSession closes agent's session's network once nothing runs in it.
func (s *SessionNets) EndSession(agent, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.m[sessionKey{agent, session}]
	if sn == nil {
		return
	}
	sn.ended = true
	if sn.running == 0 {
		s.closeLocked(sn)
	}
}

// Close ends every session network and forward (the service stopping).
func (s *SessionNets) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, sn := range s.m {
		s.closeLocked(sn)
	}
}

// List reports the session networks, oldest first: what listens in each
// (the egress bridges left out) and the person's forwards.
func (s *SessionNets) List() []api.SessionNetwork {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []api.SessionNetwork{}
	for _, sn := range s.m {
		if !sn.n.Alive() {
			continue
		}
		st := api.SessionNetwork{Agent: sn.key.agent, SessionID: sn.key.id, Since: sn.since, LastUsed: sn.lastUsed,
			Running: sn.running, Listening: []api.ListeningPort{}, Forwards: []api.PortForward{}}
		if ls, err := sn.n.Listening(); err == nil {
			for _, l := range ls {
				if !sn.bridges[l.Port] {
					st.Listening = append(st.Listening, api.ListeningPort{Port: l.Port, Addr: l.Addr})
				}
			}
		}
		for _, f := range sn.forwards {
			st.Forwards = append(st.Forwards, f.PortForward)
		}
		slices.SortFunc(st.Forwards, func(a, b api.PortForward) int { return a.Port - b.Port })
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b api.SessionNetwork) int { return a.Since.Compare(b.Since) })
	return out
}

// find returns the one live session req names (its id or a prefix of it,
// narrowed by agent).
func (s *SessionNets) find(req api.PortRequest) (*sessionNet, error) {
	if req.SessionID == "" {
		return nil, errors.New("session_id: name a session (gatehouse ports lists them)")
	}
	var exact, prefix []*sessionNet
	for k, sn := range s.m {
		if req.Agent != "" && k.agent != req.Agent || !sn.n.Alive() {
			continue
		}
		if k.id == req.SessionID {
			exact = append(exact, sn)
		} else if strings.HasPrefix(k.id, req.SessionID) {
			prefix = append(prefix, sn)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) == 0 && len(prefix) == 1:
		return prefix[0], nil
	case len(exact)+len(prefix) == 0 && req.Agent != "":
		return nil, fmt.Errorf("session_id: no session network %q of agent %q (gatehouse ports lists them)", req.SessionID, req.Agent)
	case len(exact)+len(prefix) == 0:
		return nil, fmt.Errorf("session_id: no session network %q (gatehouse ports lists them)", req.SessionID)
	}
	return nil, fmt.Errorf("session_id: %q names more than one session; give more of the id or the agent", req.SessionID)
}

// OpenPort forwards a session's port to the host's 127.0.0.1 (the same
// port when free there, else the next free one): each connection to it
// is carried to the port on the session's loopback. Only the person asks
// for it (the admission API's callers; no agent's tool offers it).
func (s *SessionNets) OpenPort(req api.PortRequest) api.PortResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Port < 1 || req.Port > 65535 {
		return api.PortResponse{Error: fmt.Sprintf("port: %d is not a port from 1 to 65535", req.Port)}
	}
	sn, err := s.find(req)
	if err != nil {
		return api.PortResponse{Error: err.Error()}
	}
	if f := sn.forwards[req.Port]; f != nil {
		fw := f.PortForward
		return api.PortResponse{Forward: &fw}
	}
	if sn.bridges[req.Port] {
		return api.PortResponse{Error: fmt.Sprintf("port: %d is an execution's egress bridge, not something the session serves", req.Port)}
	}
	ls, err := sn.n.Listening()
	if err != nil {
		return api.PortResponse{Error: err.Error()}
	}
	if !slices.ContainsFunc(ls, func(l bwrap.Listener) bool { return l.Port == req.Port }) {
		return api.PortResponse{Error: fmt.Sprintf("port: nothing listens on %d in session %s (gatehouse ports lists what does)", req.Port, sn.key.id)}
	}
	var ln net.Listener
	for p := req.Port; p < req.Port+hostPortTries && p <= 65535; p++ {
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			break
		}
	}
	if ln == nil {
		return api.PortResponse{Error: fmt.Sprintf("no port from %d to %d is free on the host's loopback: %v", req.Port, req.Port+hostPortTries-1, err)}
	}
	f := &portForward{ln: ln, PortForward: api.PortForward{Agent: sn.key.agent, SessionID: sn.key.id, Port: req.Port,
		HostPort: ln.Addr().(*net.TCPAddr).Port, Since: time.Now(), By: req.By}}
	sn.forwards[req.Port] = f
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if err := sn.n.Forward(c.(*net.TCPConn), req.Port); err != nil {
				s.log.Warn("port forward", "session", sn.key.id, "port", req.Port, "err", err)
			}
		}
	}()
	s.log.Info("port forward opened", "agent", sn.key.agent, "session", sn.key.id, "port", req.Port, "host_port", f.HostPort, "by", req.By)
	fw := f.PortForward
	return api.PortResponse{Forward: &fw}
}

// ClosePort ends a forward.
func (s *SessionNets) ClosePort(req api.PortRequest) api.PortResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, err := s.find(req)
	if err != nil {
		return api.PortResponse{Error: err.Error()}
	}
	f := sn.forwards[req.Port]
	if f == nil {
		return api.PortResponse{Error: fmt.Sprintf("port: session %s has no forward of port %d", sn.key.id, req.Port)}
	}
	f.ln.Close()
	// A connection made before the close (a browser's kept-alive one, a
	// websocket) ends with it.
	if err := sn.n.EndForwards(req.Port); err != nil {
		s.log.Warn("ending a forward's connections", "session", sn.key.id, "port", req.Port, "err", err)
	}
	delete(sn.forwards, req.Port)
	s.log.Info("port forward closed", "agent", sn.key.agent, "session", sn.key.id, "port", req.Port, "by", req.By)
	fw := f.PortForward
	return api.PortResponse{Forward: &fw}
}
