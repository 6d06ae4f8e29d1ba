package cli

// gatehouse egress: the presets of common package ecosystems' hosts, and
// allowing one in a step (docs/egress.md).

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

var egressCmd = &command{name: "egress",
	summary: "allow a package ecosystem's hosts in one step (egress allow --preset NAME), or list the presets",
	usage:   egressUsage + strings.Join(policy.EgressPresetNames(), ", ") + ".",
	subs: []*command{
		{name: "egress allow", flags: egressAllow},
		{name: "egress presets", run: egressPresets},
		{name: "egress list", aliases: []string{"ls"}, run: egressList},
		{name: "egress rm", aliases: []string{"remove"}, run: egressRm},
	},
}

const egressUsage = `usage:
  gatehouse egress allow --preset NAME [--agent AGENT]
                                         allow the hosts of a package ecosystem
  gatehouse egress presets               list the presets and their hosts
  gatehouse egress list                  the destinations approvals (or allow) saved
  gatehouse egress rm HOST:PORT          remove one of them

allow adds the preset's exact host:port entries to policy.egress_allowlist
in the saved rules file (the state directory's rules.yaml, where an
approval's "always" saves a destination): every agent's commands reach
them, within a managed allowlist. With --agent, only that agent's commands
do (policy.egress_allowlist_by_agent there), as an approval's preset answer
saves them. A running service reloads. Presets: `

func egressPresets(_ context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		return usagef("egress presets: unexpected argument %q", args[0])
	}
	for _, p := range policy.EgressPresets {
		fmt.Fprintf(env.Stdout, "%-9s %s: %s\n", p.Name, p.What, strings.Join(p.Entries, ", "))
	}
	return nil
}

func egressAllow(fl *flag.FlagSet) runFunc {
	preset := fl.String("preset", "", "")
	agent := fl.String("agent", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("egress allow: unexpected argument %q; name a preset with --preset", args[0])
		}
		if _, ok := policy.EgressPresetNamed(*preset); !ok {
			return usagef("egress allow: --preset %q: want one of %s", *preset, strings.Join(policy.EgressPresetNames(), ", "))
		}
		l, opts, err := loadConfig(env, "")
		if err != nil {
			return err
		}
		saved, err := policy.ReadSaved(opts.SavedRulesFile)
		if err != nil {
			return fmt.Errorf("egress allow: %w", err)
		}
		// An entry outside the managed allowlist would not load: refused
		// here, naming the managed file.
		p, added, err := policy.AllowEgressPreset(&saved, l.Config.ManagedEgress, *preset, *agent)
		if err != nil {
			return fmt.Errorf("egress allow --preset %s: %w", *preset, err)
		}
		field := "policy.egress_allowlist"
		if *agent != "" {
			field = "policy.egress_allowlist_by_agent." + *agent
		}
		if len(added) == 0 {
			fmt.Fprintf(env.Stdout, "%s is allowed already (%s of %s)\n", p.What, field, opts.SavedRulesFile)
			return nil
		}
		if err := policy.WriteSaved(opts.SavedRulesFile, saved); err != nil {
			return fmt.Errorf("egress allow: %w", err)
		}
		fmt.Fprintf(env.Stdout, "allowed %s: %s, in %s of %s\n", p.What, strings.Join(added, ", "), field, opts.SavedRulesFile)
		// A running service puts them in force now.
		if c, err := serviceClient(env); err == nil {
			if r, err := c.Reload(ctx); err == nil && !r.OK {
				fmt.Fprintf(env.Stderr, "gatehouse: warning: the service did not reload: %s\n", r.Error)
			}
		}
		return nil
	}
}

func egressList(_ context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		return usagef("egress list: unexpected argument %q", args[0])
	}
	opts, err := loadOptions(env, "")
	if err != nil {
		return err
	}
	saved, err := policy.ReadSaved(opts.SavedRulesFile)
	if err != nil {
		return fmt.Errorf("egress list: %w", err)
	}
	if len(saved.EgressAllow)+len(saved.EgressDeny)+savedForAgents(saved) == 0 {
		fmt.Fprintf(env.Stdout, "no destinations saved (%s)\n", opts.SavedRulesFile)
		return nil
	}
	for _, e := range saved.EgressAllow {
		fmt.Fprintf(env.Stdout, "allow  %s\n", e)
	}
	for _, a := range slices.Sorted(maps.Keys(saved.EgressAllowByAgent)) {
		for _, e := range saved.EgressAllowByAgent[a] {
			fmt.Fprintf(env.Stdout, "allow  %s  (for %s)\n", e, a)
		}
	}
	for _, e := range saved.EgressDeny {
		fmt.Fprintf(env.Stdout, "deny   %s\n", e)
	}
	return nil
}

func egressRm(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return usagef("egress rm: want one destination, as egress list shows it")
	}
	opts, err := loadOptions(env, "")
	if err != nil {
		return err
	}
	saved, err := policy.ReadSaved(opts.SavedRulesFile)
	if err != nil {
		return fmt.Errorf("egress rm: %w", err)
	}
	n := len(saved.EgressAllow) + len(saved.EgressDeny) + savedForAgents(saved)
	drop := func(e string) bool { return e == args[0] }
	saved.EgressAllow = slices.DeleteFunc(saved.EgressAllow, drop)
	saved.EgressDeny = slices.DeleteFunc(saved.EgressDeny, drop)
	for a, l := range saved.EgressAllowByAgent {
		saved.EgressAllowByAgent[a] = slices.DeleteFunc(l, drop)
	}
	if len(saved.EgressAllow)+len(saved.EgressDeny)+savedForAgents(saved) == n {
		return withHint(fmt.Errorf("egress rm %s: no saved destination is that (%s)", args[0], opts.SavedRulesFile),
			"gatehouse egress list shows them; entries of your config file are edited there")
	}
	if err := policy.WriteSaved(opts.SavedRulesFile, saved); err != nil {
		return fmt.Errorf("egress rm %s: %w", args[0], err)
	}
	fmt.Fprintf(env.Stdout, "removed %s\n", args[0])
	if c, err := serviceClient(env); err == nil {
		if r, err := c.Reload(ctx); err == nil && !r.OK {
			fmt.Fprintf(env.Stderr, "gatehouse: warning: the service did not reload: %s\n", r.Error)
		}
	}
	return nil
}

// savedForAgents counts the destinations saved for one agent.
func savedForAgents(s policy.Saved) int {
	n := 0
	for _, l := range s.EgressAllowByAgent {
		n += len(l)
	}
	return n
}
