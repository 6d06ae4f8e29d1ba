package tray

// The Sessions submenu: the agent sessions' shared networks as the service
// lists them (GET /v1/ports), each with its listening ports and the
// person's forwards. A click opens or closes a forward through the
// service, which decides what may be opened; the menu offers Open on every
// listening port without a forward and leaves the refusals to it.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// How much of the sessions the menu shows.
const (
	// MaxSessions sessions get a submenu each; a line says how many more.
	MaxSessions = 6
	// MaxPortItems ports of a session are listed; a line says how many
	// more.
	MaxPortItems = 10
	// sessionItems is the most items one session's submenu holds: the
	// line saying what it is, its ports and the line saying how many
	// more.
	sessionItems = 1 + MaxPortItems + 1
	// shortSession is how much of a session's id a label shows.
	shortSession = 8
)

// RefetchPorts reports whether notice n may have changed the session
// networks: a forward opened or closed, or an execution that started or
// ended (a session's network comes with its first execution; a server
// listens, or stops, as its execution runs and ends).
func RefetchPorts(n api.StreamNotice) bool {
	switch n.Type {
	case api.NoticePorts, api.NoticeExecutionStarted, api.NoticeExecutionEnded:
		return true
	}
	return false
}

// SessionsRunning reports whether an execution runs in one of the session
// networks: a server may start listening in it at any time, which no
// notice says.
func SessionsRunning(s State) bool {
	for _, n := range s.Sessions {
		if n.Running > 0 {
			return true
		}
	}
	return false
}

// ShortSession is the start of a session's id, as labels show it.
func ShortSession(id string) string {
	if r := []rune(id); len(r) > shortSession {
		return string(r[:shortSession])
	}
	return id
}

func sessionsItem(s State, down bool) Item {
	it := Item{Key: KeySessions, Label: fmt.Sprintf("Sessions (%d)", len(s.Sessions)), Hidden: down, Disabled: len(s.Sessions) == 0,
		Tooltip: "the agent sessions' networks: the ports their commands serve, which you may open on this machine"}
	for i, n := range s.Sessions {
		if i == MaxSessions {
			it.Children = append(it.Children, Item{Disabled: true,
				Label: fmt.Sprintf("%s more: gatehouse ports lists them", plural(len(s.Sessions)-MaxSessions, "session"))})
			break
		}
		it.Children = append(it.Children, sessionItem(n))
	}
	return it
}

// sessionItem is one session's submenu: what it is, then each port of
// it, by port: Open on a listening port, Close on a forward.
func sessionItem(n api.SessionNetwork) Item {
	it := Item{
		Label:   fmt.Sprintf("%s · %s · %d running", Shorten(n.Agent, 24), Escape(ShortSession(n.SessionID)), n.Running),
		Tooltip: "session " + Escape(n.SessionID),
	}
	what := "Nothing listens in this session"
	if len(n.Listening) > 0 || len(n.Forwards) > 0 {
		what = "Ports of session " + Shorten(n.SessionID, commandWidth) + ":"
	}
	it.Children = append(it.Children, Item{Label: what, Disabled: true})
	var ports []Item
	forwarded := map[int]bool{}
	for _, f := range n.Forwards {
		forwarded[f.Port] = true
	}
	listed := map[int]bool{}
	for _, l := range n.Listening {
		if listed[l.Port] {
			continue
		}
		listed[l.Port] = true
		if forwarded[l.Port] {
			continue // its forward's item follows
		}
		ports = append(ports, Item{
			Label:   fmt.Sprintf("Open port %d on this machine", l.Port),
			Tooltip: fmt.Sprintf("forwards 127.0.0.1 of this machine to port %d of the session (it listens on %s); only you can", l.Port, listeningOn(n, l.Port)),
			Action:  Action{Kind: ActOpenPort, Agent: n.Agent, ID: n.SessionID, Port: l.Port},
		})
	}
	for _, f := range n.Forwards {
		tip := "opened"
		if f.By != "" {
			tip += " by " + f.By
		}
		if !listed[f.Port] {
			tip += "; nothing listens on it in the session now"
		}
		ports = append(ports, Item{
			Label:   fmt.Sprintf("Close forward %d → 127.0.0.1:%d", f.Port, f.HostPort),
			Tooltip: tip,
			Action:  Action{Kind: ActClosePort, Agent: n.Agent, ID: n.SessionID, Port: f.Port},
		})
	}
	slices.SortStableFunc(ports, func(a, b Item) int { return a.Action.Port - b.Action.Port })
	if len(ports) > MaxPortItems {
		more := len(ports) - MaxPortItems
		ports = append(ports[:MaxPortItems], Item{Disabled: true, Label: fmt.Sprintf("%d more: gatehouse ports lists them", more)})
	}
	it.Children = append(it.Children, ports...)
	return it
}

// listeningOn names the addresses something listens on port at.
func listeningOn(n api.SessionNetwork, port int) string {
	var addrs []string
	for _, l := range n.Listening {
		if l.Port == port {
			addrs = append(addrs, l.Addr)
		}
	}
	return strings.Join(addrs, ", ")
}
