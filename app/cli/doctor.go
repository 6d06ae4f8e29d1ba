package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/internal/buildid"
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/limits"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/egressca"
	"github.com/gatehouse-dev/gatehouse/service/export"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

var doctorCmd = &command{name: "doctor",
	summary: "check that this host can run the governed shell, and say how to fix it",
	usage: `usage: gatehouse doctor [--json] [--config FILE] [--managed-settings FILE]

Checks that this host can run the governed shell (exit status 1 when it
cannot) and says how to fix what it cannot. It also reports where Claude
Code's settings drifted from Gatehouse's policy: its hook missing from Claude
Code's effective settings, allowManagedHooksOnly off, Claude Code's own
sandbox off or with its escape hatch, a user settings.json deciding what the
managed settings leave open; each with its remedy, none changing the exit
status. --managed-settings checks against that file (and the
managed-settings.d beside it) in place of Claude Code's installed one.`,
	flags: runDoctor,
}

// doctorReport is the JSON form of gatehouse doctor.
type doctorReport struct {
	OK          bool          `json:"ok"`
	Config      []string      `json:"config_files"`
	ConfigError string        `json:"config_error,omitempty"`
	Shell       string        `json:"shell"`
	DefaultCWD  string        `json:"default_cwd"`
	Backend     string        `json:"backend"`
	BackendWhy  string        `json:"backend_reason"`
	Requested   string        `json:"backend_requested"`
	SandboxMode string        `json:"sandbox_mode,omitempty"`
	Seccomp     string        `json:"seccomp"`
	Required    bool          `json:"sandbox_required"`
	Checks      []probe.Check `json:"checks"`
	Cgroup      cgroupReport  `json:"cgroup"`
	TmpfsSize   string        `json:"tmpfs_size"`
	FileSizeMax string        `json:"file_size_max"`
	ToolCaches  cacheReport   `json:"tool_caches"`
	// ReadSet is what commands may read; Settings what the settings
	// file changed and ignored (nil: none set).
	ReadSet  policy.ReadSet   `json:"read_set"`
	Settings *policy.Settings `json:"settings_file,omitempty"`
	WarmPool int              `json:"warm_pool"`
	// WarmPoolNow is the running service's pool, when one answers.
	WarmPoolNow *api.PoolStatus `json:"warm_pool_now,omitempty"`
	Audit       auditReport     `json:"audit"`
	EgressCA    caReport        `json:"egress_ca"`
	// Credentials are the mappings of exec.credentials and how each
	// reaches commands now.
	Credentials []credReport `json:"credentials"`
	Init        initReport   `json:"init"`
	ClaudeCode  claudeReport `json:"claude_code"`
	Problems    []string     `json:"problems"`
}

// claudeReport is Claude Code's settings as doctor read them, and how they
// drifted from Gatehouse's policy (hook/claude Drift).
type claudeReport struct {
	ManagedFiles []string         `json:"managed_files"`
	UserFile     string           `json:"user_file"`
	Drift        []claude.Finding `json:"drift"`
}

// auditReport is the audit trail's state: where its key is kept, and the
// executions it has not closed.
type auditReport struct {
	Path string `json:"path"`
	// KeySource is keychain or file; KeyLocation the item or the file.
	// Before the first event it says where the key will go.
	KeySource   string `json:"key_source"`
	KeyLocation string `json:"key_location,omitempty"`
	Begun       bool   `json:"begun"`
	Open        int    `json:"open_executions"`
	Required    bool   `json:"audit_required"`
	Error       string `json:"error,omitempty"`
	// Export is the fleet export (exec.audit.export.otlp), when on.
	Export *exportReport `json:"export,omitempty"`
}

// exportReport is the fleet export: where it goes, who set it, and how
// far it has got.
type exportReport struct {
	Endpoint string `json:"endpoint"`
	Protocol string `json:"protocol"`
	// Managed says the managed file set the endpoint (the user cannot
	// turn it off).
	Managed bool `json:"managed"`
	// Cursor is the last row the collector acknowledged; Pending the
	// events after it.
	Cursor  int64 `json:"cursor_row"`
	Pending int64 `json:"pending_events"`
	// MissingCredentials are header credentials not in the keychain.
	MissingCredentials []string `json:"missing_credentials,omitempty"`
	// KeychainError says why the header credentials could not be looked
	// up.
	KeychainError string `json:"keychain_error,omitempty"`
}

