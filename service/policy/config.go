// Package policy holds Gatehouse's configuration model: the embedded
// defaults, the user's file and the IT-managed file, how they layer, and the
// validation that names the file, line and field of every bad value. It
// also decides a command: Decide judges the tree service/analysis built
// against the built-in rules, the managed and user rules, and the default
// and dynamic actions.
package policy

import "github.com/gatehouse-dev/gatehouse/sandbox"

// Config is the effective configuration. Paths in it are absolute and have
// had "~" expanded once loaded.
type Config struct {
	Exec   Exec   `yaml:"exec" json:"exec"`
	Policy Policy `yaml:"policy" json:"policy"`
	// Managed holds the managed file's bounds on paths, which the
	// executor checks again at each execution (resolve.go); nil when the
	// managed file sets none. It is not a configuration field.
	Managed *ManagedPaths `yaml:"-" json:"-"`
	// ManagedEgress holds the managed file's bounds on what an egress
	// approval may grant (egress.go); nil when it sets no allowlist. It is
	// not a configuration field.
	ManagedEgress *ManagedEgress `yaml:"-" json:"-"`
	// Settings is what exec.sandbox.settings_file changed and what of it
	// was ignored (settings.go); nil when no file is set. It is not a
	// configuration field: its effect is already in the fields above,
	// except AllowWrite and DeniedDomains, which the executor applies.
	Settings *Settings `yaml:"-" json:"-"`
}

// Exec says how this machine executes commands.
type Exec struct {
	Enabled    bool    `yaml:"enabled" json:"enabled"`
	Shell      string  `yaml:"shell" json:"shell"`
	DefaultCWD string  `yaml:"default_cwd" json:"default_cwd"`
	Sandbox    Sandbox `yaml:"sandbox" json:"sandbox"`
	Limits     Limits  `yaml:"limits" json:"limits"`
	Env        Env     `yaml:"env" json:"env"`
	Egress     Egress  `yaml:"egress" json:"egress"`
	// Credentials maps keychain credentials into commands
	// (credentials.go).
	Credentials Credentials `yaml:"credentials" json:"credentials"`
	Audit       Audit       `yaml:"audit" json:"audit"`
	Notify      Notify      `yaml:"notify" json:"notify"`
	Output      Output      `yaml:"output" json:"output"`
	// Dashboard is the local web dashboard the service serves.
	Dashboard Dashboard `yaml:"dashboard" json:"dashboard"`
}

// Dashboard says whether and where the service serves the dashboard
// (service/dashboard): on 127.0.0.1 only, at Port, or a free port chosen
// at start when Port is 0.
type Dashboard struct {
	Enabled bool `yaml:"enabled" json:"enabled"`
	Port    int  `yaml:"port" json:"port"`
}

// Output says how command output is delivered.
type Output struct {
	// TerminalControls is escape (escape sequences, bare CR, other
	// controls, bidi and invisible characters are shown as text; see
	// service/termesc) or keep (delivered as the command wrote them).
	TerminalControls string `yaml:"terminal_controls" json:"terminal_controls"`
	// ExplainRefusals ends a command's stderr with one Gatehouse line per
	// kind of refusal the sandbox or the egress proxy made while it ran
	// (service/pipeline/refusals.go), so that the agent reading the
	// output learns why, not only a tool's own error.
	ExplainRefusals bool `yaml:"explain_refusals" json:"explain_refusals"`
}

// Egress tunes the per-execution proxy; the allowlist itself is policy.
type Egress struct {
	// AllowedPorts are the ports an allowlist entry without ":port" allows.
	AllowedPorts []int `yaml:"allowed_ports" json:"allowed_ports"`
	// DeniedCIDRs are address ranges never dialed, whatever the allowlist.
	DeniedCIDRs []string `yaml:"denied_cidrs" json:"denied_cidrs"`
	// UpstreamCAFiles are PEM files of certificate authorities the proxy
	// trusts, on top of the system roots, when it verifies a host it
	// terminates TLS for (a masked credential's host): private registries,
	// tests.
	UpstreamCAFiles []string `yaml:"upstream_ca_files" json:"upstream_ca_files"`
}

// Audit says what the local audit trail keeps.
type Audit struct {
	RetentionDays   int      `yaml:"retention_days" json:"retention_days"`
	RetentionEvents int      `yaml:"retention_events" json:"retention_events"`
	KeepOutput      bool     `yaml:"keep_output" json:"keep_output"`
	OutputMaxBytes  ByteSize `yaml:"output_max_bytes" json:"output_max_bytes"`
	// Export sends every event to the fleet's collector as well
	// (export.go).
	Export AuditExport `yaml:"export" json:"export"`
}

