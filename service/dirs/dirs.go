// Package dirs names the user's Gatehouse directories: configuration,
// state and caches. It is pure (the caller passes the OS name and the
// environment, so every platform's answer is testable on any platform) and
// imports only the standard library, so that the thin clients (the hook,
// the relay) find the service without linking the configuration model.
package dirs

import "path/filepath"

// Config returns the directory of the user's configuration file:
// $XDG_CONFIG_HOME/gatehouse (default ~/.config/gatehouse), or on darwin
// ~/Library/Application Support/Gatehouse. A relative xdgConfigHome is
// ignored, as the XDG Base Directory specification requires.
func Config(goos, home, xdgConfigHome string) string {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Gatehouse")
	}
	return filepath.Join(xdgDir(xdgConfigHome, home, ".config"), "gatehouse")
}

// State returns the directory for Gatehouse's state (audit database,
// socket metadata): $XDG_STATE_HOME/gatehouse (default
// ~/.local/state/gatehouse), or on darwin ~/Library/Application
// Support/Gatehouse. A relative xdgStateHome is ignored.
func State(goos, home, xdgStateHome string) string {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Gatehouse")
	}
	return filepath.Join(xdgDir(xdgStateHome, home, filepath.Join(".local", "state")), "gatehouse")
}

// Cache returns the directory of Gatehouse's caches: the agents' tool
// caches are in its "sandbox" directory. $XDG_CACHE_HOME/gatehouse
// (default ~/.cache/gatehouse), or on darwin ~/Library/Caches/Gatehouse.
// A relative xdgCacheHome is ignored.
func Cache(goos, home, xdgCacheHome string) string {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Caches", "Gatehouse")
	}
	return filepath.Join(xdgDir(xdgCacheHome, home, ".cache"), "gatehouse")
}

// xdgDir returns the XDG variable's value when it is an absolute path, else
// home joined with fallback.
func xdgDir(xdg, home, fallback string) string {
	if xdg != "" && filepath.IsAbs(xdg) {
		return xdg
	}
	return filepath.Join(home, fallback)
}
