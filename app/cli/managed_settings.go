package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

var managedSettingsCmd = &command{name: "managed-settings",
	summary: "render Claude Code's managed-settings.json for IT (--install writes it)",
	usage:   managedUsage,
	flags:   runManagedSettings,
}

const managedUsage = `usage: gatehouse managed-settings [--routing governed_shell|framework] [--install] [--path FILE]

Prints the managed-settings.json that makes Claude Code use Gatehouse: its own
sandbox on, with no unsandboxed escape and no start without it, Gatehouse's
hook (this binary's absolute path) for Bash and the file tools, managed hooks
only, and permissions.deny rules keeping Claude Code's file tools out of the
deny-read set and Gatehouse's own directories (paths under the home directory
are written ~/…, so one file serves every user). --routing
governed_shell (the default) makes the hook route every allowed Bash call
through Gatehouse whatever the user's policy says; framework leaves routing to
policy.builtin_exec_routing. --install writes the file where Claude Code reads
it (or to --path), which needs administrator rights.`

func runManagedSettings(fl *flag.FlagSet) runFunc {
	routing := fl.String("routing", api.RoutingGovernedShell, "")
	install := fl.Bool("install", false, "")
	path := fl.String("path", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if *routing != api.RoutingGovernedShell && *routing != api.RoutingFramework {
			return usagef("managed-settings: --routing %q: want governed_shell or framework", *routing)
		}
		exe, err := selfPath()
		if err != nil {
			return err
		}
		hookRouting := ""
		if *routing == api.RoutingGovernedShell {
			hookRouting = api.RoutingGovernedShell
		}
		home, err := homeDir(env)
		if err != nil {
			return err
		}
		deny, readable := fileDenyPaths(env, home)
		data := claude.RenderManaged(claude.ManagedOptions{Exe: hookExe(exe), Routing: hookRouting, Home: home, DenyPaths: deny, Readable: readable})
		target := *path
		if target == "" {
			target = claude.ManagedPath(runtime.GOOS)
		}
		if !*install {
			env.Stdout.Write(data)
			fmt.Fprintf(env.Stderr, "gatehouse: Claude Code reads this from %s (and drop-ins from %s)\n",
				target, filepath.Join(filepath.Dir(target), "managed-settings.d"))
			return nil
		}
		old, err := readOptional(target)
		if err != nil {
			return err
		}
		if bytes.Equal(old, data) {
			fmt.Fprintf(env.Stdout, "%s: already up to date\n", target)
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return managedWriteErr(target, err)
		}
		if old != nil {
			if err := os.WriteFile(target+".gatehouse-backup", old, 0o644); err != nil {
				return managedWriteErr(target, err)
			}
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return managedWriteErr(target, err)
		}
		if err := os.Chmod(target, 0o644); err != nil {
			return managedWriteErr(target, err)
		}
		fmt.Fprintf(env.Stdout, "%s: written\n", target)
		return nil
	}
}

func managedWriteErr(target string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return withHint(fmt.Errorf("writing %s: %w", target, err),
			"managed settings are system-wide: run it as an administrator (sudo gatehouse managed-settings --install)")
	}
	return fmt.Errorf("writing %s: %w", target, err)
}

// fileDenyPaths are the places no file tool of an agent may touch, for
// the managed settings' rules, and the relay's directory, which must stay
// readable inside Claude Code's sandbox: the executor's deny-read set with
// the default configuration (Gatehouse's config and state directories
// included), the files in them a directory rule cannot cover once the
// relay directory is exempt (the configuration and the audit database),
// and the socket's directory when it is under home (a per-user directory
// elsewhere, such as $XDG_RUNTIME_DIR, cannot be written once for every
// user; the hook refuses it).
func fileDenyPaths(env *Env, home string) (deny, readable []string) {
	opts := policy.DefaultLoadOptions(runtime.GOOS, home, env.Getenv)
	deny = pipeline.DenyRead(home, privatePaths(env, opts), nil)
	p := servicePaths(env, home)
	db := filepath.Join(p.state, audit.FileName)
	deny = append(deny, opts.UserFile, db, db+"-wal", db+"-shm")
	for _, d := range []string{p.relay, filepath.Dir(p.socket)} {
		if strings.HasPrefix(d, home+string(filepath.Separator)) {
			deny = append(deny, d)
		}
	}
	return deny, []string{p.relay}
}
