package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/service/daemon"
)

var serviceCmd = &command{name: "service",
	summary: "manage the user service: service install|uninstall|start|stop|status",
	usage:   serviceUsage,
	run:     runService,
	subs: []*command{{name: "service install"}, {name: "service uninstall"}, {name: "service start"},
		{name: "service stop"}, {name: "service status"}},
}

const serviceUsage = `usage: gatehouse service install|uninstall|start|stop|status

Manages the Gatehouse user service: a systemd --user unit on Linux
(~/.config/systemd/user/gatehouse.service), a LaunchAgent on macOS
(~/Library/LaunchAgents/dev.gatehouse.agent.plist), running 'gatehouse serve'.`

func runService(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(env.Stdout, serviceUsage)
			return nil
		}
		return usagef("service: want one of install, uninstall, start, stop, status")
	}
	m, err := serviceManager(env)
	if err != nil {
		return err
	}
	switch args[0] {
	case "install":
		changed, err := m.Install()
		if err != nil {
			return fmt.Errorf("installing the user service: %w", err)
		}
		if changed {
			fmt.Fprintln(env.Stdout, "service: installed; start it with 'gatehouse service start'")
		} else {
			fmt.Fprintln(env.Stdout, "service: already installed")
		}
	case "uninstall":
		if err := m.Uninstall(); err != nil {
			return fmt.Errorf("removing the user service: %w", err)
		}
		fmt.Fprintln(env.Stdout, "service: removed")
	case "start":
		if err := m.Start(); err != nil {
			return withHint(fmt.Errorf("starting the user service: %w", err), "install it first with 'gatehouse service install'")
		}
		fmt.Fprintln(env.Stdout, "service: started")
	case "stop":
		if err := m.Stop(); err != nil {
			return fmt.Errorf("stopping the user service: %w", err)
		}
		fmt.Fprintln(env.Stdout, "service: stopped")
	case "status":
		st, err := m.Status()
		if err != nil {
			return fmt.Errorf("service status: %w", err)
		}
		fmt.Fprintf(env.Stdout, "service: %s\n", st)
	default:
		return usagef("service: unknown action %q; want install, uninstall, start, stop or status", args[0])
	}
	return nil
}

// serviceManager returns the manager of this binary's user service.
func serviceManager(env *Env) (*daemon.Manager, error) {
	exe, err := selfPath()
	if err != nil {
		return nil, err
	}
	home, err := homeDir(env)
	if err != nil {
		return nil, err
	}
	m, err := daemon.NewManager(exe, home)
	if errors.Is(err, daemon.ErrNoManager) {
		return nil, withHint(err, "run 'gatehouse serve' from your session's start-up instead (and 'gatehouse install --no-service' for the hook)")
	}
	return m, err
}

// serviceInstallStart installs the user service (when needed) and starts
// it.
func serviceInstallStart(env *Env, exe string) error {
	m, err := serviceManager(env)
	if err != nil {
		return err
	}
	changed, err := m.Install()
	if err != nil {
		return fmt.Errorf("installing the user service: %w", err)
	}
	if changed {
		fmt.Fprintln(env.Stdout, "service: installed")
	}
	if err := m.Start(); err != nil {
		return fmt.Errorf("starting the user service: %w", err)
	}
	fmt.Fprintln(env.Stdout, "service: started")
	return nil
}
