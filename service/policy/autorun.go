package policy

// This file holds the one list of places that run what is written there
// later, on the host, outside any sandbox: the session's autostart, the
// directories on $PATH, the shell's and the session manager's start-up
// files, the service managers' unit directories, cron and launchd. A
// workspace root is writable by every command, so none of them may be
// one, lie in one or hold one (RootProblem): not as policy.workspace_roots,
// not trusted (service/trust), not by any approval. docs/workspaces.md
// prints the same list (service/trust/docs_test.go keeps them equal).

import (
	"fmt"
	"path"
	"slices"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// AutorunHome are the home-relative places that run what is written there.
var AutorunHome = []string{
	// The desktop session: autostart entries, the environment it and the
	// user's services start with, the user's service manager.
	".config/autostart", ".config/autostart-scripts", ".config/environment.d",
	".config/systemd", ".local/share/systemd", ".config/containers/systemd",
	".local/share/dbus-1", ".config/plasma-workspace", ".config/upstart",
	".kde/Autostart", ".local/share/gnome-shell/extensions",
	// Directories on $PATH, and the per-user Python site (its .pth files
	// run at every interpreter start).
	".local/bin", "bin", ".local/lib",
	// Shell start-up directories (the files themselves, ~/.bashrc and the
	// like, lie in the home directory, which is never a workspace).
	".bashrc.d", ".config/bash", ".config/zsh", ".zsh", ".oh-my-zsh",
	".config/fish", ".config/nushell", ".config/powershell",
	// Git's global configuration: hooks, fsmonitor and filters run from
	// it in every repository.
	".config/git",
	// Gatehouse's own caches: every agent's tool caches.
	".cache/gatehouse", "Library/Caches/Gatehouse",
	// macOS: launchd agents, login items, cron.
	"Library/LaunchAgents", "Library/LaunchDaemons", "Library/StartupItems",
	"Library/Application Support/com.apple.backgroundtaskmanagementagent",
}

// AutorunSystem are the absolute places that run what is written there.
var AutorunSystem = []string{
	"/var/spool/cron", "/var/at", "/private/var/at",
	"/Library/LaunchAgents", "/Library/LaunchDaemons", "/Library/StartupItems",
}

// AutorunFor returns the autorun places of the user whose home is home,
// resolved (Resolve): the home-relative ones under home, then the
// system's.
func AutorunFor(home string) []string { return autorunFor(newResolver(), home) }

// autorunFor is AutorunFor through c.
func autorunFor(c resolver, home string) []string {
	var out []string
	if path.IsAbs(home) {
		for _, p := range AutorunHome {
			out = append(out, c.resolve(path.Join(home, p)))
		}
	}
	for _, p := range AutorunSystem {
		out = append(out, c.resolve(p))
	}
	return out
}

// AutorunProblem says why the resolved root real may not be one because
// of a place of autorun (AutorunFor), as a phrase that follows "is", or
// returns "".
func AutorunProblem(real string, autorun []string) string {
	if i := slices.IndexFunc(autorun, func(a string) bool { return sandbox.Within(real, a) }); i >= 0 {
		if real == autorun[i] {
			return "a place whose files run later on the host, outside any sandbox"
		}
		return fmt.Sprintf("inside %q, whose files run later on the host, outside any sandbox", autorun[i])
	}
	if i := slices.IndexFunc(autorun, func(a string) bool { return sandbox.Within(a, real) }); i >= 0 {
		return fmt.Sprintf("above %q, whose files run later on the host, outside any sandbox", autorun[i])
	}
	return ""
}
