package cli

// The person's side of the hold stage: the pending approval requests, the
// answers, and the rules an "always" saved (docs/approvals.md).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

var approvalsCmd = &command{name: "approvals",
	summary: "list the calls waiting for a person's approval",
	usage: `usage: gatehouse approvals [--json]

Lists the approval requests the running service holds, oldest first: the
id, the agent, what it asks (the command and the rule that holds it, a
directory to trust as a workspace, or a destination a running command
wants to reach), the answers offered, and the rule or egress entry an
"always" would save.`,
	flags: runApprovals,
}

var approveCmd = &command{name: "approve",
	summary: "approve a held call: once, for its session, or always; or trust its directory",
	usage: `usage: gatehouse approve ID [--session | --always [--rule RULE | --entry ENTRY] | --trust | --trust-all | --preset] [--local-service]

Approves the pending request ID (gatehouse approvals). Without a flag it
runs this call once; for a workspace request, this call alone runs in the
directory, and nothing is trusted. --session also runs, without asking, the
same agent's calls in the same session that the rule the request shows
matches, until the session ends (at most 12 h). --always saves a rule that
allows it (the one the request shows, or RULE: a rule in YAML or JSON that
must match the held command) in the saved rules file, listed by
'gatehouse rules list'. For a workspace request, --trust trusts the
directory as a workspace for the agent that asked, and --trust-all for
every agent. For an egress request (a running command's connection to a
destination no allowlist entry covers), once lets this command reach it,
--session the same agent session's commands, and --always saves the exact
host:port in the saved rules file (policy.egress_allowlist there), or with
--entry '*.DOMAIN' the domain the host is or lies in (at least two labels;
:PORT may follow, the destination's; gatehouse approvals lists the picks).
--preset, offered when the destination is one of a preset's hosts, allows
all of that preset's hosts for the agent that asked (as gatehouse egress
allow --preset NAME --agent AGENT). A destination on this machine's own
loopback (127.0.0.1:PORT, localhost:PORT) is a service on this machine,
outside the sandbox: approving it needs --local-service, your tick on
"this is a service on my machine". It must be run on a terminal: an
agent cannot answer its own request.`,
	interspersed: true,
	flags:        func(fl *flag.FlagSet) runFunc { return runAnswer(fl, true) },
}

var denyCmd = &command{name: "deny",
	summary: "deny a held call, once or always",
	usage: `usage: gatehouse deny ID [--always [--entry ENTRY]]

Denies the pending request ID. --always also saves a rule that denies the
same command from now on (for an egress request, the host:port in
policy.egress_denylist of the saved rules file, or the '*.DOMAIN' --entry
names). It must be run on a terminal.`,
	interspersed: true,
	flags:        func(fl *flag.FlagSet) runFunc { return runAnswer(fl, false) },
}

func runApprovals(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("approvals: unexpected argument %q", args[0])
		}
		c, err := runningService(env)
		if err != nil {
			return err
		}
		as, err := c.Approvals(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			writeJSON(env.Stdout, api.ApprovalsResponse{Approvals: as})
			return nil
		}
		if len(as) == 0 {
			fmt.Fprintln(env.Stdout, "no approvals pending")
			return nil
		}
		for _, a := range as {
			printApproval(env, a)
		}
		return nil
	}
}