// caReport is the egress CA masked credentials use: whether it exists
// yet, its fingerprint and expiry.
type caReport struct {
	Item        string    `json:"keychain_item"`
	Exists      bool      `json:"exists"`
	Fingerprint string    `json:"sha256_fingerprint,omitempty"`
	NotAfter    time.Time `json:"not_after,omitzero"`
	Masked      int       `json:"masked_mappings"`
	Error       string    `json:"error,omitempty"`
}

// credReport is one mapping of exec.credentials, and how it reaches
// commands now: for mode auto, as the value stored in the keychain
// decides (broker.ShapeOf). No value is kept or printed.
type credReport struct {
	policy.MappingMode
	// Now is masked or injected: what the mapping does with the value
	// stored now; "" when it cannot be told (Error says why).
	Now string `json:"now,omitempty"`
	// Reason says why, for mode auto.
	Reason string `json:"reason,omitempty"`
	// Bound are the hosts a masked credential is bound to now.
	Bound []string `json:"bound_hosts,omitempty"`
	// Unusable are those of Bound no egress allowlist allows.
	Unusable []string `json:"unusable_hosts,omitempty"`
	// Missing says the keychain holds no value of the credential.
	Missing bool   `json:"missing,omitempty"`
	Error   string `json:"error,omitempty"`
}

// doctorCredentials says how each mapping of l reaches commands, reading
// the values of mode auto's mappings from store (and keeping only their
// shape).
func doctorCredentials(store keyring.Store, l *policy.Loaded) []credReport {
	out := []credReport{}
	for _, m := range l.CredentialModes() {
		r := credReport{MappingMode: m}
		v, err := store.Get(m.ID)
		switch {
		case errors.Is(err, keyring.ErrNotFound):
			r.Missing = true
		case err != nil:
			r.Error = err.Error()
		}
		switch m.Mode {
		case policy.ModeMask:
			r.Now, r.Bound = "masked", m.Hosts
		case policy.ModeInject:
			r.Now = "injected"
		default:
			if err != nil {
				break
			}
			sh := broker.ShapeOf(v)
			r.Now, r.Reason = "injected", sh.Why
			if sh.Masked {
				r.Now, r.Reason, r.Bound = "masked", sh.Kind, sh.Hosts
			}
		}
		r.Unusable = l.Config.HostsNotAllowed(r.Bound, "")
		out = append(out, r)
	}
	return out
}

// doctorCA reads the egress CA without making one.
func doctorCA(env *Env, cfg *policy.Config) caReport {
	r := caReport{Item: egressca.Item, Masked: len(cfg.CredentialConfig().Masked)}
	ca, err := egressca.Peek(keyStore(env))
	switch {
	case errors.Is(err, keyring.ErrNotFound):
	case err != nil:
		r.Error = err.Error()
	default:
		r.Exists, r.Fingerprint, r.NotAfter = true, ca.Fingerprint(), ca.Cert.NotAfter
	}
	return r
}

// initReport is the sandbox init (gatehouse-init): where it was found and
// whether it is of this gatehouse's build.
type initReport struct {
	Path    string   `json:"path,omitempty"`
	Where   string   `json:"found,omitempty"`
	Looked  []string `json:"looked,omitempty"`
	BuildID string   `json:"build_id,omitempty"`
	Want    string   `json:"build_id_expected"`
	OK      bool     `json:"ok"`
	Error   string   `json:"error,omitempty"`
}

