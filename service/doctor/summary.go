package doctor

// This file orders the report's checks truth first and writes its facts:
// the one place a verdict and its wording are made.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
)

// RemedyStart is the remedy of a service that is not running: the one
// command starts it with systemd --user where there is one, else as a
// supervised background process (docs/service.md).
const RemedyStart = "gatehouse service start (systemd --user where there is one, else a background 'gatehouse serve'; docs/service.md)"

// RemedyRestart is the remedy of a service that does not answer.
const RemedyRestart = "gatehouse service stop, then gatehouse service start (gatehouse service status says which way it runs)"

// The names of the three checks that come first.
const (
	CheckService  = "service"
	CheckHook     = "hook"
	CheckCommands = "commands"
)

// finish puts the checks in their order (service, hook, commands; then
// the other problems, then the warnings), keeps what the managed settings
// would add apart, and writes the facts.
func (r *Report) finish(o Options) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	r.At = now()

	// This user's Claude Code settings: the hook's own state first.
	hook := api.DoctorCheck{Name: CheckHook, State: api.DoctorOK, Message: "Claude Code runs Gatehouse's hook for Bash"}
	var warnings []api.DoctorCheck
	r.Managed = []api.DoctorCheck{}
	for _, f := range r.ClaudeCode.Drift {
		switch {
		case f.ForEveryUser():
			if !r.ClaudeCode.Used {
				continue
			}
			c := api.DoctorCheck{Name: f.Code, State: api.DoctorAdvice, Message: f.Detail, Remedy: f.Remedy}
			if f.Remedy == claude.RemedyManaged {
				c.Remedy, r.ManagedRemedy = "", claude.RemedyManaged
			}
			r.Managed = append(r.Managed, c)
		case (f.Code == "hook_missing" || f.Code == "hook_broken") && hook.State == api.DoctorOK:
			hook = api.DoctorCheck{Name: CheckHook, State: api.DoctorWarning, Message: f.Detail, Remedy: f.Remedy}
		default:
			warnings = append(warnings, api.DoctorCheck{Name: f.Code, State: api.DoctorWarning, Message: f.Detail, Remedy: f.Remedy})
		}
	}
	// The other agents' findings are warnings: each agent's hook is one
	// way in among several.
	var hooked []string
	for _, a := range r.Agents {
		for _, f := range a.Drift {
			warnings = append(warnings, api.DoctorCheck{Name: a.Name + " " + f.Code, State: api.DoctorWarning, Message: f.Detail, Remedy: f.Remedy})
		}
		if a.Installed {
			hooked = append(hooked, a.Name)
		}
	}
	installed := !r.hasDrift("hook_missing")

	svc := api.DoctorCheck{Name: CheckService, State: api.DoctorOK}
	switch s := o.Service; {
	case s != nil:
		svc.Message = fmt.Sprintf("running (version %s, pid %d)", s.Version, s.PID)
	case o.ServiceError != "":
		svc.State, svc.Remedy = api.DoctorProblem, RemedyRestart
		svc.Message = "the service holds its socket but did not answer: " + o.ServiceError
	case installed:
		svc.State, svc.Remedy = api.DoctorProblem, RemedyStart
		svc.Message = "the service is not running, and Claude Code's hook is installed: every Bash call Claude Code makes is denied until it runs"
	case len(hooked) > 0:
		svc.State, svc.Remedy = api.DoctorProblem, RemedyStart
		svc.Message = "the service is not running, and the hook of " + strings.Join(hooked, ", ") + " is installed: every shell command it makes is blocked until it runs"
	default:
		svc.State, svc.Remedy = api.DoctorWarning, RemedyStart
		svc.Message = "not running: gatehouse exec and gatehouse mcp run commands in-process; approvals, the tray and the dashboard need the service"
	}

	cmds := api.DoctorCheck{Name: CheckCommands, State: api.DoctorOK, Message: "a command can run now (sandbox mode " + r.SandboxMode + ")"}
	var problems []api.DoctorCheck
	for _, c := range r.checks {
		if c.blocks && cmds.State == api.DoctorOK {
			cmds = c.DoctorCheck
			cmds.Name = CheckCommands
			continue
		}
		problems = append(problems, c.DoctorCheck)
	}
	r.Checks = append([]api.DoctorCheck{svc, hook, cmds}, problems...)
	r.Checks = append(r.Checks, warnings...)
	r.OK = r.Count(api.DoctorProblem) == 0
	for _, c := range r.Checks {
		if c.State == api.DoctorProblem {
			r.Problems = append(r.Problems, c.Message)
		}
	}
	r.Facts = r.facts()
}