// printApproval prints one request as a block a person reads. Each field
// is one line (termesc.Line): a newline in a command cannot make a line
// that looks like another field.
func printApproval(env *Env, a api.Approval) {
	w := env.Stdout
	left := time.Until(a.Expires).Round(time.Second)
	fmt.Fprintf(w, "%s  %s via %s, expires in %s\n", a.ID, termesc.Line(a.Agent), termesc.Line(a.Surface), left)
	if a.Kind == api.ApprovalWorkspace {
		fmt.Fprintf(w, "  trust:   %s as a workspace (the call came from %s)\n", termesc.Line(a.Workspace), termesc.Line(a.Cwd))
	}
	if a.Kind == api.ApprovalEgress {
		fmt.Fprintf(w, "  reach:   %s\n", termesc.Line(a.Question))
	}
	if a.HostLoopback {
		fmt.Fprintf(w, "  warning: %s is a service on this machine (its own loopback), outside the sandbox; approve it only if you mean the command to reach it, with --local-service (gatehouse approve %s --local-service)\n",
			termesc.Line(a.SaveEntry), a.ID)
	}
	fmt.Fprintf(w, "  command: %s\n", termesc.Line(a.Command))
	fmt.Fprintf(w, "  in:      %s\n", termesc.Line(a.Cwd))
	if a.SessionID != "" {
		fmt.Fprintf(w, "  session: %s\n", termesc.Line(a.SessionID))
	}
	fmt.Fprintf(w, "  why:     %s\n", termesc.Line(a.Reason))
	fmt.Fprintf(w, "  answers: %s\n", strings.Join(a.Answers, ", "))
	for _, ans := range a.Answers {
		switch ans {
		case api.AnswerOnce:
			if a.Kind == api.ApprovalWorkspace {
				fmt.Fprintf(w, "    once:      this call only; nothing is trusted (gatehouse approve %s)\n", a.ID)
			}
		case api.AnswerTrust:
			fmt.Fprintf(w, "    trust:     trust %s for %s (gatehouse approve %s --trust)\n", termesc.Line(a.Workspace), termesc.Line(a.Agent), a.ID)
		case api.AnswerTrustAll:
			fmt.Fprintf(w, "    trust_all: trust %s for every agent (gatehouse approve %s --trust-all)\n", termesc.Line(a.Workspace), a.ID)
		}
	}
	if a.SaveEntry != "" {
		fmt.Fprintf(w, "  always saves: %s in policy.egress_allowlist of the saved rules file (deny --always: policy.egress_denylist)\n", termesc.Line(a.SaveEntry))
	}
	if len(a.Entries) > 0 {
		fmt.Fprintf(w, "  or save: %s (gatehouse approve %s --always --entry ENTRY)\n", termesc.Line(strings.Join(a.Entries, ", ")), a.ID)
	}
	if p, ok := policy.EgressPresetNamed(a.Preset); ok {
		if slices.Contains(a.Answers, api.AnswerPreset) {
			fmt.Fprintf(w, "  preset:  one of %s's hosts; gatehouse approve %s --preset allows them all (%s) for %s\n", p.What, a.ID, strings.Join(p.Entries, ", "), termesc.Line(a.Agent))
		} else {
			fmt.Fprintf(w, "  preset:  one of %s's hosts; gatehouse egress allow --preset %s allows them all\n", p.What, p.Name)
		}
	}
	if a.SaveRule != "" {
		header := "always saves"
		if slices.Contains(a.Answers, api.AnswerSession) {
			header = "session grants and always saves"
		}
		fmt.Fprintf(w, "  %s:\n", header)
		for _, l := range strings.Split(a.SaveRule, "\n") {
			fmt.Fprintf(w, "    %s\n", termesc.Line(l))
		}
	}
}

// onTerminal says whether the CLI's stdin is a terminal: only a person
// there answers an approval.
func onTerminal(env *Env) bool {
	f, ok := env.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func runAnswer(fl *flag.FlagSet, approve bool) runFunc {
	session, always, rule := new(bool), fl.Bool("always", false, ""), new(string)
	entry := fl.String("entry", "", "")
	trust, trustAll, preset, local := new(bool), new(bool), new(bool), new(bool)
	if approve {
		session = fl.Bool("session", false, "")
		rule = fl.String("rule", "", "")
		trust = fl.Bool("trust", false, "")
		trustAll = fl.Bool("trust-all", false, "")
		preset = fl.Bool("preset", false, "")
		local = fl.Bool("local-service", false, "")
	}
	name := "deny"
	if approve {
		name = "approve"
	}
	return func(ctx context.Context, env *Env, args []string) error {
		switch {
		case len(args) != 1:
			return usagef("%s: want one approval id (see gatehouse approvals)", name)
		case countTrue(*session, *always, *trust, *trustAll, *preset) > 1:
			return usagef("%s: --session, --always, --trust, --trust-all and --preset are different answers; give one", name)
		case *rule != "" && !*always:
			return usagef("%s: --rule goes with --always", name)
		case *entry != "" && !*always:
			return usagef("%s: --entry goes with --always", name)
		}
		if !onTerminal(env) {
			return withHint(fmt.Errorf("%s %s: refused: stdin is not a terminal; a person answers approvals, not a script or an agent", name, args[0]),
				"run it yourself in a terminal, or answer from the tray")
		}
		answer := api.AnswerDeny
		switch {
		case approve && *session:
			answer = api.AnswerSession
		case approve && *always:
			answer = api.AnswerAlways
		case approve && *trust:
			answer = api.AnswerTrust
		case approve && *trustAll:
			answer = api.AnswerTrustAll
		case approve && *preset:
			answer = api.AnswerPreset
		case approve:
			answer = api.AnswerOnce
		case *always:
			answer = api.AnswerDenyAlways
		}
		c, err := runningService(env)
		if err != nil {
			return err
		}
		resp, err := c.Answer(ctx, api.AnswerRequest{ID: args[0], Answer: answer, Rule: *rule, Entry: *entry, LocalService: *local, By: api.ByCLI})
		if err != nil {
			return fmt.Errorf("%s %s: %w", name, args[0], err)
		}
		verb := "approved"
		if !approve {
			verb = "denied"
		}
		fmt.Fprintf(env.Stdout, "%s %s (%s)\n", verb, args[0], answer)
		if resp.SavedRule != "" {
			fmt.Fprintf(env.Stdout, "saved rule:\n%s\n", indent(resp.SavedRule))
		}
		if resp.SavedEntry != "" {
			field := "policy.egress_allowlist"
			switch {
			case !approve:
				field = "policy.egress_denylist"
			case *preset:
				field = "the asking agent's policy.egress_allowlist_by_agent"
			}
			fmt.Fprintf(env.Stdout, "saved %s in %s of %s\n", termesc.Line(resp.SavedEntry), field, termesc.Line(resp.SavedFile))
		}
		return nil
	}
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// runningService returns a client of the running service, or an error
// with the remedy when none runs.
func runningService(env *Env) (*localapi.Client, error) {
	c, err := serviceClient(env)
	if err != nil {
		return nil, err
	}
	if _, err := c.Status(context.Background()); err != nil {
		if errors.Is(err, localapi.ErrNotRunning) {
			return nil, withHint(err, notRunningHint)
		}
		return nil, err
	}
	return c, nil
}

var rulesCmd = &command{name: "rules",
	summary: "list the rules in force, or remove one an approval saved (rules list|rm)",
	usage:   rulesUsage,
	subs: []*command{
		{name: "rules list", aliases: []string{"ls"}, flags: rulesList},
		{name: "rules rm", aliases: []string{"remove"}, run: rulesRm},
	},
}

const rulesUsage = `usage:
  gatehouse rules list [--json]   the rules in force, in order, with their origin
  gatehouse rules rm NAME         remove a rule an approval saved

Origins: managed (the managed file), saved (an "always" answer saved it, in
the state directory's rules.yaml), user (your config file), builtin.`

// ruleLine is one rule as rules list shows it.
type ruleLine struct {
	Origin string      `json:"origin"`
	Rule   policy.Rule `json:"rule"`
}

func rulesList(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("rules list: unexpected argument %q", args[0])
		}
		l, _, err := loadConfig(env, *configFile)
		if err != nil {
			return err
		}
		var out []ruleLine
		for _, r := range l.Config.Policy.Rules {
			out = append(out, ruleLine{Origin: r.Origin(), Rule: r})
		}
		for _, b := range policy.BuiltinRules {
			if l.Config.Policy.BuiltinEnabled(b.Name) {
				out = append(out, ruleLine{Origin: policy.OriginBuiltin, Rule: policy.Rule{Name: b.Name, Action: b.Action, Reason: b.Reason}})
			}
		}
		if *asJSON {
			writeJSON(env.Stdout, map[string]any{"rules": nonNilSlice(out)})
			return nil
		}
		for _, r := range out {
			fmt.Fprintf(env.Stdout, "%-8s %-6s %s", r.Origin, r.Rule.Action, r.Rule.Name)
			if m := matchSummary(&r.Rule); m != "" {
				fmt.Fprintf(env.Stdout, "  %s", termesc.Line(m))
			}
			fmt.Fprintln(env.Stdout)
		}
		return nil
	}
}

