package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/version"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/daemon"
	"github.com/gatehouse-dev/gatehouse/service/export"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/notify"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

var serveCmd = &command{name: "serve",
	summary: "run the Gatehouse user service (normally started by 'gatehouse service start')",
	usage:   serveUsage,
	flags:   runServe,
}

// Version is the gatehouse version the service reports (internal/version).
var Version = version.Get().Version

const serveUsage = `usage: gatehouse serve [--config FILE] [--pidfile FILE]

Runs the user service in the foreground: it loads the configuration (an
invalid one refuses to start, naming the field), takes the service's lock
(~/.local/state/gatehouse/service.lock: one service per user, a second
refuses to start naming the first's pid), writes its pid to --pidfile while
it runs, serves the admission API on the user's socket and the relays'
FIFOs, reloads on SIGHUP or 'gatehouse config reload', and on SIGTERM or
SIGINT kills running commands and exits.`

func runServe(fl *flag.FlagSet) runFunc {
	configFile := fl.String("config", "", "")
	pidfile := fl.String("pidfile", "", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if fl.NArg() > 0 {
			return usagef("serve: unexpected argument %q", fl.Arg(0))
		}
		if runtime.GOOS == "windows" {
			return withHint(errors.New("the Gatehouse service does not run on Windows"),
				"on Windows, 'gatehouse hook claude' and 'gatehouse explain' work without it")
		}
		opts, err := loadOptions(env, *configFile)
		if err != nil {
			return err
		}
		logger := slog.New(slog.NewTextHandler(env.Stderr, nil))
		paths := servicePaths(env, opts.Home)
		// One service per user: the lock decides who runs
		// (service_lock_unix.go), before anything else starts.
		if err := os.MkdirAll(paths.state, 0o700); err != nil {
			return err
		}
		unlock, err := takeServiceLock(serviceLockPath(paths.state))
		if err != nil {
			return withHint(err, "'gatehouse service status' says how it runs; 'gatehouse service stop' stops it")
		}
		defer unlock()
		if *pidfile != "" {
			remove, err := writePidfile(*pidfile, os.Getpid())
			if err != nil {
				return err
			}
			defer remove()
		}
		probe.SetVersionCache(filepath.Join(paths.state, "probe-cache.json"))
		prompter := sync.OnceValue(func() notify.Prompter {
			p, err := notify.NewActionPrompter()
			if err != nil {
				logger.Info("approval notifications without actions", "why", err)
				return notify.PlainPrompter{}
			}
			return p
		})
		svc, err := service.New(service.Options{
			Load: func() (*policy.Loaded, error) { return policy.Load(opts) },
			NewExecutor: func(cfg *policy.Config) (*pipeline.Executor, error) {
				// What the settings file could not narrow, once per load.
				for _, w := range cfg.Settings.Warnings() {
					logger.Warn("settings file entry ignored", "entry", w)
				}
				ex, err := newExecutor(env, opts, cfg, logger, false)
				if err != nil {
					return nil, err
				}
				// The audit trail and notifications, as for exec (compose.go).
				// Each configuration gets its own: a ticket decided under the
				// previous one still records through it.
				obs := openExecObservers(ctx, env, opts.Home, cfg, true)
				ex.SetObservers(obs, obs.notifier)
				return ex, nil
			},
			SocketPath:     paths.socket,
			RelayDir:       paths.relay,
			SavedRulesFile: opts.SavedRulesFile,
			// A person's approval trusts a workspace under the configuration
			// as it is now (workspace.go).
			Trust: func(dir, agent, by string) (string, error) {
				l, err := policy.Load(opts)
				if err != nil {
					return "", err
				}
				return workspaceStore(env, opts.Home).AddFor(dir, agent, by, workspaceGuard(env, l, opts))
			},
			// A waiting approval raises a notification with the platform's
			// actions where it has them.
			ApprovalOpened: func(a api.Approval, answer func(api.AnswerRequest) api.AnswerResponse) {
				go func() {
					if err := prompter().Open(a, answer); err != nil {
						logger.Warn("approval notification", "id", a.ID, "err", err)
					}
				}()
			},
			ApprovalClosed: func(a api.Approval) { go prompter().Close(a.ID) },
			Untrust: func(dir string) error {
				return workspaceStore(env, opts.Home).Remove(dir)
			},
			// The dashboard on 127.0.0.1 (dashboard.go).
			Dashboard: serveDashboard(ctx, env, opts, logger),
			Workspaces: func() ([]api.Workspace, error) {
				l, err := policy.Load(opts)
				if err != nil {
					return nil, err
				}
				return workspaces(env, l, opts)
			},
			Version: Version,
			Logger:  logger,
			Reconcile: func(ctx context.Context) ([]string, error) {
				return reconcileAudit(ctx, env, opts.Home)
			},
			Export: func(ctx context.Context, cfg *policy.Config) error {
				return exportAudit(ctx, env, opts.Home, cfg.Exec.Audit.Export.OTLP, logger)
			},
		})
		if err != nil {
			logger.Error("refusing to start", "err", err)
			return withHint(err, "fix the fields named above; 'gatehouse config check' validates without running anything")
		}
		// SIGHUP reloads the configuration.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go func() {
			for range hup {
				svc.Reload()
			}
		}()
		return daemon.Run(ctx, svc.Run)
	}
}

