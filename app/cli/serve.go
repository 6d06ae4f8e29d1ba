package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/internal/version"
	"github.com/gatehouse-dev/gatehouse/service/assemble"
	"github.com/gatehouse-dev/gatehouse/service/daemon"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
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
		// The user's files and keychain, found once and handed down.
		paths := userPaths(env, opts)
		// One service per user: the lock decides who runs
		// (service_lock_unix.go), before anything else starts.
		if err := os.MkdirAll(paths.State, 0o700); err != nil {
			return err
		}
		unlock, err := takeServiceLock(serviceLockPath(paths.State))
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
		// Everything the service needs to run is assembled beside it
		// (service/assemble); the CLI hands it the doctor the dashboard
		// shows.
		svc, err := assemble.New(ctx, assemble.Options{
			Paths:   paths,
			Load:    opts,
			Version: Version,
			Logger:  logger,
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
