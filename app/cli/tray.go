package cli

import (
	"context"
	"flag"
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/app/tray"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

var trayCmd = &command{name: "tray",
	summary: "show the menu-bar app: the sandbox at a glance, approvals, recent executions",
	usage:   trayUsage,
	flags:   runTray,
}

const trayUsage = `usage: gatehouse tray [--theme auto|light|dark]

Shows Gatehouse in the menu bar (a StatusNotifierItem on Linux desktops):
an icon for the sandbox commands get now, the approvals waiting, with their
answers, the recent executions, the workspaces, and doctor. It follows the
running service and reconnects when it restarts. --theme picks the icons
for a light or a dark panel; auto asks the desktop (docs/tray.md).
'gatehouse install' starts it at login.`

func runTray(fl *flag.FlagSet) runFunc {
	theme := fl.String("theme", "auto", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("tray: unexpected argument %q", args[0])
		}
		switch *theme {
		case "auto":
			*theme = ""
		case "light", "dark":
		default:
			return usagef("tray: --theme %q; want auto, light or dark", *theme)
		}
		home, err := homeDir(env)
		if err != nil {
			return err
		}
		exe, err := selfPath()
		if err != nil {
			return err
		}
		p := servicePaths(env, home)
		ctx, stop := signalContext(ctx)
		defer stop()
		return tray.Run(ctx, tray.Options{
			Client:    localapi.NewClient(p.socket),
			Exe:       exe,
			ReportDir: p.state,
			Theme:     *theme,
			Logger:    slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
	}
}
