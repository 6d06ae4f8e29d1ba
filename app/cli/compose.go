package cli

// The composition root: where the CLI finds the user's files
// (service/assemble's Paths) and the service's client. Every subcommand
// that needs one of these takes it from here; the executor and its
// observers are built by service/assemble (the service) and
// service/shellclient (exec, explain and mcp, shell.go).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/assemble"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/socket"
)

func osGetenv(k string) string { return os.Getenv(k) }

// homeDir returns the user's home directory from $HOME, falling back to the
// password database.
func homeDir(env *Env) (string, error) { return decide.Home(env.Getenv) }

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

// userPaths are the user's files and keychain as the service and the
// in-process executors see them (service/assemble), for the configuration
// opts loads; the init binary is execInitPath.
func userPaths(env *Env, opts policy.LoadOptions) assemble.Paths {
	p := assemble.Locate(opts, env.Getenv)
	p.InitPath = execInitPath
	return p
}

// homePaths are userPaths for what needs only the home directory.
func homePaths(env *Env, home string) assemble.Paths {
	return userPaths(env, policy.LoadOptions{Home: home})
}

// privatePaths are Gatehouse's own files, hidden from every command.
func privatePaths(env *Env, opts policy.LoadOptions) []string { return userPaths(env, opts).Private }

// paths are where the service and its clients meet.
type paths struct {
	state  string // the state directory
	socket string // the admission API's socket
	relay  string // the relays' FIFO directory
}

func servicePaths(env *Env, home string) paths {
	p := socket.Locate(runtime.GOOS, home, env.Getenv)
	return paths{state: p.State, socket: p.Socket, relay: p.Relay}
}

// serviceClient returns a client of the user's service.
func serviceClient(env *Env) (*localapi.Client, error) {
	home, err := homeDir(env)
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(servicePaths(env, home).socket), nil
}

// envKeyringService names the keychain service Gatehouse's items live
// under; only tests set it (assemble.EnvKeyringService).
const envKeyringService = assemble.EnvKeyringService

// auditPath returns the audit database of this user.
func auditPath(env *Env, home string) string { return homePaths(env, home).Audit }

// keyStore returns the OS keychain.
func keyStore(env *Env) *keyring.OS {
	return keyring.NewOS(env.Getenv(envKeyringService))
}

// openAudit opens the user's audit database; it returns nil (and no
// error) when none has been written yet.
func openAudit(ctx context.Context, env *Env) (*audit.Store, error) {
	home, err := homeDir(env)
	if err != nil {
		return nil, err
	}
	path := auditPath(env, home)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return audit.Open(ctx, audit.Options{Path: path, Keys: keyStore(env)})
}

// signalContext is ctx ended by SIGINT or SIGTERM.
func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// toolCacheRoot is the directory of the agents' tool caches
// (service/toolcache).
func toolCacheRoot(env *Env, home string) string { return homePaths(env, home).ToolCacheRoot }