func (r *Report) hasDrift(code string) bool {
	for _, f := range r.ClaudeCode.Drift {
		if f.Code == code {
			return true
		}
	}
	return false
}

// facts are the lines of what doctor read, in the order gatehouse doctor
// prints them.
func (r *Report) facts() []api.DoctorFact {
	var out []api.DoctorFact
	add := func(label, format string, a ...any) {
		out = append(out, api.DoctorFact{Label: label, Value: fmt.Sprintf(format, a...)})
	}
	if r.ConfigError != "" {
		add("config", "%s", r.ConfigError)
		add("claude code", "%s", r.claudeFact())
		return out
	}
	files := strings.Join(r.Config, ", ")
	if files == "" {
		files = "embedded defaults"
	}
	add("config", "%s", files)
	add("shell", "%s", r.Shell)
	add("default_cwd", "%s", r.DefaultCWD)
	add("backend", "%s (requested %s): %s", r.Backend, r.Requested, r.BackendWhy)
	add("sandbox mode", "%s (seccomp %s, sandbox_required %v)", r.SandboxMode, r.Seccomp, r.Required)
	switch in := r.Init; {
	case in.Path == "":
		add("sandbox init", "not found (looked at %s)", strings.Join(in.Looked, ", "))
	case in.OK:
		add("sandbox init", "%s (%s; build %s, matches)", in.Path, in.Where, in.BuildID)
	case in.BuildID != "":
		add("sandbox init", "%s (%s; build %s, gatehouse is build %s)", in.Path, in.Where, in.BuildID, in.Want)
	default:
		add("sandbox init", "%s (%s)", in.Path, in.Where)
	}
	cg := "memory and pids limits enforced (" + r.Cgroup.Path + ")"
	if !r.Cgroup.Memory || !r.Cgroup.Pids {
		cg = fmt.Sprintf("memory %v, pids %v: %s", r.Cgroup.Memory, r.Cgroup.Pids, r.Cgroup.Reason)
	}
	add("cgroup", "%s", cg)
	add("tmpfs size", "%s", r.TmpfsSize)
	add("file size max", "%s", r.FileSizeMax)
	switch p := r.WarmPoolNow; {
	case p != nil && p.Size > 0:
		add("warm pool", "%d of %d ready in the running service, for %s; %s resident while idle", p.Ready, p.Size, p.Agent, humanize.IBytes(uint64(p.IdleRSS)))
	case r.WarmPool > 0:
		add("warm pool", "%d sandboxes kept ready by the service when it runs", r.WarmPool)
	default:
		add("warm pool", "off")
	}
	add("session networks", "%s", r.SessionNetworks)
	switch a := r.Audit; {
	case a.Error != "":
		add("audit", "%s: %s", a.Path, a.Error)
	case !a.Begun:
		where := "the keychain"
		if a.KeySource == audit.KeySourceFile {
			where = "a 0600 file beside it (no keychain here)"
		}
		add("audit", "%s (no events yet; its key will be kept in %s)", a.Path, where)
	default:
		add("audit", "%s (key: %s %s; %d open executions)", a.Path, a.KeySource, a.KeyLocation, a.Open)
	}
	if x := r.Audit.Export; x != nil {
		by := "user file"
		if x.Managed {
			by = "managed: the user file cannot turn it off"
		}
		add("audit export", "%s (%s; %s): %d events not yet acknowledged, after row %d", x.Endpoint, x.Protocol, by, x.Pending, x.Cursor)
	} else {
		add("audit export", "off")
	}
	switch ca := r.EgressCA; {
	case ca.Error != "":
		add("egress CA", "%s", ca.Error)
	case !ca.Exists:
		add("egress CA", "none yet (made in keychain item %s by the first command holding a masked credential; %d masked)", ca.Item, ca.Masked)
	default:
		add("egress CA", "SHA-256 %s, expires %s (keychain item %s; %d masked credentials)",
			ca.Fingerprint, ca.NotAfter.Local().Format("2006-01-02"), ca.Item, ca.Masked)
	}
	add("claude code", "%s", r.claudeFact())
	for _, a := range r.Agents {
		if a.Used {
			parts := slices.Clone(a.Files)
			if a.Note != "" {
				parts = append(parts, a.Note)
			}
			add(a.Label, "%s", strings.Join(parts, "; "))
		}
	}
	return out
}

func (r *Report) claudeFact() string {
	managed := "no managed settings"
	if len(r.ClaudeCode.ManagedFiles) > 0 {
		managed = "managed " + strings.Join(r.ClaudeCode.ManagedFiles, ", ")
	}
	return managed + "; user " + r.ClaudeCode.UserFile
}
