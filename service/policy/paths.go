package policy

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/dirs"
)

// The functions in this file are pure: the caller passes the OS name and the
// environment (home directory, XDG variables), so every platform's answer is
// testable on any platform. The directories themselves are service/dirs',
// which the thin clients use without this package.

// ConfigDir returns the directory of the user's configuration file:
// $XDG_CONFIG_HOME/gatehouse (default ~/.config/gatehouse), or on darwin
// ~/Library/Application Support/Gatehouse. A relative xdgConfigHome is
// ignored, as the XDG Base Directory specification requires.
func ConfigDir(goos, home, xdgConfigHome string) string {
	return dirs.Config(goos, home, xdgConfigHome)
}

// UserConfigPath returns the user's configuration file: config.yaml in
// ConfigDir.
func UserConfigPath(goos, home, xdgConfigHome string) string {
	return filepath.Join(ConfigDir(goos, home, xdgConfigHome), "config.yaml")
}

// ManagedConfigPath returns the file IT manages, which the user file may
// only narrow: /etc/gatehouse/managed.yaml, or on darwin
// /Library/Application Support/Gatehouse/managed.yaml.
func ManagedConfigPath(goos string) string {
	if goos == "darwin" {
		return "/Library/Application Support/Gatehouse/managed.yaml"
	}
	return "/etc/gatehouse/managed.yaml"
}

// StateDir returns the directory for Gatehouse's state (audit database,
// socket metadata): $XDG_STATE_HOME/gatehouse (default
// ~/.local/state/gatehouse), or on darwin ~/Library/Application
// Support/Gatehouse. A relative xdgStateHome is ignored.
func StateDir(goos, home, xdgStateHome string) string {
	return dirs.State(goos, home, xdgStateHome)
}

// CacheDir returns the directory of Gatehouse's caches: the agents' tool
// caches are in its "sandbox" directory. $XDG_CACHE_HOME/gatehouse
// (default ~/.cache/gatehouse), or on darwin ~/Library/Caches/Gatehouse.
// A relative xdgCacheHome is ignored.
func CacheDir(goos, home, xdgCacheHome string) string {
	return dirs.Cache(goos, home, xdgCacheHome)
}

// DefaultLoadOptions returns the options that load the standard files for
// goos: the managed file, then the user file (ExplicitUser false, so either
// may be missing). getenv reads XDG_CONFIG_HOME.
func DefaultLoadOptions(goos, home string, getenv func(string) string) LoadOptions {
	return LoadOptions{
		UserFile:    UserConfigPath(goos, home, getenv("XDG_CONFIG_HOME")),
		ManagedFile: ManagedConfigPath(goos),
		Home:        home,
		// The rules approvals saved, in the state directory.
		SavedRulesFile: path.Join(StateDir(goos, home, getenv("XDG_STATE_HOME")), SavedRulesName),
	}
}

// expandHome replaces a leading "~" or "~/" in p with home. Other forms
// ("~user", "a/~") are left alone, as is p when home is empty. Paths inside
// the configuration are slash-separated: they name places on the Linux or
// macOS machine commands run on.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return path.Join(home, rest)
	}
	return p
}
