// Package api holds the wire types shared by the CLI, the hook, the relay
// and the service: execution requests, results and the audit event (the
// execution card).
package api

import (
	"strings"
	"time"
)

// Surfaces an execution request can arrive through.
const (
	SurfaceCLI       = "cli"
	SurfaceMCP       = "mcp"
	SurfaceAgentHook = "agent_hook"
)

// ActionShellExecute is the action type of every shell command.
const ActionShellExecute = "shell:execute"

// Argument limits of shell:execute (DESIGN §4).
const (
	MaxCommandBytes = 64 << 10
	MaxEnvKeys      = 32
)

// ExecRequest is one shell:execute call.
type ExecRequest struct {
	Command        string            `json:"command"`
	Cwd            string            `json:"cwd,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
	Stdin          string            `json:"stdin,omitempty"`
	Env            map[string]string `json:"env,omitempty"`

	Agent   string `json:"agent,omitempty"`
	Surface string `json:"surface,omitempty"`
	// SessionID is the agent's session (Claude Code's session_id), recorded on
	// the event.
	SessionID string `json:"session_id,omitempty"`
	// ProjectDir is the agent's project directory (Claude Code's
	// CLAUDE_PROJECT_DIR): what a call from outside every workspace root
	// asks to trust, when it came from inside it.
	ProjectDir string `json:"project_dir,omitempty"`
	// Interactive says a person waits on the call at a terminal (gatehouse
	// exec on one): a question it raises can be answered there.
	Interactive bool `json:"interactive,omitempty"`
}

// Result is what the caller of shell:execute gets back.
type Result struct {
	Stdout         string `json:"stdout"`
	Stderr         string `json:"stderr,omitempty"`
	ExitCode       *int   `json:"exit_code"`
	DurationMS     int64  `json:"duration_ms"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	TimedOut       bool   `json:"timed_out"`
	Truncated      bool   `json:"truncated"`
	SandboxMode    string `json:"sandbox_mode,omitempty"`
	RedactionCount int    `json:"redaction_count"`
}

