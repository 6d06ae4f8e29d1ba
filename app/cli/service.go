package cli

import (
	"context"
	"fmt"
)

var serviceCmd = &command{name: "service",
	summary: "manage the user service: service install|uninstall|start|stop|status",
	usage:   serviceUsage,
	run:     runService,
	subs: []*command{{name: "service install"}, {name: "service uninstall"}, {name: "service start"},
		{name: "service stop"}, {name: "service status"}},
}

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

func runService(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return usagef("service: want one of install, uninstall, start, stop, status")
	}
	if args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(env.Stdout, serviceUsage)
		return nil
	}
	switch args[0] {
	case "install", "uninstall", "start", "stop", "status":
	default:
		return usagef("service: unknown action %q; want install, uninstall, start, stop or status", args[0])
	}
	m, err := serviceManager(env)
	if err != nil {
		return err
	}
	var msg string
	switch args[0] {
	case "install":
		msg, err = m.Install()
		msg += "; start it now with 'gatehouse service start'"
	case "uninstall":
		if err = m.Uninstall(); err != nil {
			err = fmt.Errorf("removing the user service: %w", err)
		}
		msg = "removed"
	case "start":
		msg, err = m.Start()
	case "stop":
		msg, err = m.Stop()
	case "status":
		msg, err = m.Status()
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "service: "+msg)
	return nil
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
