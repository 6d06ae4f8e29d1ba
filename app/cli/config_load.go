package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// homeDir returns the user's home directory from $HOME, falling back to the
// password database.
func homeDir(env *Env) (string, error) {
	if h := env.Getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory; set HOME")
	}
	return h, nil
}

// loadOptions returns where the configuration comes from. $GATEHOUSE_CONFIG
// (or configFlag) replaces the user file; the managed file is fixed.
func loadOptions(env *Env, configFlag string) (policy.LoadOptions, error) {
	home, err := homeDir(env)
	if err != nil {
		return policy.LoadOptions{}, err
	}
	opts := policy.DefaultLoadOptions(runtime.GOOS, home, env.Getenv)
	if f := env.Getenv("GATEHOUSE_CONFIG"); f != "" {
		opts.UserFile, opts.ExplicitUser = f, true
	}
	if configFlag != "" {
		opts.UserFile, opts.ExplicitUser = configFlag, true
	}
	return opts, nil
}

// loadConfig loads and validates the effective configuration.
func loadConfig(env *Env, configFlag string) (*policy.Loaded, policy.LoadOptions, error) {
	opts, err := loadOptions(env, configFlag)
	if err != nil {
		return nil, opts, err
	}
	l, err := policy.Load(opts)
	if err != nil {
		return nil, opts, withHint(fmt.Errorf("invalid configuration:\n%w", err),
			"fix the fields named above; 'gatehouse config check' validates without running anything")
	}
	return l, opts, nil
}

// privatePaths are Gatehouse's own files, hidden from every command.
func privatePaths(env *Env, opts policy.LoadOptions) []string {
	home := opts.Home
	paths := []string{
		policy.ConfigDir(runtime.GOOS, home, env.Getenv("XDG_CONFIG_HOME")),
		policy.StateDir(runtime.GOOS, home, env.Getenv("XDG_STATE_HOME")),
	}
	// The user file is listed unless a directory above already hides it
	// (bubblewrap cannot bind over a file inside a masked directory).
	f := opts.UserFile
	if abs, err := filepath.Abs(f); f != "" && err == nil {
		f = abs
	}
	if f != "" && !strings.HasPrefix(f, paths[0]+string(filepath.Separator)) && !strings.HasPrefix(f, paths[1]+string(filepath.Separator)) {
		paths = append(paths, f)
	}
	return paths
}
