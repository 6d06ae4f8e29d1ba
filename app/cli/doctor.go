package cli

// This file is gatehouse doctor: it gathers what service/doctor checks
// from this user's environment and prints the report, truth first.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/assemble"
	"github.com/gatehouse-dev/gatehouse/service/doctor"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

var doctorCmd = &command{name: "doctor",
	summary: "check that this host can run the governed shell, and say how to fix it",
	usage: `usage: gatehouse doctor [--json] [--config FILE] [--managed-settings FILE]

Checks that this host can run the governed shell (exit status 1 when it
cannot) and says how to fix what it cannot. Its first lines say whether the
service is running, whether Claude Code's hook is installed, and whether a
command can run now; a service that is down while the hook is installed is
a problem, since Claude Code's every Bash call is then denied. It also
reports where this user's Claude Code settings drifted from Gatehouse's
policy (its hook missing, a user settings.json deciding what the managed
settings leave open), each with its remedy, and apart from them, as advice
with one remedy, what IT's managed settings would add for every user
(allowManagedHooksOnly, Claude Code's own sandbox on and without its escape
hatch); neither changes the exit status. --json prints the report's
structure. --managed-settings checks against that file (and the
managed-settings.d beside it) in place of Claude Code's installed one.`,
	flags: runDoctor,
}

func runDoctor(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	managedSettings := fl.String("managed-settings", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		o := doctorOptions(env, *configFile, *managedSettings)
		o.Service, o.ServiceError = serviceStatus(ctx, env)
		r := doctor.Run(ctx, o)
		if *asJSON {
			writeJSON(env.Stdout, r)
		} else {
			printDoctor(env.Stdout, r)
		}
		if !r.OK {
			return ExitStatus(ExitFailure)
		}
		return nil
	}
}

// doctorOptions are what doctor checks for this user: the configuration
// (configFile, or the one in force), the keychain, the audit trail, the
// tool caches and Claude Code's settings (managed, or where Claude Code
// reads them). The running service is left for the caller to say.
func doctorOptions(env *Env, configFile, managed string) doctor.Options {
	opts, err := loadOptions(env, configFile)
	if err != nil {
		return doctor.Options{LoadErr: err}
	}
	// The service runs the same (service/assemble).
	return assemble.DoctorOptions(userPaths(env, opts), opts, managed)
}

// serviceStatus is the running service's status; nil when none runs
// (nothing listens on its socket), with why when one holds the socket but
// does not answer. The service probes a sandbox to answer: it is given
// serviceAnswer, not a second.
func serviceStatus(ctx context.Context, env *Env) (*api.Status, string) {
	c, err := serviceClient(env)
	if err != nil {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(ctx, serviceAnswer)
	defer cancel()
	st, err := c.Status(ctx)
	switch {
	case errors.Is(err, localapi.ErrNotRunning):
		return nil, ""
	case err != nil:
		return nil, err.Error()
	}
	return st, ""
}

// serviceAnswer bounds how long doctor waits for the running service's
// status.
const serviceAnswer = 30 * time.Second

// printDoctor writes the report: the service, the hook and whether a
// command can run first; then what doctor read, each fact on its line with
// its details; then Claude Code's drift, this user's apart from what the
// managed settings would add; then the verdict and each problem.
func printDoctor(w io.Writer, r *doctor.Report) {
	for _, name := range []string{doctor.CheckService, doctor.CheckHook, doctor.CheckCommands} {
		c, _ := r.Check(name)
		if c.State == api.DoctorOK {
			fmt.Fprintf(w, "%-15s%s\n", name+":", c.Message)
			continue
		}
		fmt.Fprintf(w, "%-15s%s: %s\n", name+":", c.State, c.Message)
		if c.Remedy != "" {
			fmt.Fprintf(w, "       fix: %s\n", c.Remedy)
		}
	}
	for _, f := range r.Facts {
		fmt.Fprintf(w, "%-15s%s\n", f.Label+":", f.Value)
		switch f.Label {
		case "sandbox init":
			for _, c := range r.SandboxChecks {
				mark := "ok  "
				if !c.OK {
					mark = "FAIL"
				}
				fmt.Fprintf(w, "  %s %s: %s\n", mark, c.Name, c.Detail)
				if !c.OK && c.Remedy != "" {
					fmt.Fprintf(w, "       fix: %s\n", c.Remedy)
				}
			}
		case "file size max":
			printCaches(w, r.ToolCaches)
			printReadSet(w, "", "read:          ", "deny-read:     ", r.ReadSet)
			printSettings(w, "", r.Settings)
		case "audit export":
			printCredentials(w, r.Credentials)
		case "claude code":
			printDrift(w, r)
		default:
			printAgentDrift(w, r, f.Label)
		}
	}
	if r.OK {
		fmt.Fprintln(w, "ok: the governed shell can serve")
	}
	for _, c := range r.Checks {
		if c.State != api.DoctorProblem {
			continue
		}
		fmt.Fprintf(w, "problem: %s\n", c.Message)
		if c.Remedy != "" {
			fmt.Fprintf(w, "       fix: %s\n", c.Remedy)
		}
	}
}

// printDrift writes how this user's Claude Code settings drifted, each
// with its remedy, then what the managed settings would add, with their
// one remedy said once.
func printDrift(w io.Writer, r *doctor.Report) {
	var mine []claude.Finding
	for _, d := range r.ClaudeCode.Drift {
		if !d.ForEveryUser() {
			mine = append(mine, d)
		}
	}
	if len(r.ClaudeCode.Drift) == 0 {
		fmt.Fprintln(w, "  ok   its settings hold Gatehouse's policy")
	}
	for _, d := range mine {
		fmt.Fprintf(w, "  drift %s: %s\n", d.Code, d.Detail)
		fmt.Fprintf(w, "       fix: %s\n", d.Remedy)
	}
	if len(r.Managed) == 0 {
		return
	}
	fmt.Fprintln(w, "managed:       what IT's managed settings would add for every user of this machine (advice, not a problem):")
	for _, c := range r.Managed {
		fmt.Fprintf(w, "  drift %s: %s\n", c.Name, c.Message)
		if c.Remedy != "" {
			fmt.Fprintf(w, "       fix: %s\n", c.Remedy)
		}
	}
	if r.ManagedRemedy != "" {
		fmt.Fprintf(w, "       fix: %s\n", r.ManagedRemedy)
	}
}

// printCredentials writes how each mapping of exec.credentials reaches
// commands now.
func printCredentials(w io.Writer, cs []doctor.Credential) {
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
