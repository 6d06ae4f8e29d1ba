package api

import "time"

// Session networks and the person's port forwards (docs/executor.md, "One
// network per agent session"). The executions of one agent session share
// a network namespace: what one call serves on localhost, the session's
// next calls reach. Only the person opens a port of it on the host, and
// only on the host's loopback.
const (
	// PathPorts lists the session networks (GET → PortsResponse).
	PathPorts = "/v1/ports"
	// PathPortsOpen forwards a session's port to the host (POST
	// PortRequest → PortResponse).
	PathPortsOpen = "/v1/ports/open"
	// PathPortsClose closes a forward (POST PortRequest → PortResponse).
	PathPortsClose = "/v1/ports/close"
)

// Network values on the event (Event.Network).
const (
	// NetworkPrivate: the execution had a network namespace of its own.
	NetworkPrivate = "private"
	// NetworkSessionPrefix starts "session <id>": the execution joined
	// its agent session's network.
	NetworkSessionPrefix = "session "
)

// SessionNetwork is one agent session's shared network.
type SessionNetwork struct {
	Agent     string    `json:"agent"`
	SessionID string    `json:"session_id"`
	Since     time.Time `json:"since"`
	// LastUsed is when an execution last started or ended in it; the
	// network closes exec.sandbox.session_idle_seconds after it with
	// nothing running.
	LastUsed time.Time `json:"last_used"`
	// Running counts the executions in it now.
	Running int `json:"running"`
	// Listening are the TCP ports something in the session listens on
	// (the executions' own egress bridges left out).
	Listening []ListeningPort `json:"listening"`
	// Forwards are the ports the person opened on the host.
	Forwards []PortForward `json:"forwards"`
}

// ListeningPort is a TCP socket listening in a session's network.
type ListeningPort struct {
	Port int `json:"port"`
	// Addr is the address it is bound to: 127.0.0.1, ::1, 0.0.0.0 or ::.
	Addr string `json:"addr"`
}

// PortForward is a session's port opened on the host's loopback.
type PortForward struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
	// Port is the port inside the session; HostPort where the host's
	// 127.0.0.1 listens for it (the same when it was free).
	Port     int       `json:"port"`
	HostPort int       `json:"host_port"`
	Since    time.Time `json:"since"`
	// By is who opened it: cli, tray or dashboard.
	By string `json:"by,omitempty"`
}

// PortsResponse lists the session networks.
type PortsResponse struct {
	Sessions []SessionNetwork `json:"sessions"`
}

// PortRequest opens or closes a forward. SessionID is a session's id or
// a prefix of it that names one session; Agent narrows it when two
// agents' sessions match.
type PortRequest struct {
	Agent     string `json:"agent,omitempty"`
	SessionID string `json:"session_id"`
	Port      int    `json:"port"`
	// By is the face the person used: cli, tray or dashboard.
	By string `json:"by,omitempty"`
}

// PortResponse is the forward opened or closed, or why not.
type PortResponse struct {
	Forward *PortForward `json:"forward,omitempty"`
	Error   string       `json:"error,omitempty"`
}
