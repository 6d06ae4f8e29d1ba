package api

import "time"

// Approvals, trusted workspaces, saved rules and the live stream
// (docs/approvals.md). Every one of these paths is served on the user's
// socket only: no sandbox has a route to it.
const (
	// PathApprovals lists the pending approval requests (GET,
	// ApprovalsResponse).
	PathApprovals = "/v1/approvals"
	// PathAnswer answers one (POST AnswerRequest, AnswerResponse).
	PathAnswer = "/v1/approvals/answer"
	// PathStream is the live stream (GET, server-sent events, each a
	// StreamNotice as JSON in its data line, its type in the event line).
	PathStream = "/v1/stream"
	// PathWorkspaces lists the trusted workspaces (GET, WorkspacesResponse).
	PathWorkspaces = "/v1/workspaces"
	// PathSessionEnd says an agent's session ended (POST
	// SessionEndRequest): its approve-for-session grants end.
	PathSessionEnd = "/v1/session/end"
	// PathDashboardLogin returns a new one-time login code for the
	// dashboard (POST, DashboardLoginResponse).
	PathDashboardLogin = "/v1/dashboard/login"
)

// DashboardLoginResponse is a one-time login code for the dashboard,
// which a browser posts to exchange for a session cookie. The code never
// goes into an address or an argument list (every local user reads those
// in /proc): an opener is handed LaunchFile, a page (0600, in a 0700
// directory) that posts the code when opened; a person may type Code into
// the form at URL. Error says why there is none (the dashboard is off, or
// could not listen).
type DashboardLoginResponse struct {
	// URL is the dashboard's sign-in form, http://127.0.0.1:PORT/login.
	URL        string `json:"url,omitempty"`
	Code       string `json:"code,omitempty"`
	LaunchFile string `json:"launch_file,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Kinds of approval request.
const (
	// ApprovalCommand holds a command an ask rule (or default_action,
	// dynamic_action: ask) matched.
	ApprovalCommand = "command"
	// ApprovalWorkspace asks to trust the directory a call came from,
	// which lies in no workspace root.
	ApprovalWorkspace = "workspace"
	// ApprovalEgress holds a running command's connection to a
	// destination no egress allowlist entry covers
	// (policy.egress_unknown: ask).
	ApprovalEgress = "egress"
)

// Answers to an approval request.
const (
	// AnswerOnce runs this call. For a workspace request it runs this
	// call alone with the directory writable: nothing is trusted, and
	// the next call from there asks again.
	AnswerOnce = "once"
	// AnswerSession runs this call and, without asking again, every call
	// of the same agent and session the same rule would hold for the same
	// command (until the session ends, at most 12 h).
	AnswerSession = "session"
	// AnswerAlways saves the request's rule (SaveRule, or the one the
	// answer gives) as an allow rule, and runs this call.
	AnswerAlways = "always"
	// AnswerTrust, for a workspace request, trusts its directory as a
	// workspace for the agent that asked ("Trust ~/work/app for
	// claude-code"), and runs this call.
	AnswerTrust = "trust"
	// AnswerTrustAll, for a workspace request, trusts its directory as a
	// workspace for every agent, and runs this call.
	AnswerTrustAll = "trust_all"
	// AnswerPreset, for an egress request whose destination is one of a
	// preset's hosts (Approval.Preset), saves the preset's entries for the
	// agent that asked (as `gatehouse egress allow --preset NAME --agent
	// AGENT`), and runs this call.
	AnswerPreset = "preset"
	// AnswerDeny refuses this call.
	AnswerDeny = "deny"
	// AnswerDenyAlways saves the request's rule as a deny rule, and
	// refuses this call.
	AnswerDenyAlways = "deny_always"
)

// Lets reports whether answer lets the held call (or connection) through:
// every answer but deny and deny_always. A host-loopback egress request
// takes such an answer only with AnswerRequest.LocalService.
func Lets(answer string) bool {
	switch answer {
	case AnswerDeny, AnswerDenyAlways:
		return false
	}
	return true
}

// Who answered: the surface the answer came through.
const (
	ByCLI       = "cli"
	ByTray      = "tray"
	ByDashboard = "dashboard"
	// ByNotification is a notification's action (Approve once, Deny).
	ByNotification = "notification"
)

