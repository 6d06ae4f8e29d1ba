package cli

// This file is `gatehouse cache`: the agents' tool caches
// (service/toolcache), shown by doctor and on each execution's card.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/gatehouse-dev/gatehouse/service/doctor"

	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

var cacheCmd = &command{name: "cache",
	summary: "show or clean the agents' tool caches (cache list|clean)",
	usage:   cacheUsage,
	subs: []*command{
		{name: "cache list", aliases: []string{"ls"}, flags: cacheList},
		{name: "cache clean", flags: cacheClean},
	},
}

const cacheUsage = `usage:
  gatehouse cache list [--json]     each agent's tool cache and its size
  gatehouse cache clean [--agent A] remove every agent's tool cache, or A's

Commands build into a cache of their agent's own (Go, npm, pip, cargo,
Gradle, Maven, XDG_CACHE_HOME), kept across executions and capped by
exec.sandbox.cache_max. Cleaning one while a command of that agent runs
makes that command's tools start cold.`

func printCaches(w io.Writer, r doctor.Caches) {
	fmt.Fprintf(w, "tool caches:   %s (%s of at most %s)\n", r.Root, humanize.IBytes(uint64(r.Total)), r.Max)
	for _, a := range r.Agents {
		fmt.Fprintf(w, "  %-20s %s\n", a.Agent, humanize.IBytes(uint64(a.Bytes)))
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
	}
}

// cacheRootAndConfig is the tool caches' root and the configuration
// (for its cap) of the cache subcommands.
func cacheRootAndConfig(env *Env, configFile string) (string, *policy.Config, error) {
	loaded, opts, err := loadConfig(env, configFile)
	if err != nil {
		return "", nil, err
	}
	return toolCacheRoot(env, opts.Home), &loaded.Config, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func cacheList(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("cache list: unexpected argument %q", args[0])
		}
		root, cfg, err := cacheRootAndConfig(env, *configFile)
		if err != nil {
			return err
		}
		r := doctor.MeasureCaches(root, cfg)
		if *asJSON {
			writeJSON(env.Stdout, r)
			return nil
		}
		printCaches(env.Stdout, r)
		return nil
	}
}

func cacheClean(fl *flag.FlagSet) runFunc {
	agent := fl.String("agent", "", "")
	configFile := fl.String("config", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("cache clean: unexpected argument %q; name an agent with --agent", args[0])
		}
		root, _, err := cacheRootAndConfig(env, *configFile)
		if err != nil {
			return err
		}
		what := "every agent's tool cache"
		if *agent != "" {
			dir := toolcache.For(root, *agent).Dir
			if !isDir(dir) {
				hint := "no agent has one yet"
				if names, _ := toolcache.Agents(root); len(names) > 0 {
					hint = "the agents with one are " + strings.Join(names, ", ")
				}
				return withHint(fmt.Errorf("cache clean: --agent: no tool cache for agent %q in %s", *agent, root), hint)
			}
			what = "the tool cache of agent " + *agent
		}
		freed, err := toolcache.Clean(root, *agent)
		if err != nil {
			return fmt.Errorf("cache clean: %w", err)
		}
		fmt.Fprintf(env.Stdout, "removed %s (%s)\n", what, humanize.IBytes(uint64(freed)))
		return nil
	}
}