type cgroupReport struct {
	Memory bool   `json:"memory"`
	Pids   bool   `json:"pids"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func runDoctor(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	managedSettings := fl.String("managed-settings", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		r := doctorReport{Checks: []probe.Check{}, Problems: []string{}}
		r.ClaudeCode = doctorClaude(env, *managedSettings)
		problem := func(format string, a ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, a...)) }

		loaded, opts, err := loadConfig(env, *configFile)
		if err != nil {
			r.ConfigError = err.Error()
			problem("the configuration is invalid: fix it ('gatehouse config check')")
			return finishDoctor(env, &r, *asJSON)
		}
		cfg := &loaded.Config
		r.Config = loaded.Files
		r.Shell = cfg.Exec.Shell
		r.DefaultCWD = cfg.Exec.DefaultCWD
		r.Requested = cfg.Exec.Sandbox.Backend
		r.Seccomp = cfg.Exec.Sandbox.Seccomp
		r.Required = cfg.Policy.SandboxRequired
		r.TmpfsSize = cfg.Exec.Limits.TmpfsSize.String()
		r.FileSizeMax = cfg.Exec.Limits.FileSizeMax.String()
		r.ToolCaches = doctorCaches(toolCacheRoot(env, opts.Home), cfg)
		r.ReadSet, r.Settings = cfg.ReadSet(opts.Home), cfg.Settings
		r.WarmPool = cfg.Exec.Sandbox.WarmPool
		r.WarmPoolNow = servicePool(ctx, env)
		r.Audit = doctorAudit(ctx, env, opts.Home)
		r.Audit.Required = cfg.Policy.AuditRequired
		if o := cfg.Exec.Audit.Export.OTLP; o.Enabled() {
			r.Audit.Export = doctorExport(ctx, env, o, loaded.Sources["exec.audit.export.otlp.endpoint"].File == opts.ManagedFile)
			if e := r.Audit.Export.KeychainError; e != "" {
				problem("the audit export's headers need credentials from the keychain, which cannot be read (%s): nothing is exported until it can", e)
			}
			for _, id := range r.Audit.Export.MissingCredentials {
				problem("the audit export's headers name credential %q, which is not in the keychain: nothing is exported until 'gatehouse cred set %s'", id, id)
			}
		}
		r.Credentials = doctorCredentials(keyStore(env), loaded)
		for _, c := range r.Credentials {
			if c.Missing {
				problem("credential %q (%s, %s) is not in the keychain: every command it reaches is denied credential_unknown until 'gatehouse cred set %s'", c.ID, c.Field, c.Source, c.ID)
			}
		}
		r.EgressCA = doctorCA(env, cfg)
		if r.EgressCA.Error != "" && r.EgressCA.Masked > 0 {
			problem("the egress CA cannot be read (%s): commands holding masked credentials cannot start", r.EgressCA.Error)
		}
		if r.Audit.Error != "" {
			if r.Audit.Required {
				problem("the audit trail cannot be used (%s): every command would be denied audit_unavailable", r.Audit.Error)
			} else {
				problem("the audit trail cannot be used (%s): commands run without a record", r.Audit.Error)
			}
		}

		if !cfg.Exec.Enabled {
			problem("exec.enabled is false: the governed shell is turned off")
		}
		if fi, err := os.Stat(cfg.Exec.Shell); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			problem("exec.shell %s is not an executable file", cfg.Exec.Shell)
		}
		if fi, err := os.Stat(cfg.Exec.DefaultCWD); err != nil || !fi.IsDir() {
			problem("exec.default_cwd %s is not a directory: create it or set exec.default_cwd", cfg.Exec.DefaultCWD)
		}

		facts := probe.Gather(cfg.Exec.Sandbox.BwrapPath)
		r.Checks = probe.Checks(facts)
		d := limits.Detect()
		r.Cgroup = cgroupReport{Memory: d.Memory, Pids: d.Pids, Path: d.Path, Reason: d.Reason}

		ex, err := pipeline.New(cfg, pipeline.Options{Home: opts.Home, InitPath: execInitPath})
		if err != nil {
			problem("%v", err)
			return finishDoctor(env, &r, *asJSON)
		}
		// The init every sandbox runs: a missing one or one of another
		// build fails every start (the probe below would say so too, but
		// not where the init was looked for).
		in := ex.FindInit()
		r.Init = initReport{Path: in.Path, Where: in.Where, Looked: in.Looked, Want: buildid.ID()}
		if runtime.GOOS != "windows" {
			r.Init.BuildID, err = pipeline.CheckInit(ctx, in)
			r.Init.OK = err == nil
			if err != nil {
				r.Init.Error = err.Error()
				problem("%v", err)
			}
		}
		backend, why, res, err := ex.ProbeSandbox(ctx)
		r.Backend, r.BackendWhy = string(backend), why
		switch {
		case err != nil:
			r.BackendWhy = err.Error()
			r.SandboxMode = string(sandbox.ModeUnavailableDenied)
			problem("no sandbox: %v", err)
		case res.Status == sandbox.StatusFailedToStart && !r.Init.OK && (res.StatusReason == "init_missing" || res.StatusReason == "init_mismatch"):
			r.SandboxMode = string(res.Mode)
			// Said above, with the remedy.
		case res.Status == sandbox.StatusFailedToStart:
			r.SandboxMode = string(res.Mode)
			problem("the probe sandbox did not start: %s", res.Error)
		default:
			r.SandboxMode = string(res.Mode)
			if !backend.Isolates() && cfg.Policy.SandboxRequired {
				r.SandboxMode = string(sandbox.ModeUnavailableDenied)
				problem("no sandbox backend (%s) and policy.sandbox_required is true: every command would be denied", why)
			}
			if res.Mode == sandbox.ModeBubblewrapNoSeccomp && res.SeccompReason != "" {
				r.BackendWhy += "; seccomp not installed: " + res.SeccompReason
			}
		}
		return finishDoctor(env, &r, *asJSON)
	}
}

// doctorAudit reads the audit trail's key source and open executions.
func doctorAudit(ctx context.Context, env *Env, home string) auditReport {
	a := auditReport{Path: auditPath(env, home)}
	s, err := openAudit(ctx, env)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if s != nil {
		defer s.Close()
		if a.KeySource, a.KeyLocation, err = s.KeySource(ctx); err != nil {
			a.Error = err.Error()
			return a
		}
		open, err := s.Unfinished(ctx)
		if err != nil {
			a.Error = err.Error()
			return a
		}
		a.Open = len(open)
	}
	if a.KeySource != "" {
		a.Begun = true
		return a
	}
	a.KeySource = audit.KeySourceKeychain
	if _, err := keyStore(env).List(); errors.Is(err, keyring.ErrUnavailable) {
		a.KeySource = audit.KeySourceFile
	}
	return a
}

// doctorExport reads how far the fleet export has got, and which of its
// header credentials are missing (by name: no value is read).
func doctorExport(ctx context.Context, env *Env, o policy.OTLPExport, managed bool) *exportReport {
	x := &exportReport{Endpoint: o.Endpoint, Protocol: o.Protocol, Managed: managed}
	if s, err := openAudit(ctx, env); err == nil && s != nil {
		defer s.Close()
		x.Cursor, _ = s.ExportCursor(ctx, export.CursorName)
		x.Pending, _ = s.Backlog(ctx, x.Cursor)
	}
	if ids := o.Headers.Credentials(); len(ids) > 0 {
		have, err := broker.List(keyStore(env))
		if err != nil {
			x.KeychainError = err.Error()
			return x
		}
		for _, id := range ids {
			if !slices.ContainsFunc(have, func(e broker.Entry) bool { return e.ID == id }) {
				x.MissingCredentials = append(x.MissingCredentials, id)
			}
		}
	}
	return x
}

func finishDoctor(env *Env, r *doctorReport, asJSON bool) error {
	r.OK = len(r.Problems) == 0
	if asJSON {
		writeJSON(env.Stdout, r)
	} else {
		w := env.Stdout
		if r.ConfigError != "" {
			fmt.Fprintf(w, "config:        %s\n", r.ConfigError)
		} else {
			files := strings.Join(r.Config, ", ")
			if files == "" {
				files = "embedded defaults"
			}
			fmt.Fprintf(w, "config:        %s\n", files)
			fmt.Fprintf(w, "shell:         %s\n", r.Shell)
			fmt.Fprintf(w, "default_cwd:   %s\n", r.DefaultCWD)
			fmt.Fprintf(w, "backend:       %s (requested %s): %s\n", r.Backend, r.Requested, r.BackendWhy)
			fmt.Fprintf(w, "sandbox mode:  %s (seccomp %s, sandbox_required %v)\n", r.SandboxMode, r.Seccomp, r.Required)
			switch in := r.Init; {
			case in.Path == "":
				fmt.Fprintf(w, "sandbox init:  not found (looked at %s)\n", strings.Join(in.Looked, ", "))
			case in.OK:
				fmt.Fprintf(w, "sandbox init:  %s (%s; build %s, matches)\n", in.Path, in.Where, in.BuildID)
			case in.BuildID != "":
				fmt.Fprintf(w, "sandbox init:  %s (%s; build %s, gatehouse is build %s)\n", in.Path, in.Where, in.BuildID, in.Want)
			default:
				fmt.Fprintf(w, "sandbox init:  %s (%s)\n", in.Path, in.Where)
			}
			for _, c := range r.Checks {
				mark := "ok  "
				if !c.OK {
					mark = "FAIL"
				}
				fmt.Fprintf(w, "  %s %s: %s\n", mark, c.Name, c.Detail)
				if !c.OK && c.Remedy != "" {
					fmt.Fprintf(w, "       fix: %s\n", c.Remedy)
				}
			}
			cg := "memory and pids limits enforced (" + r.Cgroup.Path + ")"
			if !r.Cgroup.Memory || !r.Cgroup.Pids {
				cg = fmt.Sprintf("memory %v, pids %v: %s", r.Cgroup.Memory, r.Cgroup.Pids, r.Cgroup.Reason)
			}
			fmt.Fprintf(w, "cgroup:        %s\n", cg)
			fmt.Fprintf(w, "tmpfs size:    %s\n", r.TmpfsSize)
			fmt.Fprintf(w, "file size max: %s\n", r.FileSizeMax)
			printCaches(w, r.ToolCaches)
			printReadSet(w, "", "read:          ", "deny-read:     ", r.ReadSet)
			printSettings(w, "", r.Settings)
			if p := r.WarmPoolNow; p != nil && p.Size > 0 {
				fmt.Fprintf(w, "warm pool:     %d of %d ready in the running service, for %s; %s resident while idle\n",
					p.Ready, p.Size, p.Agent, humanize.IBytes(uint64(p.IdleRSS)))
			} else if r.WarmPool > 0 {
				fmt.Fprintf(w, "warm pool:     %d sandboxes kept ready by the service when it runs\n", r.WarmPool)
			} else {
				fmt.Fprintf(w, "warm pool:     off\n")
			}
			a := r.Audit
			switch {
			case a.Error != "":
				fmt.Fprintf(w, "audit:         %s: %s\n", a.Path, a.Error)
			case !a.Begun:
				where := "the keychain"
				if a.KeySource == audit.KeySourceFile {
					where = "a 0600 file beside it (no keychain here)"
				}
				fmt.Fprintf(w, "audit:         %s (no events yet; its key will be kept in %s)\n", a.Path, where)
			default:
				fmt.Fprintf(w, "audit:         %s (key: %s %s; %d open executions)\n", a.Path, a.KeySource, a.KeyLocation, a.Open)
			}
			if x := a.Export; x != nil {
				by := "user file"
				if x.Managed {
					by = "managed: the user file cannot turn it off"
				}
				fmt.Fprintf(w, "audit export:  %s (%s; %s): %d events not yet acknowledged, after row %d\n", x.Endpoint, x.Protocol, by, x.Pending, x.Cursor)
			} else {
				fmt.Fprintf(w, "audit export:  off\n")
			}
			printCredentials(w, r.Credentials)
			switch ca := r.EgressCA; {
			case ca.Error != "":
				fmt.Fprintf(w, "egress CA:     %s\n", ca.Error)
			case !ca.Exists:
				fmt.Fprintf(w, "egress CA:     none yet (made in keychain item %s by the first command holding a masked credential; %d masked)\n", ca.Item, ca.Masked)
			default:
				fmt.Fprintf(w, "egress CA:     SHA-256 %s, expires %s (keychain item %s; %d masked credentials)\n",
					ca.Fingerprint, ca.NotAfter.Local().Format("2006-01-02"), ca.Item, ca.Masked)
			}
		}
		printClaude(w, r.ClaudeCode)
		if r.OK {
			fmt.Fprintln(w, "ok: the governed shell can serve")
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "problem: %s\n", p)
		}
	}
	if !r.OK {
		return ExitStatus(ExitFailure)
	}
	return nil
}

// printCredentials writes how each mapping of exec.credentials reaches
// commands now.
func printCredentials(w io.Writer, cs []credReport) {
	if len(cs) == 0 {
		fmt.Fprintf(w, "credentials:   none mapped\n")
	}
	for _, c := range cs {
		now := c.Now
		switch {
		case c.Missing:
			now = "not in the keychain"
		case c.Error != "":
			now = "the keychain cannot be read (" + c.Error + ")"
		}
		if c.Reason != "" {
			now += ": " + c.Reason
		}
		if len(c.Bound) > 0 {
			now += ", bound to " + strings.Join(c.Bound, ", ")
		}
		fmt.Fprintf(w, "credential:    %s → %s, mode %s: %s (%s)\n", c.Field, c.ID, c.Mode, now, c.Source)
		if len(c.Unusable) > 0 {
			fmt.Fprintf(w, "       unusable: no egress allowlist allows %s; add them to policy.egress_allowlist, or write mode: inject\n", strings.Join(c.Unusable, ", "))
		}
	}
}

// servicePool is the running service's warm pool, or nil when no service
// answers within a second.
func servicePool(ctx context.Context, env *Env) *api.PoolStatus {
	c, err := serviceClient(env)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(c.Socket()); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		return nil
	}
	return &st.WarmPool
}

// doctorClaude reads Claude Code's managed settings (managed, or where
// Claude Code reads them, with the drop-ins beside) and the user's, and
// says how they drifted from Gatehouse's policy.
func doctorClaude(env *Env, managed string) claudeReport {
	if managed == "" {
		managed = claude.ManagedPath(runtime.GOOS)
	}
	r := claudeReport{ManagedFiles: []string{}, Drift: []claude.Finding{}}
	o := claude.DriftOptions{ManagedPath: managed, Executable: isExecutable}
	var unreadable []claude.Finding
	read := func(file string) ([]byte, bool) {
		b, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, false
		case err != nil:
			unreadable = append(unreadable, claude.Finding{Code: "settings_unreadable", File: file,
				Detail: fmt.Sprintf("%s cannot be read: %v", file, errors.Unwrap(err)),
				Remedy: "make it readable by every user (root-owned, mode 0644)"})
			return nil, false
		}
		return b, true
	}
	files := []string{managed}
	dir := filepath.Join(filepath.Dir(managed), "managed-settings.d")
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents { // in name order
			if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") && !e.IsDir() {
				files = append(files, filepath.Join(dir, n))
			}
		}
	}
	for _, f := range files {
		if b, ok := read(f); ok {
			o.Managed = append(o.Managed, claude.SettingsFile{Path: f, Data: b})
			r.ManagedFiles = append(r.ManagedFiles, f)
		}
	}
	if user, err := claudeSettingsPath(env); err == nil {
		r.UserFile = user
		o.User.Path = user
		o.User.Data, _ = read(user)
	}
	r.Drift = append(unreadable, claude.Drift(o)...)
	if r.Drift == nil {
		r.Drift = []claude.Finding{}
	}
	return r
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func printClaude(w io.Writer, c claudeReport) {
	managed := "no managed settings"
	if len(c.ManagedFiles) > 0 {
		managed = "managed " + strings.Join(c.ManagedFiles, ", ")
	}
	fmt.Fprintf(w, "claude code:   %s; user %s\n", managed, c.UserFile)
	if len(c.Drift) == 0 {
		fmt.Fprintln(w, "  ok   its settings hold Gatehouse's policy")
	}
	for _, d := range c.Drift {
		fmt.Fprintf(w, "  drift %s: %s\n", d.Code, d.Detail)
		fmt.Fprintf(w, "       fix: %s\n", d.Remedy)
	}
}
