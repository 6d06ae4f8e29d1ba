// Package doctor checks that this host can run the governed shell and
// says how to fix what it cannot: a structured report (api.DoctorReport)
// that gatehouse doctor prints, the service serves on its local API, and
// the dashboard and the tray render. No face works out a verdict again or
// reads another's text.
//
// The report's checks come truth first: is the service running, is Claude
// Code's hook installed and reachable, can a command run now; then this
// user's other problems and warnings. What IT's managed settings would add
// for every user is kept apart, as advice with its one remedy.
package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/buildid"
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/limits"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Options are what Run checks. They are plain data and functions: Run
// reads no environment of its own.
type Options struct {
	// Loaded is the configuration; LoadErr says why there is none.
	Loaded  *policy.Loaded
	LoadErr error
	// Home is the user's home directory; ManagedFile is Gatehouse's
	// managed policy file (policy.LoadOptions.ManagedFile).
	Home        string
	ManagedFile string
	// Keys is the keychain (the egress CA, credentials, the audit key).
	Keys keyring.Store
	// AuditPath is the audit database; OpenAudit opens it, returning nil
	// (and no error) when none has been written yet.
	AuditPath string
	OpenAudit func(ctx context.Context) (*audit.Store, error)
	// ToolCacheRoot is the directory of the agents' tool caches.
	ToolCacheRoot string
	// InitPath is the sandbox init; "" finds it beside this binary.
	InitPath string
	// ClaudeManaged is Claude Code's managed settings file ("" where
	// Claude Code reads it on this OS); ClaudeUser the user's settings
	// file ("" when it cannot be told).
	ClaudeManaged string
	ClaudeUser    string
	// GeminiSystem is Gemini CLI's system settings file ("" where Gemini
	// CLI reads it on this OS).
	GeminiSystem string
	// Service is the running service's status; nil when none runs.
	// ServiceError says why a service that holds the socket did not
	// answer.
	Service      *api.Status
	ServiceError string
	// Now returns the current time; nil is time.Now.
	Now func() time.Time
}

// Report is gatehouse doctor's report: the checks every face shows
// (api.DoctorReport), and the details gatehouse doctor prints and
// --json carries.
type Report struct {
	api.DoctorReport
	Config        []string      `json:"config_files"`
	ConfigError   string        `json:"config_error,omitempty"`
	Shell         string        `json:"shell"`
	DefaultCWD    string        `json:"default_cwd"`
	Backend       string        `json:"backend"`
	BackendWhy    string        `json:"backend_reason"`
	Requested     string        `json:"backend_requested"`
	SandboxMode   string        `json:"sandbox_mode,omitempty"`
	Seccomp       string        `json:"seccomp"`
	Required      bool          `json:"sandbox_required"`
	SandboxChecks []probe.Check `json:"sandbox_checks"`
	Cgroup        Cgroup        `json:"cgroup"`
	TmpfsSize     string        `json:"tmpfs_size"`
	FileSizeMax   string        `json:"file_size_max"`
	ToolCaches    Caches        `json:"tool_caches"`
	// ReadSet is what commands may read; Settings what the settings
	// file changed and ignored (nil: none set).
	ReadSet  policy.ReadSet   `json:"read_set"`
	Settings *policy.Settings `json:"settings_file,omitempty"`
	WarmPool int              `json:"warm_pool"`
	// SessionNetworks says whether the executions of one agent session
	// share a network (exec.sandbox.session_idle_seconds) and, when they
	// cannot, why.
	SessionNetworks string `json:"session_networks"`
	// WarmPoolNow is the running service's pool, when one answers.
	WarmPoolNow *api.PoolStatus `json:"warm_pool_now,omitempty"`
	Audit       Audit           `json:"audit"`
	EgressCA    CA              `json:"egress_ca"`
	// Credentials are the mappings of exec.credentials and how each
	// reaches commands now.
	Credentials []Credential `json:"credentials"`
	Init        Init         `json:"init"`
	ClaudeCode  Claude       `json:"claude_code"`
	// Agents are the other agents' settings (agents.go).
	Agents []Agent `json:"agents"`
	// Problems are the messages of the checks in state problem, in order.
	Problems []string `json:"problems"`

	// checks are found in any order; finish puts them truth first.
	checks []check
}

