package cli

import (
	"context"
	"fmt"
)

var serviceCmd = &command{name: "service",
	summary: "manage the user service: service install|uninstall|start|stop|status",
	usage:   serviceUsage,
	subs: []*command{
		{name: "service install", run: serviceAction(func(m userService) (string, error) {
			msg, err := m.Install()
			return msg + "; start it now with 'gatehouse service start'", err
		})},
		{name: "service uninstall", run: serviceAction(func(m userService) (string, error) {
			if err := m.Uninstall(); err != nil {
				return "", fmt.Errorf("removing the user service: %w", err)
			}
			return "removed", nil
		})},
		{name: "service start", run: serviceAction(userService.Start)},
		{name: "service stop", run: serviceAction(userService.Stop)},
		{name: "service status", run: serviceAction(userService.Status)},
	},
	badSub: func(name string) error {
		if name == "" {
			return errServiceAction
		}
		return usagef("service: unknown action %q; want install, uninstall, start, stop or status", name)
	},
}

var errServiceAction = usagef("service: want one of install, uninstall, start, stop, status")

const serviceUsage = `usage: gatehouse service install|uninstall|start|stop|status

Manages the Gatehouse user service, 'gatehouse serve', the way this host
allows: a systemd --user unit on Linux (~/.config/systemd/user/gatehouse.service),
a LaunchAgent on macOS (~/Library/LaunchAgents/dev.gatehouse.agent.plist).
On Linux without systemd --user (no systemctl, or no user bus: containers,
WSL, minimal installs) 'start' runs it as a background process (pidfile and
log in ~/.local/state/gatehouse/) and 'install' adds an XDG autostart entry
(~/.config/autostart/gatehouse-service.desktop) that starts it at login.
'status' says which way it runs. GATEHOUSE_SERVICE_MANAGER=systemd|launchd|none
chooses the way (none: the background process); auto, the default, detects it.`

// serviceAction is the run of one 'service ACTION': do on the user
// service this host's way, and say what it did.
func serviceAction(do func(userService) (string, error)) runFunc {
	return func(_ context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return errServiceAction
		}
		m, err := serviceManager(env)
		if err != nil {
			return err
		}
		msg, err := do(m)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, "service: "+msg)
		return nil
	}
}

// serviceInstallStart installs the user service (when needed) and starts
// it, saying which way it runs.
func serviceInstallStart(env *Env, exe string) error {
	m, err := serviceManagerFor(env, exe)
	if err != nil {
		return err
	}
	msg, err := m.Install()
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "service: "+msg)
	if msg, err = m.Start(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "service: "+msg)
	return nil
}