// matchSummary is a rule's matchers on one line.
func matchSummary(r *policy.Rule) string {
	var parts []string
	if len(r.Command) > 0 {
		parts = append(parts, "command "+strings.Join(r.Command, "|"))
	}
	for _, a := range r.Args {
		switch {
		case a.Exact != nil:
			parts = append(parts, "exact ["+strings.Join(a.Exact, " ")+"]")
		case len(a.Seq) > 0:
			parts = append(parts, "seq ["+strings.Join(a.Seq, " ")+"]")
		case len(a.Flag) > 0:
			parts = append(parts, "flag "+strings.Join(a.Flag, "|"))
		case len(a.Glob) > 0:
			parts = append(parts, "glob "+strings.Join(a.Glob, "|"))
		case a.Regex != "":
			parts = append(parts, "regex "+a.Regex)
		}
	}
	if r.Where != "" && r.Where != policy.WhereAny {
		parts = append(parts, r.Where)
	}
	if len(r.Flags) > 0 {
		parts = append(parts, "flags "+strings.Join(r.Flags, ","))
	}
	return strings.Join(parts, ", ")
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func rulesRm(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return usagef("rules rm: want one rule name (see gatehouse rules list)")
	}
	opts, err := loadOptions(env, "")
	if err != nil {
		return err
	}
	rs, err := policy.ReadSavedRules(opts.SavedRulesFile)
	if err != nil {
		return fmt.Errorf("rules rm: %w", err)
	}
	i := slices.IndexFunc(rs, func(r policy.Rule) bool { return r.Name == args[0] })
	if i < 0 {
		return withHint(fmt.Errorf("rules rm %s: no saved rule has that name (%s)", args[0], opts.SavedRulesFile),
			"only rules an approval saved are removed here; rules of your config file are edited there, managed rules by IT")
	}
	if err := policy.WriteSavedRules(opts.SavedRulesFile, slices.Delete(rs, i, i+1)); err != nil {
		return fmt.Errorf("rules rm %s: %w", args[0], err)
	}
	fmt.Fprintf(env.Stdout, "removed rule %s\n", args[0])
	// A running service puts it out of force now.
	if c, err := serviceClient(env); err == nil {
		if r, err := c.Reload(ctx); err == nil && !r.OK {
			fmt.Fprintf(env.Stderr, "gatehouse: warning: the service did not reload: %s\n", r.Error)
		}
	}
	return nil
}