// A check is one finding before finish orders it: blocks says no command
// can run while it holds.
type check struct {
	api.DoctorCheck
	blocks bool
}

// Init is the sandbox init (gatehouse-init): where it was found and
// whether it is of this gatehouse's build.
type Init struct {
	Path    string   `json:"path,omitempty"`
	Where   string   `json:"found,omitempty"`
	Looked  []string `json:"looked,omitempty"`
	BuildID string   `json:"build_id,omitempty"`
	Want    string   `json:"build_id_expected"`
	OK      bool     `json:"ok"`
	Error   string   `json:"error,omitempty"`
}

// Cgroup is whether memory and pids limits are enforced.
type Cgroup struct {
	Memory bool   `json:"memory"`
	Pids   bool   `json:"pids"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (r *Report) add(name string, st api.DoctorState, remedy, format string, a ...any) {
	r.checks = append(r.checks, check{DoctorCheck: api.DoctorCheck{Name: name, State: st, Message: fmt.Sprintf(format, a...), Remedy: remedy}})
}

// problem adds a problem; blocks says no command can run while it holds.
func (r *Report) problem(name string, blocks bool, format string, a ...any) {
	r.add(name, api.DoctorProblem, "", format, a...)
	r.checks[len(r.checks)-1].blocks = blocks
}

// Run checks the host and the configuration of o, starting a probe
// sandbox running 'exit 0'; it runs no agent command.
func Run(ctx context.Context, o Options) *Report {
	r := &Report{SandboxChecks: []probe.Check{}, Problems: []string{}}
	r.ClaudeCode = readClaude(o.ClaudeManaged, o.ClaudeUser)
	r.Agents = readAgents(o)
	if o.Service != nil {
		r.WarmPoolNow = &o.Service.WarmPool
	}
	r.run(ctx, o)
	r.finish(o)
	return r
}

func (r *Report) run(ctx context.Context, o Options) {
	if o.LoadErr != nil || o.Loaded == nil {
		if o.LoadErr != nil {
			r.ConfigError = o.LoadErr.Error()
		}
		r.problem("config", true, "the configuration is invalid: fix it ('gatehouse config check')")
		return
	}
	loaded := o.Loaded
	cfg := &loaded.Config
	r.Config = loaded.Files
	r.Shell = cfg.Exec.Shell
	r.DefaultCWD = cfg.Exec.DefaultCWD
	r.Requested = cfg.Exec.Sandbox.Backend
	r.Seccomp = cfg.Exec.Sandbox.Seccomp
	r.Required = cfg.Policy.SandboxRequired
	r.TmpfsSize = cfg.Exec.Limits.TmpfsSize.String()
	r.FileSizeMax = cfg.Exec.Limits.FileSizeMax.String()
	r.ToolCaches = MeasureCaches(o.ToolCacheRoot, cfg)
	r.ReadSet, r.Settings = cfg.ReadSet(o.Home), cfg.Settings
	r.WarmPool = cfg.Exec.Sandbox.WarmPool
	r.SessionNetworks = r.sessionNetworks(cfg.Exec.Sandbox.SessionIdleSeconds)
	r.Audit = readAudit(ctx, o)
	r.Audit.Required = cfg.Policy.AuditRequired
	if x := cfg.Exec.Audit.Export.OTLP; x.Enabled() {
		r.Audit.Export = readExport(ctx, o, x, loaded.Sources["exec.audit.export.otlp.endpoint"].File == o.ManagedFile)
		if e := r.Audit.Export.KeychainError; e != "" {
			r.problem("audit_export", false, "the audit export's headers need credentials from the keychain, which cannot be read (%s): nothing is exported until it can", e)
		}
		for _, id := range r.Audit.Export.MissingCredentials {
			r.problem("audit_export", false, "the audit export's headers name credential %q, which is not in the keychain: nothing is exported until 'gatehouse cred set %s'", id, id)
		}
	}
	r.Credentials = Credentials(o.Keys, loaded)
	for _, c := range r.Credentials {
		if c.Missing {
			r.problem("credential", false, "credential %q (%s, %s) is not in the keychain: every command it reaches is denied credential_unknown until 'gatehouse cred set %s'", c.ID, c.Field, c.Source, c.ID)
		}
	}
	r.EgressCA = readCA(o.Keys, cfg)
	if r.EgressCA.Error != "" && r.EgressCA.Masked > 0 {
		r.problem("egress_ca", false, "the egress CA cannot be read (%s): commands holding masked credentials cannot start", r.EgressCA.Error)
	}
	if r.Audit.Error != "" {
		if r.Audit.Required {
			r.problem("audit", true, "the audit trail cannot be used (%s): every command would be denied audit_unavailable", r.Audit.Error)
		} else {
			r.problem("audit", false, "the audit trail cannot be used (%s): commands run without a record", r.Audit.Error)
		}
	}

	if !cfg.Exec.Enabled {
		r.problem("exec", true, "exec.enabled is false: the governed shell is turned off")
	}
	if fi, err := os.Stat(cfg.Exec.Shell); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		r.problem("shell", true, "exec.shell %s is not an executable file", cfg.Exec.Shell)
	}
	if fi, err := os.Stat(cfg.Exec.DefaultCWD); err != nil || !fi.IsDir() {
		r.problem("default_cwd", false, "exec.default_cwd %s is not a directory: create it or set exec.default_cwd", cfg.Exec.DefaultCWD)
	}

	facts := probe.Gather(cfg.Exec.Sandbox.BwrapPath)
	r.SandboxChecks = probe.Checks(facts)
	d := limits.Detect()
	r.Cgroup = Cgroup{Memory: d.Memory, Pids: d.Pids, Path: d.Path, Reason: d.Reason}

	ex, err := pipeline.New(cfg, pipeline.Options{Home: o.Home, InitPath: o.InitPath})
	if err != nil {
		r.problem("sandbox", true, "%v", err)
		return
	}
	// The init every sandbox runs: a missing one or one of another
	// build fails every start (the probe below would say so too, but
	// not where the init was looked for).
	in := ex.FindInit()
	r.Init = Init{Path: in.Path, Where: in.Where, Looked: in.Looked, Want: buildid.ID()}
	if runtime.GOOS != "windows" {
		r.Init.BuildID, err = pipeline.CheckInit(ctx, in)
		r.Init.OK = err == nil
		if err != nil {
			r.Init.Error = err.Error()
			r.problem("init", true, "%v", err)
		}
	}
	backend, why, res, err := ex.ProbeSandbox(ctx)
	r.Backend, r.BackendWhy = string(backend), why
	switch {
	case err != nil:
		r.BackendWhy = err.Error()
		r.SandboxMode = string(sandbox.ModeUnavailableDenied)
		r.problem("sandbox", true, "no sandbox: %v", err)
	case res.Status == sandbox.StatusFailedToStart && !r.Init.OK && (res.StatusReason == api.StatusReasonInitMissing || res.StatusReason == api.StatusReasonInitMismatch):
		r.SandboxMode = string(res.Mode)
		// Said above, with the remedy.
	case res.Status == sandbox.StatusFailedToStart:
		r.SandboxMode = string(res.Mode)
		r.problem("sandbox", true, "the probe sandbox did not start: %s", res.Error)
	default:
		r.SandboxMode = string(res.Mode)
		if !backend.Isolates() && cfg.Policy.SandboxRequired {
			r.SandboxMode = string(sandbox.ModeUnavailableDenied)
			r.problem("sandbox", true, "no sandbox backend (%s) and policy.sandbox_required is true: every command would be denied", why)
		}
		if res.Mode == sandbox.ModeBubblewrapNoSeccomp && res.SeccompReason != "" {
			r.BackendWhy += "; seccomp not installed: " + res.SeccompReason
		}
	}
}

// sessionNetworks describes exec.sandbox.session_idle_seconds on this
// host: a session's network is joined with util-linux's nsenter (Linux,
// bubblewrap); without it every execution has a network of its own.
func (r *Report) sessionNetworks(idle int) string {
	switch {
	case idle <= 0:
		return "off (exec.sandbox.session_idle_seconds is 0): every execution has a network of its own"
	case runtime.GOOS != "linux":
		return "not on this system (network namespaces are Linux's)"
	}
	path, err := exec.LookPath("nsenter")
	if err != nil {
		r.problem("session_networks", false, "nsenter is not installed: the executions of an agent session cannot share a network (a dev server one call starts is unreachable from the next); install util-linux")
		return "off: nsenter not found; install util-linux"
	}
	return fmt.Sprintf("on: an agent session's executions share one network, closed %d s after its last (%s)", idle, path)
}
