package cli

// This file is `gatehouse workspace`: the workspace roots the user trusts
// beyond policy.workspace_roots (service/trust, docs/workspaces.md). The
// CLI writes the trusted-workspaces file itself: it is the user's own
// process, and the service reads the file again when it changes.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/assemble"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

var workspaceCmd = &command{name: "workspace",
	summary: "trust, list or forget workspace roots (workspace add|list|rm)",
	usage:   workspaceUsage,
	subs: []*command{
		{name: "workspace add", usage: "usage: gatehouse workspace add [DIR]", flags: workspaceAdd},
		{name: "workspace list", aliases: []string{"ls"}, usage: "usage: gatehouse workspace list [--json]", flags: workspaceList},
		{name: "workspace rm", aliases: []string{"remove"}, usage: "usage: gatehouse workspace rm DIR", flags: workspaceRm},
	},
}

const workspaceUsage = `usage:
  gatehouse workspace add [DIR]       trust DIR (default: the current directory)
  gatehouse workspace list [--json]   the workspace roots: policy, then trusted
  gatehouse workspace rm DIR          stop trusting DIR

A trusted directory is a workspace root like those of
policy.workspace_roots: commands may run and write in it. It is trusted
where it resolves, at the top of its git repository when it is in one.
Never trusted: /, the home directory or above it, system directories,
Gatehouse's own directories, anything holding a credential store or lying
in a deny-read path, and, under a managed file, anything outside its roots.`

// workspaceStore opens the trusted-workspaces file of this user.
func workspaceStore(env *Env, home string) *trust.Store {
	return assemble.TrustStore(homePaths(env, home))
}

// workspaceGuard is what the loaded configuration never lets be trusted
// (assemble.Guard: the service asks the same one).
func workspaceGuard(env *Env, l *policy.Loaded, opts policy.LoadOptions) trust.Guard {
	return assemble.Guard(userPaths(env, opts), &l.Config)
}

func workspaceAdd(fl *flag.FlagSet) runFunc {
	configFile := fl.String("config", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 1 {
			return usagef("workspace add: too many arguments; usage: gatehouse workspace add [DIR]")
		}
		dir := "."
		if len(args) == 1 {
			dir = args[0]
		}
		if dir == "" {
			return usagef("workspace add: DIR is empty")
		}
		l, opts, err := loadConfig(env, *configFile)
		if err != nil {
			return err
		}
		s := workspaceStore(env, opts.Home)
		before := s.Roots()
		p, err := s.Add(dir, api.ByCLI, workspaceGuard(env, l, opts))
		var re *trust.RefusedError
		switch {
		case errors.As(err, &re):
			return withHint(fmt.Errorf("workspace add %s: %w", dir, err), trust.RefusedHint)
		case err != nil:
			return fmt.Errorf("workspace add %s: %w", dir, err)
		}
		if slices.Contains(before, p) {
			fmt.Fprintf(env.Stdout, "already trusted %s\n", p)
			return nil
		}
		fmt.Fprintf(env.Stdout, "trusted %s\n", p)
		return nil
	}
}

func workspaceRm(fl *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) != 1 || args[0] == "" {
			return usagef("workspace rm: want one DIR; usage: gatehouse workspace rm DIR")
		}
		dir := args[0]
		home, err := homeDir(env)
		if err != nil {
			return err
		}
		s := workspaceStore(env, home)
		err = s.Remove(dir)
		if errors.Is(err, trust.ErrNotTrusted) {
			hint := "'gatehouse workspace list' shows the trusted workspaces"
			if abs, aerr := filepath.Abs(dir); aerr == nil {
				real := filepath.FromSlash(policy.Resolve(filepath.ToSlash(abs)))
				if i := slices.IndexFunc(s.Roots(), func(r string) bool { return sandbox.Within(real, r) }); i >= 0 {
					hint = fmt.Sprintf("it lies in the trusted workspace %s; remove that one", s.Roots()[i])
				}
			}
			return withHint(fmt.Errorf("workspace rm %s: %w", dir, err), hint)
		}
		if err != nil {
			return fmt.Errorf("workspace rm %s: %w", dir, err)
		}
		fmt.Fprintf(env.Stdout, "removed %s\n", dir)
		return nil
	}
}

func workspaceList(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("workspace list: unexpected argument %q", args[0])
		}
		l, opts, err := loadConfig(env, *configFile)
		if err != nil {
			return err
		}
		ws, err := workspaces(env, l, opts)
		if err != nil {
			return fmt.Errorf("workspace list: %w", err)
		}
		if *asJSON {
			writeJSON(env.Stdout, api.WorkspacesResponse{Workspaces: ws})
			return nil
		}
		printWorkspaces(env.Stdout, ws)
		return nil
	}
}

// workspaces are the workspace roots of the configuration, then the
// trusted ones, each with why it is not in force now when it is not
// (assemble.Workspaces: the service lists its own the same way).
func workspaces(env *Env, l *policy.Loaded, opts policy.LoadOptions) ([]api.Workspace, error) {
	return assemble.Workspaces(userPaths(env, opts), &l.Config)
}

func printWorkspaces(w io.Writer, ws []api.Workspace) {
	for _, x := range ws {
		line := fmt.Sprintf("%-8s %s", x.Origin, x.Path)
		if x.Origin == api.WorkspaceTrusted {
			line += fmt.Sprintf("  (added %s by %s", x.Added.Local().Format(time.DateTime), x.By)
			if len(x.Agents) > 0 {
				line += ", for " + strings.Join(x.Agents, ", ") + " only"
			}
			line += ")"
		}
		fmt.Fprintln(w, line)
		if x.Problem != "" {
			fmt.Fprintf(w, "         not in force: %s\n", x.Problem)
		}
	}
}