// Notify turns the native notifications on or off.
type Notify struct {
	SandboxDegraded bool `yaml:"sandbox_degraded" json:"sandbox_degraded"`
	OutputRedacted  bool `yaml:"output_redacted" json:"output_redacted"`
}

// Sandbox selects and tunes the isolation backend.
type Sandbox struct {
	Backend string `yaml:"backend" json:"backend"` // auto | bubblewrap | seatbelt | none
	Seccomp string `yaml:"seccomp" json:"seccomp"` // required | preferred | off
	// BwrapPath is the bubblewrap binary; empty means "bwrap" from PATH.
	BwrapPath string `yaml:"bwrap_path" json:"bwrap_path"`
	// InitPath is Gatehouse's sandbox init (gatehouse-init); empty means
	// the one next to the gatehouse executable, else in /usr/lib/gatehouse
	// or /usr/local/lib/gatehouse.
	InitPath string `yaml:"init_path" json:"init_path"`
	// AllowPtrace lets commands use ptrace (debuggers); off by default.
	AllowPtrace bool `yaml:"allow_ptrace" json:"allow_ptrace"`
	// DenyRead adds paths to the mandatory deny-read set.
	DenyRead []string `yaml:"deny_read" json:"deny_read"`
	// WriteDeny adds names (relative to each workspace root and each
	// repository found in it) to the mandatory write-deny set.
	WriteDeny []string `yaml:"write_deny" json:"write_deny"`
	// CacheMax caps the agents' tool caches together (trimmed least
	// recently used first after an execution).
	CacheMax ByteSize `yaml:"cache_max" json:"cache_max"`
	// WarmPool is how many sandboxes the service keeps started ahead of
	// their commands.
	WarmPool int `yaml:"warm_pool" json:"warm_pool"`
	// SessionIdleSeconds is how long an agent session's shared network
	// stays after its last execution ended; 0 gives every execution a
	// network of its own.
	SessionIdleSeconds int `yaml:"session_idle_seconds" json:"session_idle_seconds"`
	// Read is the read posture: host (the host's files, minus the
	// deny-read set) or workspace (of the home directory and the other
	// places user data lives, only the workspace roots, ReadAllow and the
	// tool cache).
	Read string `yaml:"read" json:"read"`
	// ReadAllow are the paths commands may read under read: workspace,
	// besides the workspace roots.
	ReadAllow []string `yaml:"read_allow" json:"read_allow"`
	// SettingsFile is a sandbox-runtime settings file applied as a
	// further restriction, never a widening (settings.go); "" for none.
	SettingsFile string `yaml:"settings_file" json:"settings_file"`
}

// Read postures, the names of sandbox.ReadPostures.
const (
	ReadHost      = string(sandbox.ReadHost)
	ReadWorkspace = string(sandbox.ReadWorkspace)
)

// Limits bound one execution.
type Limits struct {
	MaxTimeoutSeconds int      `yaml:"max_timeout_seconds" json:"max_timeout_seconds"`
	StdinMaxBytes     ByteSize `yaml:"stdin_max_bytes" json:"stdin_max_bytes"`
	OutputMaxBytes    ByteSize `yaml:"output_max_bytes" json:"output_max_bytes"`
	MemoryMax         ByteSize `yaml:"memory_max" json:"memory_max"`
	PidsMax           int      `yaml:"pids_max" json:"pids_max"`
	TmpfsSize         ByteSize `yaml:"tmpfs_size" json:"tmpfs_size"`
	FileSizeMax       ByteSize `yaml:"file_size_max" json:"file_size_max"`
	MaxConcurrent     int      `yaml:"max_concurrent" json:"max_concurrent"`
	// TicketTTLSeconds is how long a routed command's ticket may wait for
	// its relay before it expires (never_ran).
	TicketTTLSeconds int `yaml:"ticket_ttl_seconds" json:"ticket_ttl_seconds"`
	// MaxPendingTickets is how many routed commands may wait for their
	// relay at once; a decision beyond it is refused (concurrency_limit).
	MaxPendingTickets int `yaml:"max_pending_tickets" json:"max_pending_tickets"`
}

// Env says what an agent may put in a command's environment.
type Env struct {
	AgentSettable []string `yaml:"agent_settable" json:"agent_settable"`
}

