package api

import "time"

// The admission API: HTTP/JSON over the service's unix socket
// (docs/service.md). Every path answers JSON except execute and redeem,
// whose bodies are a frame stream (stream.go).
const (
	PathDecide  = "/v1/decide"
	PathExecute = "/v1/execute"
	PathRedeem  = "/v1/redeem"
	PathStatus  = "/v1/status"
	PathEvents  = "/v1/events"
	PathReload  = "/v1/reload"
	// PathFileAccess decides an agent file tool's access (FileAccessRequest).
	PathFileAccess = "/v1/file-access"
)

// Routing modes of Claude Code's Bash (policy.builtin_exec_routing).
const (
	RoutingGovernedShell = "governed_shell"
	RoutingFramework     = "framework"
)

// DecideRequest asks for a decision on one shell:execute call without
// running it.
type DecideRequest struct {
	Request ExecRequest `json:"request"`
	// Route asks for a ticket when the decision is allow and the routing is
	// governed_shell: the command is then run when the ticket is redeemed.
	Route bool `json:"route,omitempty"`
	// Routing, when governed_shell, routes the call even where the policy
	// says framework: managed settings can pin routing this way. Empty or
	// framework leaves it to the policy.
	Routing string `json:"routing,omitempty"`
}

// DecideResponse is the decision. Deny carries blocked_by and reason;
// allow under governed_shell routing (when asked for) carries a ticket.
type DecideResponse struct {
	Decision  Decision `json:"decision"` // allow | deny
	BlockedBy string   `json:"blocked_by,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	// Hint is the remedy of a denial, when the stage that denied has one.
	Hint    string `json:"hint,omitempty"`
	EventID string `json:"event_id,omitempty"`
	Routing string `json:"routing"`
	// Ticket redeems the decided execution once, before ExpiresAt.
	Ticket         string    `json:"ticket,omitempty"`
	ExpiresAt      time.Time `json:"expires_at,omitzero"`
	TimeoutSeconds int       `json:"timeout_seconds,omitempty"`
	// Warning is a user-safe account of what went wrong without changing
	// the decision: the decision is not on the audit record.
	Warning string `json:"warning,omitempty"`
}

// FileAccessRequest asks whether an agent's own file tool (Claude Code's
// Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, which run outside
// every sandbox) may touch Paths. The answer is a DecideResponse: allow, or
// deny with blocked_by and a reason for the model; it never has a ticket.
type FileAccessRequest struct {
	Tool string `json:"tool"`
	// Access is FileRead or FileWrite.
	Access string `json:"access"`
	// Search marks a recursive search (Glob, Grep): a path that holds a
	// denied directory is denied too.
	Search bool `json:"search,omitempty"`
	// Paths are absolute, or relative to Cwd.
	Paths     []string `json:"paths"`
	Cwd       string   `json:"cwd"`
	Agent     string   `json:"agent,omitempty"`
	Surface   string   `json:"surface,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
}

// File access kinds, and the action types of their events.
const (
	FileRead        = "read"
	FileWrite       = "write"
	ActionFileRead  = "file:read"
	ActionFileWrite = "file:write"
)

// ExecuteRequest runs one call: decide, then run it at once. The response
// is a frame stream.
type ExecuteRequest struct {
	Request ExecRequest `json:"request"`
	// StdinBytes, when set, replaces Request.Stdin: JSON strings cannot
	// carry bytes that are not UTF-8.
	StdinBytes []byte `json:"stdin_bytes,omitempty"`
	// Capture returns the output in the End frame's result instead of
	// streaming it (as gatehouse exec --json prints it).
	Capture bool `json:"capture,omitempty"`
}

// RedeemRequest runs the execution a ticket stands for. The response is a
// frame stream.
type RedeemRequest struct {
	Ticket string `json:"ticket"`
}

// ReloadResponse says whether a reload took effect; on failure the old
// configuration stays in force and Error says why.
type ReloadResponse struct {
	OK    bool     `json:"ok"`
	Files []string `json:"files"`
	Error string   `json:"error,omitempty"`
}

// EventsResponse lists recent events, newest first.
type EventsResponse struct {
	Events []Event `json:"events"`
}

// ErrorResponse is the body of every non-2xx answer.
type ErrorResponse struct {
	Error string `json:"error"`
}

// Status describes the running service.
type Status struct {
	Version  string    `json:"version"`
	PID      int       `json:"pid"`
	Started  time.Time `json:"started"`
	Socket   string    `json:"socket"`
	RelayDir string    `json:"relay_dir"`
	// Config lists the files of the configuration in force; ReloadError is
	// the last reload's failure, if it failed.
	Config      []string      `json:"config_files"`
	ReloadedAt  time.Time     `json:"reloaded_at"`
	ReloadError string        `json:"reload_error,omitempty"`
	Sandbox     SandboxStatus `json:"sandbox"`
	Policy      PolicySummary `json:"policy"`
	Running     int           `json:"running"`
	Pending     int           `json:"pending_tickets"`
	WarmPool    PoolStatus    `json:"warm_pool"`
	// Approvals is how many approval requests wait for an answer;
	// Workspaces how many workspace roots are in force.
	Approvals  int `json:"approvals_pending"`
	Workspaces int `json:"workspaces"`
}

// PoolStatus is the service's warm pool (exec.sandbox.warm_pool): how many
// sandboxes it keeps started ahead of their commands, how many are ready,
// for which agents' plans (Agent: their names, sorted, ", "-separated; the
// agent it starts for when none is ready), and the resident memory the
// idle ones hold.
type PoolStatus struct {
	Size    int    `json:"size"`
	Ready   int    `json:"ready"`
	Agent   string `json:"agent,omitempty"`
	IdleRSS int64  `json:"idle_rss_bytes"`
}

// SandboxStatus is the isolation a command would get now.
type SandboxStatus struct {
	Backend string `json:"backend"`
	Why     string `json:"reason,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Error   string `json:"error,omitempty"`
}

// PolicySummary is the part of the configuration a user asks about first.
type PolicySummary struct {
	Routing             string   `json:"builtin_exec_routing"`
	SandboxRequired     bool     `json:"sandbox_required"`
	CommandAnalysisMode string   `json:"command_analysis_mode"`
	DefaultAction       string   `json:"default_action"`
	WorkspaceRoots      []string `json:"workspace_roots"`
	ExecTimeoutSeconds  int      `json:"exec_timeout_seconds"`
	MaxConcurrent       int      `json:"max_concurrent"`
	TicketTTLSeconds    int      `json:"ticket_ttl_seconds"`
	MaxPendingTickets   int      `json:"max_pending_tickets"`
	EgressAllowlist     []string `json:"egress_allowlist"`
}