// Approval is one pending approval request: the call is held until a
// person answers it or it expires.
type Approval struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // command | workspace | egress
	// DecisionID is the id the decision event will carry, linking the
	// answer on the record to it.
	DecisionID string `json:"decision_id"`
	Agent      string `json:"agent"`
	Surface    string `json:"surface"`
	SessionID  string `json:"session_id,omitempty"`
	Cwd        string `json:"cwd"`
	// Command is the judged command (credential references stay
	// references).
	Command string `json:"command"`
	// Rule names what holds it: the rule, default_action, dynamic_action,
	// or "workspace".
	Rule   string `json:"rule"`
	Origin string `json:"origin"`
	// Reason says why it is held, in the words the agent would get.
	Reason string `json:"reason"`
	// Question is the one line a person is asked.
	Question string `json:"question"`
	// Workspace is the directory a workspace request would trust.
	Workspace string `json:"workspace,omitempty"`
	// Host and Port are the destination an egress request would let the
	// command reach; Literal says Host is an IP address, which an answer
	// allows as that address only. SaveEntry is the allowlist entry
	// always saves (host:port), and deny_always denies.
	Host      string `json:"host,omitempty"`
	Port      int    `json:"port,omitempty"`
	Literal   bool   `json:"literal,omitempty"`
	SaveEntry string `json:"save_entry,omitempty"`
	// Preset names the egress preset the destination is one of (npm,
	// pypi...): `gatehouse egress allow --preset NAME` allows its hosts,
	// and the answer AnswerPreset does so for the agent that asked.
	Preset string `json:"preset,omitempty"`
	// Entries are the *.domain entries a person may pick instead of
	// SaveEntry for always or deny_always (AnswerRequest.Entry), widest
	// last: every face offers these and no other.
	Entries []string `json:"entries,omitempty"`
	// HostLoopback says the destination is the host's own loopback (a
	// service on this machine, not the sandbox's loopback): an answer that
	// lets it through must carry AnswerRequest.LocalService, the box the
	// person ticks, and the question warns.
	HostLoopback bool `json:"host_loopback,omitempty"`
	// SaveRule is the rule, in YAML, that always (as allow) and
	// deny_always (as deny) save; "" when neither is offered.
	SaveRule string `json:"save_rule,omitempty"`
	// Answers are the answers offered, in menu order.
	Answers []string  `json:"answers"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// ApprovalsResponse lists the pending requests, oldest first.
type ApprovalsResponse struct {
	Approvals []Approval `json:"approvals"`
}

// AnswerRequest answers one pending request.
type AnswerRequest struct {
	ID     string `json:"id"`
	Answer string `json:"answer"`
	// Rule, for always or deny_always, replaces the request's SaveRule: a
	// rule in YAML or JSON, which must match the held command. Its action
	// is set by the answer.
	Rule string `json:"rule,omitempty"`
	// Entry, for always or deny_always on an egress request, is the entry
	// the person picked instead of the exact host:port: the *.domain form
	// of a domain the host is or lies in (at least two labels), with the
	// destination's port or none (one of Approval.Entries).
	Entry string `json:"entry,omitempty"`
	// LocalService is the person's tick on "this is a service on my
	// machine": required by once, session and always on a request whose
	// destination is the host's loopback (Approval.HostLoopback), refused
	// on any other.
	LocalService bool `json:"local_service,omitempty"`
	// By is the surface answering: cli, tray or dashboard.
	By string `json:"by"`
}

// AnswerResponse says whether the answer was taken. SavedRule is the rule
// that was saved (YAML), when one was; SavedEntry the egress entry, and
// SavedFile the file it is in.
type AnswerResponse struct {
	OK         bool   `json:"ok"`
	SavedRule  string `json:"saved_rule,omitempty"`
	SavedEntry string `json:"saved_entry,omitempty"`
	SavedFile  string `json:"saved_file,omitempty"`
	Error      string `json:"error,omitempty"`
}

// ApprovalRecord is the answer to a held call, on the decision's event.
type ApprovalRecord struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Answer string `json:"answer"` // once | session | always | deny | deny_always | timeout | cancelled
	// By is who answered (cli, tray, dashboard); "session" when an
	// earlier approve-for-session answered it without asking.
	By string `json:"by,omitempty"`
	// Rule is the holding rule; SavedRule the rule an always answer
	// saved, by name.
	Rule      string `json:"rule,omitempty"`
	SavedRule string `json:"saved_rule,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// SavedEntry is the egress entry an always or deny_always answer to
	// an egress request saved, and SavedFile where.
	SavedEntry string `json:"saved_entry,omitempty"`
	SavedFile  string `json:"saved_file,omitempty"`
	WaitedMS   int64  `json:"waited_ms"`
}

// Workspace is one trusted workspace root.
type Workspace struct {
	Path  string    `json:"path"`
	Added time.Time `json:"added,omitzero"`
	// Origin is policy (policy.workspace_roots) or trusted (added by the
	// user or by an approval).
	Origin string `json:"origin"`
	// By is what added a trusted one: cli, tray, dashboard, approval.
	By string `json:"by,omitempty"`
	// Agents are the agents a trusted one is for; none: every agent.
	Agents []string `json:"agents,omitempty"`
	// Problem, when set, says why this root is not in force now.
	Problem string `json:"problem,omitempty"`
}

// Origins of a workspace.
const (
	WorkspacePolicy  = "policy"
	WorkspaceTrusted = "trusted"
)

// WorkspacesResponse lists the workspace roots in force and the trusted
// ones.
type WorkspacesResponse struct {
	Workspaces []Workspace `json:"workspaces"`
}

// Types of StreamNotice.
const (
	NoticeExecutionStarted = "execution.started"
	NoticeExecutionEnded   = "execution.ended"
	NoticeApprovalOpened   = "approval.opened"
	NoticeApprovalAnswered = "approval.answered"
	NoticeSandbox          = "sandbox.mode"
	NoticeService          = "service.state"
	// NoticePorts says a forward of a session's port opened or closed
	// (GET /v1/ports has the list).
	NoticePorts = "ports.changed"
)

// StreamNotice is one item of the live stream. The first item a
// subscriber gets is a service.state notice with the status, then one
// approval.opened for each pending request.
type StreamNotice struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Event is the execution's (or decision's) event, for execution.*.
	Event *Event `json:"event,omitempty"`
	// Approval is the request, for approval.*; Answer its answer, for
	// approval.answered.
	Approval *Approval       `json:"approval,omitempty"`
	Answer   *ApprovalRecord `json:"answer,omitempty"`
	// Sandbox is the sandbox a command would get, for sandbox.mode and
	// service.state.
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
	// Status is the service's status, for service.state.
	Status *Status `json:"status,omitempty"`
	// State is running or stopping, for service.state.
	State string `json:"state,omitempty"`
}

// SessionEndRequest says an agent's session ended.
type SessionEndRequest struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
}