// Policy holds what is allowed: the knobs a control plane would own.
type Policy struct {
	SandboxRequired bool `yaml:"sandbox_required" json:"sandbox_required"`
	// AuditRequired refuses to run a command that cannot be put on the
	// audit record (audit_unavailable); false runs it with a warning.
	AuditRequired      bool `yaml:"audit_required" json:"audit_required"`
	ExecTimeoutSeconds int  `yaml:"exec_timeout_seconds" json:"exec_timeout_seconds"`
	// ApprovalTimeoutSeconds is how long a held call waits for a person's
	// answer before it is denied approval_timeout.
	ApprovalTimeoutSeconds int      `yaml:"approval_timeout_seconds" json:"approval_timeout_seconds"`
	WorkspaceRoots         []string `yaml:"workspace_roots" json:"workspace_roots"`
	ScriptInspectionRoots  []string `yaml:"script_inspection_roots" json:"script_inspection_roots"`
	// BuiltinExecRouting says whether Claude Code's Bash runs through the
	// governed shell (governed_shell) or only its decision (framework).
	BuiltinExecRouting string `yaml:"builtin_exec_routing" json:"builtin_exec_routing"`
	// CommandAnalysisMode is enforce or off; off denies every call
	// (command_analysis_off).
	CommandAnalysisMode string `yaml:"command_analysis_mode" json:"command_analysis_mode"`
	// EgressAllowlist are the destinations commands may reach; empty means
	// no egress.
	EgressAllowlist []string `yaml:"egress_allowlist" json:"egress_allowlist"`
	// EgressAllowlistByAgent gives the agents it names their own allowlist
	// in place of EgressAllowlist (egress.go).
	EgressAllowlistByAgent EgressByAgent `yaml:"egress_allowlist_by_agent" json:"egress_allowlist_by_agent"`
	// EgressUnknown says what a connection to a destination no allowlist
	// entry covers gets: ask (held for a person's answer, when the
	// service is there to ask one) or deny (egress.go).
	EgressUnknown string `yaml:"egress_unknown" json:"egress_unknown"`
	// EgressApprovalTimeoutSeconds is how long such a connection waits
	// for the answer before it is refused.
	EgressApprovalTimeoutSeconds int `yaml:"egress_approval_timeout_seconds" json:"egress_approval_timeout_seconds"`
	// EgressDenylist are destinations refused whatever an allowlist says,
	// and never asked about; entries are written like the allowlist's (one
	// without a port matches every port). It accumulates across the
	// files: a "deny always" answer adds to it in the saved rules file.
	EgressDenylist []string `yaml:"egress_denylist" json:"egress_denylist"`
	// EgressSaved are the allowlist entries "always" answers saved (the
	// saved rules file's policy.egress_allowlist): every agent's list
	// holds them, within the managed bound. It is not a field of the
	// user's file.
	EgressSaved []string `yaml:"-" json:"-"`
	// EgressSavedByAgent are the entries saved for one agent (the saved
	// rules file's policy.egress_allowlist_by_agent: a preset answer):
	// that agent's list holds them, within the managed bound.
	EgressSavedByAgent EgressByAgent `yaml:"-" json:"-"`
	// CredentialGrants names the agents each credential may reach; a
	// mapped credential it does not list reaches every agent
	// (credentials.go).
	CredentialGrants CredentialGrants `yaml:"credential_grants" json:"credential_grants"`
	// CredentialMode is any (each mapping says how its credential reaches
	// a command) or mask (a mapping that injects the value is refused).
	CredentialMode string `yaml:"credential_mode" json:"credential_mode"`
	// DLPPatterns are redacted from output, on top of the built-in set.
	DLPPatterns DLPPatterns `yaml:"dlp_patterns" json:"dlp_patterns"`
	// DefaultAction applies when no rule matches: allow, ask or deny.
	DefaultAction string `yaml:"default_action" json:"default_action"`
	// Rules are judged against every node of a command's tree (rules.go);
	// managed rules and user rules are separate tiers, and the strictest
	// answer wins.
	Rules Rules `yaml:"rules" json:"rules"`
	// DisabledBuiltinRules turns off built-in rules by name
	// (rules_builtin.go).
	DisabledBuiltinRules []string `yaml:"disabled_builtin_rules" json:"disabled_builtin_rules"`
	// DynamicAction applies to a command whose code cannot be known before
	// it runs (flag dynamic): allow, ask or deny.
	DynamicAction string `yaml:"dynamic_action" json:"dynamic_action"`
}

// ByteSize is a size in bytes; in YAML it may be written as an integer or
// with a unit: 512KiB, 1MiB, 4GiB (also KB, MB, GB as powers of 1000).
type ByteSize int64

// WorkspaceRootsEffective returns the directories commands may run and
// write in: policy.workspace_roots, or exec.default_cwd alone when that is
// empty. The result is a new slice.
func (c *Config) WorkspaceRootsEffective() []string {
	if len(c.Policy.WorkspaceRoots) == 0 {
		return []string{c.Exec.DefaultCWD}
	}
	return append([]string(nil), c.Policy.WorkspaceRoots...)
}

// TimeoutCeiling returns the lesser of policy.exec_timeout_seconds and
// exec.limits.max_timeout_seconds.
func (c *Config) TimeoutCeiling() int {
	return min(c.Policy.ExecTimeoutSeconds, c.Exec.Limits.MaxTimeoutSeconds)
}