// Event is the audit record of a decision or an execution (DESIGN §10).
type Event struct {
	ID             string    `json:"id"`
	ParentID       string    `json:"parent_id,omitempty"`
	Time           time.Time `json:"time"`
	Agent          string    `json:"agent"`
	Surface        string    `json:"surface"`
	SessionID      string    `json:"session_id,omitempty"`
	ActionType     string    `json:"action_type"`
	Decision       Decision  `json:"decision"`
	BlockedBy      string    `json:"blocked_by,omitempty"`
	Rule           string    `json:"rule,omitempty"` // the deciding rule's name; the reason quotes the command
	Reason         string    `json:"reason,omitempty"`
	Dialect        string    `json:"dialect,omitempty"`
	CommandHash    string    `json:"command_hash,omitempty"`
	Cwd            string    `json:"cwd,omitempty"`
	ResolvedCmds   []string  `json:"resolved_commands"`
	Status         string    `json:"status,omitempty"`
	StatusReason   string    `json:"status_reason,omitempty"`
	SandboxMode    string    `json:"sandbox_mode,omitempty"`
	SeccompReason  string    `json:"seccomp_reason,omitempty"`
	ExitCode       *int      `json:"exit_code"`
	DurationMS     int64     `json:"duration_ms"`
	TimeoutSeconds int       `json:"timeout_seconds"`
	Output         Output    `json:"output"`
	PinnedScripts  []Pin     `json:"pinned_scripts"`
	// PinCoverage says, when scripts were pinned, how much of what ran
	// is the judged bytes: full (bound over their paths), partial (the
	// command line rewritten to the copies; a script another script
	// runs is not covered) or none (checked before the start only).
	PinCoverage string   `json:"pin_coverage,omitempty"`
	Credentials []string `json:"credentials_injected"`
	// CredentialsMasked are the credentials the command got placeholders
	// of (ids only); the egress proxy put their values on the wire to
	// their hosts.
	CredentialsMasked []string `json:"credentials_masked,omitempty"`
	// CredentialNotes say what an id alone does not: how a credential of
	// mode auto reached the command (its value's shape decided), and that
	// a masked credential was unusable, its hosts not allowed by the
	// egress allowlist.
	CredentialNotes []CredentialNote `json:"credential_notes,omitempty"`
	Egress          Egress           `json:"egress"`
	Limits          *Limits          `json:"limits_enforced,omitempty"`
	WriteBlocked    []string         `json:"write_deny_blocked,omitempty"`
	// SandboxStart says whether the command ran in a warm sandbox the
	// service started ahead of it ("warm") or one started for it
	// ("fresh"), and SandboxStartReason why fresh.
	SandboxStart       string `json:"sandbox_start,omitempty"`
	SandboxStartReason string `json:"sandbox_start_reason,omitempty"`
	// Network is the network namespace the command ran in: "private" (its
	// own) or "session <id>" (its agent session's, shared with the
	// session's other executions; NetworkReason says why not, when a
	// session's execution ran private).
	Network       string `json:"network,omitempty"`
	NetworkReason string `json:"network_reason,omitempty"`
	// ToolCache is the agent's tool cache directory the command had.
	ToolCache string `json:"tool_cache,omitempty"`
	// ReadPosture is the read posture that held for the execution: host
	// (the host's files, minus the deny-read set) or workspace (of the
	// user's data, only the workspace roots, read_allow and the tool
	// cache); absent on events of nothing Gatehouse ran.
	ReadPosture string `json:"read_posture,omitempty"`
	// Tool and Paths describe a file-tool event (file:read, file:write):
	// the agent's tool and the absolute paths it named.
	Tool  string   `json:"tool,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// Routed marks the decision of a routed command, which got a ticket:
	// its execution event follows (parent_id) when the relay redeems it,
	// or says never_ran.
	Routed bool `json:"routed,omitempty"`
	// Approval is the answer to a held call (the hold stage), on its
	// decision's event.
	Approval *ApprovalRecord `json:"approval,omitempty"`

	// command is the judged text the event carries to the audit record
	// (which keeps it beside the event); it is never serialised with the
	// event, which carries only its hash.
	command string
}

// Command returns the judged text ev carries to the audit record; "" when
// it carries none (a file-tool event, an event read back).
func (ev Event) Command() string { return ev.command }

// SetCommand sets the judged text ev carries to the audit record.
func (ev *Event) SetCommand(text string) { ev.command = text }

// A CredentialNote is the card's word on one credential of an execution.
// It names ids, fields and hosts, never a value.
type CredentialNote struct {
	ID string `json:"id"`
	// Field is the mapping that gave the credential its mode:
	// "exec.credentials.env.GITHUB_TOKEN".
	Field string `json:"field,omitempty"`
	// Mode is masked or injected, as it reached the command.
	Mode string `json:"mode"`
	// Hosts are a masked credential's hosts.
	Hosts []string `json:"hosts,omitempty"`
	// Reason says why: "mode auto: a GitHub token", "mode auto:
	// injected: an AWS access key: ...".
	Reason string `json:"reason,omitempty"`
	// Unusable are the hosts of a masked credential that the agent's
	// egress allowlist does not allow: the placeholder reaches none of
	// them until they are allowed.
	Unusable []string `json:"unusable_hosts,omitempty"`
}

// String is the note as every face writes it: "github_token masked
// (mode auto, masked: a GitHub token; exec.credentials.env.GITHUB_TOKEN);
// unusable until the egress allowlist allows api.github.com, github.com".
func (n CredentialNote) String() string {
	s := n.ID + " " + n.Mode
	var why []string
	if n.Reason != "" {
		why = append(why, n.Reason)
	}
	if n.Field != "" {
		why = append(why, n.Field)
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	if len(n.Unusable) > 0 {
		s += "; unusable until the egress allowlist allows " + strings.Join(n.Unusable, ", ")
	}
	return s
}

// Output describes the output of an execution; the text itself is not here.
type Output struct {
	StdoutBytes    int64 `json:"stdout_bytes"`
	StderrBytes    int64 `json:"stderr_bytes"`
	DiscardedBytes int64 `json:"discarded_bytes"`
	Truncated      bool  `json:"truncated"`
	RedactionCount int   `json:"redaction_count"`
	// SHA256 is the hash of stdout as delivered; StderrSHA256 of stderr.
	SHA256       string `json:"sha256,omitempty"`
	StderrSHA256 string `json:"stderr_sha256,omitempty"`
}

// Pin is one pinned script.
type Pin struct {
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
	PinMethod string `json:"pin_method"`
}

// Egress counts the connections of one execution.
type Egress struct {
	Allowed     int      `json:"allowed"`
	Denied      int      `json:"denied"`
	DeniedHosts []string `json:"denied_hosts"`
	// AllowedHosts are the first 16 distinct destinations the proxy let
	// through (host:port), in order.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
	// Placeholders counts, per masked credential, the requests that
	// carried its placeholder to one of its hosts (swapped for the value)
	// and the connections that tried to carry it elsewhere (sent as it
	// was, worthless).
	Placeholders map[string]PlaceholderUse `json:"placeholders,omitempty"`
	// Approved are the answers to the destinations the proxy asked a
	// person about (policy.egress_unknown: ask), in the order asked.
	Approved []EgressApproval `json:"approved,omitempty"`
}

// EgressApproval is the answer to one destination a running command's
// connection was held for.
type EgressApproval struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// Answer is once, session, always, deny, deny_always, timeout,
	// cancelled or too_many_pending; By who gave it (cli, tray,
	// dashboard, notification, or session for an earlier answer).
	Answer string `json:"answer"`
	By     string `json:"by,omitempty"`
	// ID is the approval request's.
	ID string `json:"id,omitempty"`
	// SavedEntry is what an always, deny_always or preset answer saved
	// (the entries, comma-separated), and SavedFile where.
	SavedEntry string `json:"saved_entry,omitempty"`
	SavedFile  string `json:"saved_file,omitempty"`
}

// PlaceholderUse counts where one masked credential's placeholder went.
type PlaceholderUse struct {
	Bound     int `json:"bound"`
	Elsewhere int `json:"elsewhere"`
}

// Limits says which limits held. Pids is true when the process count was
// bounded, by a pids cgroup or by RLIMIT_NPROC; NProc says whether
// RLIMIT_NPROC held (it does not for root).
type Limits struct {
	Pids       bool `json:"pids"`
	NProc      bool `json:"nproc"`
	Memory     bool `json:"memory"`
	Tmpfs      bool `json:"tmpfs"`
	FileSize   bool `json:"file_size"`
	DaemonKill bool `json:"daemon_kill"`
}
