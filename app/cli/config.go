package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

var configCmd = &command{name: "config",
	summary: "check, show or reload the configuration (config check [--managed FILE] [FILE], config show [--json], config reload)",
	usage:   configUsage,
	subs: []*command{
		{name: "config check", usage: "usage: gatehouse config check [--managed FILE] [FILE]", flags: configCheck},
		{name: "config show", usage: "usage: gatehouse config show [--json] [--config FILE]", flags: configShow},
		{name: "config reload", run: configReload}, // serve.go
	},
	badSub: func(name string) error {
		if name == "" {
			return usagef("config: missing subcommand; use 'config check [FILE]' or 'config show [--json]'")
		}
		return usagef("config: unknown subcommand %q; use check, show or reload", name)
	},
}

const configUsage = `usage:
  gatehouse config check [--managed FILE] [FILE]   validate without running anything
  gatehouse config show [--json] [--config FILE]   the effective configuration and where each value came from
  gatehouse config reload                          make the running service load it again

--managed checks against a managed file about to be rolled out in place of
the installed one (/etc/gatehouse/managed.yaml, macOS /Library/Application
Support/Gatehouse/managed.yaml).`

func configCheck(fl *flag.FlagSet) runFunc {
	managed := fl.String("managed", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if fl.NArg() > 1 {
			return usagef("config check: too many arguments; usage: gatehouse config check [--managed FILE] [FILE]")
		}
		opts, err := loadOptions(env, fl.Arg(0))
		if err != nil {
			return err
		}
		// --managed checks a managed file IT is about to roll out, in place of
		// the installed one; it changes this check only, never what runs.
		if *managed != "" {
			if _, err := os.Stat(*managed); err != nil {
				return fmt.Errorf("managed file %s: %w", *managed, errors.Unwrap(err))
			}
			opts.ManagedFile = *managed
		}
		l, err := policy.Load(opts)
		if err != nil {
			fmt.Fprintln(env.Stderr, err)
			return ExitStatus(ExitFailure)
		}
		names := l.Files
		if len(names) == 0 {
			names = []string{"(embedded defaults only)"}
		}
		for _, n := range names {
			fmt.Fprintf(env.Stdout, "%s: ok\n", n)
		}
		printReadSet(env.Stdout, "", "read: ", "deny-read: ", l.Config.ReadSet(opts.Home))
		printSettings(env.Stdout, "", l.Config.Settings)
		for _, w := range l.Config.Settings.Warnings() {
			fmt.Fprintf(env.Stderr, "gatehouse: warning: %s\n", w)
		}
		return nil
	}
}

// printReadSet writes what commands may read (policy.ReadSet), each line
// after prefix and its label.
func printReadSet(w io.Writer, prefix, readLabel, denyLabel string, rs policy.ReadSet) {
	if rs.Posture == policy.ReadWorkspace {
		fmt.Fprintf(w, "%s%sworkspace: hidden %s; readable in them only %s and the agent's tool cache\n",
			prefix, readLabel, strings.Join(rs.Hidden, ", "), strings.Join(rs.Readable, ", "))
	} else {
		fmt.Fprintf(w, "%s%shost: every file but the deny-read set\n", prefix, readLabel)
	}
	if len(rs.DenyRead) > 0 {
		fmt.Fprintf(w, "%s%sthe built-in set and %s\n", prefix, denyLabel, strings.Join(rs.DenyRead, ", "))
	}
}

// printSettings writes what the settings file changed and what of it was
// ignored, each line after prefix; nothing when none is set.
func printSettings(w io.Writer, prefix string, s *policy.Settings) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "%ssettings file: %s (%s): %d changes, %d ignored\n", prefix, s.File, s.Format, len(s.Changes), len(s.Ignored))
	for _, n := range s.Changes {
		if n.Path == "" {
			fmt.Fprintf(w, "%s  %s: %s\n", prefix, s.File, n.What)
			continue
		}
		fmt.Fprintf(w, "%s  %s:%d: %s: %s\n", prefix, s.File, n.Line, n.Path, n.What)
	}
	for _, x := range s.Warnings() {
		fmt.Fprintf(w, "%s  %s\n", prefix, x)
	}
}

func configShow(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		l, opts, err := loadConfig(env, *configFile)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"config": l.Config, "sources": l.Sources, "files": l.Files,
				"read_set": l.Config.ReadSet(opts.Home), "settings_file": l.Config.Settings, "credential_modes": l.CredentialModes()})
		}
		if err := l.Show(env.Stdout); err != nil {
			return err
		}
		// What the configuration means for reading, and what the
		// settings file changed, as comments.
		printReadSet(env.Stdout, "# ", "read: ", "deny-read: ", l.Config.ReadSet(opts.Home))
		printSettings(env.Stdout, "# ", l.Config.Settings)
		// How each credential mapping reaches commands (no keychain is
		// read: doctor says what mode auto decides for a stored value).
		l.ShowCredentials(env.Stdout, "# ")
		return nil
	}
}
