package cli

// This file is `gatehouse dashboard`, and the dashboard the service serves
// (service/dashboard, built by service/assemble).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/gatehouse-dev/gatehouse/app/tray"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

var dashboardCmd = &command{name: "dashboard",
	summary: "open the local dashboard in a browser: executions, approvals, workspaces, policy",
	usage:   dashboardUsage,
	flags:   runDashboard,
}

const dashboardUsage = `usage: gatehouse dashboard [--no-open]

Asks the running service for a one-time login code and opens the
dashboard it serves on 127.0.0.1, signed in: the browser's opener
(xdg-open, open on macOS) is handed a sign-in page the service wrote in a
directory only you can enter, never the code, which an argument list would
show to every local user. It prints the sign-in address, the code and the
page: where the browser cannot open the page (a snap or flatpak browser),
paste the code into the form at the address. --no-open, or no opener,
only prints. The code works once, for five minutes (docs/dashboard.md).`

func runDashboard(fl *flag.FlagSet) runFunc {
	noOpen := fl.Bool("no-open", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("dashboard: unexpected argument %q", args[0])
		}
		c, err := serviceClient(env)
		if err != nil {
			return err
		}
		l, err := c.DashboardLogin(ctx)
		switch {
		case errors.Is(err, localapi.ErrNotRunning):
			return withHint(err, "the service serves the dashboard; "+notRunningHint)
		case err != nil:
			return err
		}
		fmt.Fprintf(env.Stdout, "dashboard:    %s\nlogin code:   %s\n", l.URL, l.Code)
		if l.LaunchFile != "" {
			fmt.Fprintf(env.Stdout, "sign-in page: %s\n", l.LaunchFile)
		}
		if *noOpen {
			return nil
		}
		if l.LaunchFile == "" {
			fmt.Fprintln(env.Stderr, "gatehouse: no browser opened (the service wrote no sign-in page); paste the code at the address above")
			return nil
		}
		if err := openPage(env, l.LaunchFile); err != nil {
			fmt.Fprintf(env.Stderr, "gatehouse: no browser opened (%v); paste the code at the address above\n", err)
		}
		return nil
	}
}

// openPage opens the file page in the desktop's browser: xdg-open (open
// on macOS), as found in the PATH of env. Its argument list holds the
// page's path and nothing else.
func openPage(env *Env, page string) error {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		return tray.Open(page)
	}
	for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			cmd := exec.Command(p, page)
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("running %s: %w", p, err)
			}
			go cmd.Wait()
			return nil
		}
	}
	return fmt.Errorf("%s not found in PATH", name)
}
