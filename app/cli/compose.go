package cli

// The composition root: where the CLI finds the user's files, and how it
// builds the executor, its observers and the service's client from them.
// Every subcommand that needs one of these takes it from here.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/assemble"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/notify"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/socket"
)

func osGetenv(k string) string { return os.Getenv(k) }

// homeDir returns the user's home directory from $HOME, falling back to the
// password database.
func homeDir(env *Env) (string, error) { return decide.Home(env.Getenv) }

// loadOptions returns where the configuration comes from. $GATEHOUSE_CONFIG
// (or configFlag) replaces the user file; the managed file is fixed.
func loadOptions(env *Env, configFlag string) (policy.LoadOptions, error) {
	home, err := homeDir(env)
	if err != nil {
		return policy.LoadOptions{}, err
	}
	opts := policy.DefaultLoadOptions(runtime.GOOS, home, env.Getenv)
	if f := env.Getenv("GATEHOUSE_CONFIG"); f != "" {
		opts.UserFile, opts.ExplicitUser = f, true
	}
	if configFlag != "" {
		opts.UserFile, opts.ExplicitUser = configFlag, true
	}
	return opts, nil
}

// loadConfig loads and validates the effective configuration.
func loadConfig(env *Env, configFlag string) (*policy.Loaded, policy.LoadOptions, error) {
	opts, err := loadOptions(env, configFlag)
	if err != nil {
		return nil, opts, err
	}
	l, err := policy.Load(opts)
	if err != nil {
		return nil, opts, withHint(fmt.Errorf("invalid configuration:\n%w", err),
			"fix the fields named above; 'gatehouse config check' validates without running anything")
	}
	return l, opts, nil
}

// userPaths are the user's files and keychain as the service and the
// in-process executors see them (service/assemble), for the configuration
// opts loads; the init binary is execInitPath.
func userPaths(env *Env, opts policy.LoadOptions) assemble.Paths {
	p := assemble.Locate(opts, env.Getenv)
	p.InitPath = execInitPath
	return p
}

// homePaths are userPaths for what needs only the home directory.
func homePaths(env *Env, home string) assemble.Paths {
	return userPaths(env, policy.LoadOptions{Home: home})
}

// privatePaths are Gatehouse's own files, hidden from every command.
func privatePaths(env *Env, opts policy.LoadOptions) []string { return userPaths(env, opts).Private }

// newExecutor builds the pipeline for cfg (assemble.Executor): gatehouse
// exec in-process and the service use that one constructor, so both run
// the same pipeline. logger may be nil. oneShot says this process exits
// after its one command (pipeline.Options.OneShot).
func newExecutor(env *Env, opts policy.LoadOptions, cfg *policy.Config, logger *slog.Logger, oneShot bool) (*pipeline.Executor, error) {
	if !filepath.IsAbs(cfg.Exec.Shell) {
		return nil, usagef("exec.shell %q is not absolute", cfg.Exec.Shell)
	}
	return assemble.Executor(userPaths(env, opts), cfg, logger, oneShot)
}

// paths are where the service and its clients meet.
type paths struct {
	state  string // the state directory
	socket string // the admission API's socket
	relay  string // the relays' FIFO directory
}

func servicePaths(env *Env, home string) paths {
	p := socket.Locate(runtime.GOOS, home, env.Getenv)
	return paths{state: p.State, socket: p.Socket, relay: p.Relay}
}

// serviceClient returns a client of the user's service.
func serviceClient(env *Env) (*localapi.Client, error) {
	home, err := homeDir(env)
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(servicePaths(env, home).socket), nil
}

// envKeyringService names the keychain service Gatehouse's items live
// under; only tests set it (assemble.EnvKeyringService).
const envKeyringService = assemble.EnvKeyringService

// auditPath returns the audit database of this user.
func auditPath(env *Env, home string) string { return homePaths(env, home).Audit }

// keyStore returns the OS keychain.
func keyStore(env *Env) *keyring.OS {
	return keyring.NewOS(env.Getenv(envKeyringService))
}

// openAudit opens the user's audit database; it returns nil (and no
// error) when none has been written yet.
func openAudit(ctx context.Context, env *Env) (*audit.Store, error) {
	home, err := homeDir(env)
	if err != nil {
		return nil, err
	}
	path := auditPath(env, home)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return audit.Open(ctx, audit.Options{Path: path, Keys: keyStore(env)})
}

// execObservers are the audit trail and the notifier of an in-process
// execution (assemble.Observers), with the CLI's faces of what they could
// not record: warn and annotate.
type execObservers struct {
	*assemble.Observers
	notifier *notify.Notifier
}

// openExecObservers opens the user's audit database and a notifier for cfg;
// service says they are the user service's. It never fails: a trail that
// cannot be opened is reported by warn (and, under policy.audit_required,
// denies every command). The notifier's warnings go to stderr.
func openExecObservers(ctx context.Context, env *Env, home string, cfg *policy.Config, service bool) *execObservers {
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	o := assemble.OpenObservers(ctx, homePaths(env, home), cfg, service, logger)
	return &execObservers{Observers: o, notifier: o.Notifier()}
}

// warn prints what was not recorded to stderr.
func (o *execObservers) warn(env *Env) {
	msg, hint := o.problem()
	if msg == "" {
		return
	}
	fmt.Fprintf(env.Stderr, "gatehouse: warning: %s\n", msg)
	if hint != "" {
		fmt.Fprintf(env.Stderr, "gatehouse: hint: %s\n", hint)
	}
}

// problem returns why an event was not recorded, and a hint; "" when all
// were.
func (o *execObservers) problem() (string, string) { return o.Problem() }

// annotate adds what was not recorded to a --json answer as
// "audit_error".
func (o *execObservers) annotate(m map[string]any) map[string]any {
	if msg, hint := o.problem(); msg != "" {
		m["audit_error"] = map[string]string{"error": msg, "hint": hint}
	}
	return m
}

// signalContext is ctx ended by SIGINT or SIGTERM.
func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// toolCacheRoot is the directory of the agents' tool caches
// (service/toolcache).
func toolCacheRoot(env *Env, home string) string { return homePaths(env, home).ToolCacheRoot }