// reconcileAudit closes on the user's audit trail what a previous service
// (or a gatehouse exec that is gone) left open, and describes each.
func reconcileAudit(ctx context.Context, env *Env, home string) ([]string, error) {
	path := auditPath(env, home)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	s, err := audit.Open(ctx, audit.Options{Path: path, Keys: keyStore(env), Service: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	closed, err := s.Reconcile(ctx)
	var out []string
	for _, c := range closed {
		out = append(out, fmt.Sprintf("%s %s (%s): %s", c.ID, c.End.Status, c.End.StatusReason, audit.Shorten(c.Command, 60)))
	}
	return out, err
}

// notRunningHint is the remedy for a service that is not running.
const notRunningHint = "start it with 'gatehouse service start' (or run 'gatehouse serve' in a terminal)"

// configReload asks the running service to load its configuration again.
func configReload(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		return usagef("config reload: unexpected argument %q", args[0])
	}
	c, err := serviceClient(env)
	if err != nil {
		return err
	}
	r, err := c.Reload(ctx)
	if errors.Is(err, localapi.ErrNotRunning) {
		return withHint(err, "the configuration is read when the service starts; "+notRunningHint)
	}
	if err != nil {
		return err
	}
	if !r.OK {
		return withHint(fmt.Errorf("the service kept its previous configuration: %s", r.Error),
			"fix the fields named above and run 'gatehouse config reload' again")
	}
	files := "embedded defaults only"
	if len(r.Files) > 0 {
		files = fmt.Sprint(r.Files)
	}
	fmt.Fprintf(env.Stdout, "reloaded: %s\n", files)
	return nil
}

// exportAudit sends the user's audit trail to the collector cfg names
// until ctx ends (service/export); its header values come from the
// keychain.
func exportAudit(ctx context.Context, env *Env, home string, cfg policy.OTLPExport, logger *slog.Logger) error {
	s, err := audit.Open(ctx, audit.Options{Path: auditPath(env, home), Keys: keyStore(env)})
	if err != nil {
		return err
	}
	defer s.Close()
	keys := keyStore(env)
	e, err := export.New(export.Options{
		Source:     s,
		Dial:       func(ctx context.Context) (export.Sender, error) { return export.Dial(ctx, cfg, keys) },
		Encoder:    export.NewEncoder(export.Resource(Version), Version),
		BatchSize:  cfg.BatchSize,
		Timeout:    time.Duration(cfg.TimeoutSeconds) * time.Second,
		MinBackoff: time.Duration(cfg.RetryInitialBackoffMS) * time.Millisecond,
		MaxBackoff: time.Duration(cfg.RetryMaxBackoffMS) * time.Millisecond,
		Logger:     logger,
	})
	if err != nil {
		return err
	}
	return e.Serve(ctx)
}
