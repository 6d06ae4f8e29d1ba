package cli

// The composition root: where the CLI finds the user's files, and how it
// builds the executor, its observers and the service's client from them.
// Every subcommand that needs one of these takes it from here.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/notify"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/socket"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
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

// newExecutor builds the pipeline for cfg: gatehouse exec in-process and
// the service use this one constructor, so both run the same pipeline.
// logger may be nil. oneShot says this process exits after its one
// command (pipeline.Options.OneShot).
func newExecutor(env *Env, opts policy.LoadOptions, cfg *policy.Config, logger *slog.Logger, oneShot bool) (*pipeline.Executor, error) {
	if !filepath.IsAbs(cfg.Exec.Shell) {
		return nil, usagef("exec.shell %q is not absolute", cfg.Exec.Shell)
	}
	return pipeline.New(cfg, pipeline.Options{
		Home:         opts.Home,
		InitPath:     execInitPath,
		PrivatePaths: privatePaths(env, opts),
		HostPath:     env.Getenv("PATH"),
		Logger:       logger,
		// Credentials (cred.go): the keychain, and where files are made.
		Keyring:       keyStore(env),
		CredentialDir: broker.DefaultDir(env.Getenv("XDG_RUNTIME_DIR")),
		ToolCacheRoot: toolCacheRoot(env, opts.Home),
		ToolHost:      toolHost(env, opts.Home),
		// The workspaces the user trusted (workspace.go).
		Trusted:      workspaceStore(env, opts.Home),
		TrustPrivate: trustPrivate(env, opts),
		OneShot:      oneShot,
	})
}

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
// under. Only tests set it, so that they never touch the user's own items;
// it chooses another item name in the same OS keychain, nothing else.
const envKeyringService = "GATEHOUSE_KEYRING_SERVICE"

// auditPath returns the audit database of this user.
func auditPath(env *Env, home string) string {
	return filepath.Join(policy.StateDir(runtime.GOOS, home, env.Getenv("XDG_STATE_HOME")), audit.FileName)
}

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

// auditFilterFlags are the selection flags list and export share.

// execObservers are the audit trail and the notifier of an in-process
// execution. They never stop a command from running: what failed is
// reported after it (warn).
type execObservers struct {
	notifier *notify.Notifier
	// ready is closed once the first open of the trail has ended: it opens
	// (SQLite, and the key from the keychain) while the command runs.
	ready chan struct{}
	aopts audit.Options

	mu        sync.Mutex
	store     *audit.Store
	openErr   error
	opened    time.Time // of the last attempt
	appendErr error
}

// reopenAfter is how long a trail that could not be opened is left before
// the next write tries again (a long-lived service must not stay off the
// record because of one busy moment).
const reopenAfter = time.Second

// trail returns the open trail, opening it again when the last attempt
// failed long enough ago.
func (o *execObservers) trail(ctx context.Context) (*audit.Store, error) {
	<-o.ready
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.store == nil && time.Since(o.opened) >= reopenAfter {
		o.opened = time.Now()
		o.store, o.openErr = audit.Open(ctx, o.aopts)
	}
	return o.store, o.openErr
}

// openExecObservers opens the user's audit database and a notifier for cfg;
// service says they are the user service's. It never fails: a trail that
// cannot be opened is reported by warn (and, under policy.audit_required,
// denies every command).
func openExecObservers(ctx context.Context, env *Env, home string, cfg *policy.Config, service bool) *execObservers {
	o := &execObservers{ready: make(chan struct{})}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	aopts := audit.Options{
		Path:            auditPath(env, home),
		Keys:            keyStore(env),
		RetentionDays:   cfg.Exec.Audit.RetentionDays,
		RetentionEvents: cfg.Exec.Audit.RetentionEvents,
		Service:         service,
	}
	o.aopts = aopts
	go func() {
		defer close(o.ready)
		s, err := audit.Open(ctx, aopts)
		if s != nil && !service {
			// The key too, while the command is being decided: the
			// start's record waits for neither. (The service reads it
			// at its first record, as before.)
			s.LoadKey(ctx)
		}
		o.mu.Lock()
		o.store, o.openErr, o.opened = s, err, time.Now()
		o.mu.Unlock()
	}()
	nopts := notify.Options{
		SandboxDegraded: cfg.Exec.Notify.SandboxDegraded,
		OutputRedacted:  cfg.Exec.Notify.OutputRedacted,
		Logger:          logger,
		Ledger:          lazyLedger{o: o, mem: notify.NewMemoryLedger()},
	}
	o.notifier = notify.New(nopts)
	return o
}

// lazyLedger is the audit trail's notification ledger once the trail is
// open, and a ledger in memory (dedupe within this process only) when it
// could not be opened.
type lazyLedger struct {
	o   *execObservers
	mem *notify.MemoryLedger
}

func (l lazyLedger) Claim(key string, now time.Time, window time.Duration) (bool, error) {
	s, _ := l.o.trail(context.Background())
	if s == nil {
		return l.mem.Claim(key, now, window)
	}
	return s.Ledger().Claim(key, now, window)
}

// Append implements pipeline.AuditLog, remembering a failure for warn.
func (o *execObservers) Append(ctx context.Context, rec audit.Record) error {
	return o.write(ctx, rec, (*audit.Store).Append)
}

// Started implements pipeline.AuditLog, remembering a failure for warn.
func (o *execObservers) Started(ctx context.Context, rec audit.Record) error {
	return o.write(ctx, rec, (*audit.Store).Started)
}

func (o *execObservers) write(ctx context.Context, rec audit.Record, f func(*audit.Store, context.Context, audit.Record) error) error {
	st, err := o.trail(ctx)
	if st != nil {
		err = f(st, ctx, rec)
	}
	if err != nil {
		o.mu.Lock()
		o.appendErr = err
		o.mu.Unlock()
	}
	return err
}

// problem returns why an event was not recorded, and a hint; "" when all
// were.
func (o *execObservers) problem() (string, string) {
	o.mu.Lock()
	err := o.appendErr
	o.mu.Unlock()
	if err == nil {
		return "", ""
	}
	hint := keyring.Hint(err)
	var ke *audit.KeyError
	if errors.As(err, &ke) && ke.Hint != "" {
		hint = ke.Hint
	}
	return "this execution is not on the audit record: " + err.Error(), hint
}

// warn prints problem() to stderr.
func (o *execObservers) warn(env *Env) {
	msg, hint := o.problem()
	if msg == "" {
		return
	}
	fmt.Fprintf(env.Stderr, "gatehouse: warning: %s\n", msg)
	if hint != "" {
		fmt.Fprintf(env.Stderr, "gatehouse: hint: %s\n", hint)
	}
}

// annotate adds problem() to a --json answer as "audit_error".
func (o *execObservers) annotate(m map[string]any) map[string]any {
	if msg, hint := o.problem(); msg != "" {
		m["audit_error"] = map[string]string{"error": msg, "hint": hint}
	}
	return m
}

func (o *execObservers) Close() {
	<-o.ready
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.store != nil {
		o.store.Close()
	}
}

// signalContext is ctx ended by SIGINT or SIGTERM.
func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// toolCacheRoot is the directory of the agents' tool caches
// (service/toolcache).
func toolCacheRoot(env *Env, home string) string {
	return filepath.Join(policy.CacheDir(runtime.GOOS, home, env.Getenv("XDG_CACHE_HOME")), "sandbox")
}

// toolHost is what the tool caches take from the host's tools: Go's
// module cache and proxy as the go command would see them.
func toolHost(env *Env, home string) toolcache.Host {
	configDir := env.Getenv("XDG_CONFIG_HOME")
	switch {
	case runtime.GOOS == "darwin":
		configDir = filepath.Join(home, "Library", "Application Support")
	case configDir == "" || !filepath.IsAbs(configDir):
		configDir = filepath.Join(home, ".config")
	}
	mod, proxy := toolcache.HostGo(home, configDir, env.Getenv)
	return toolcache.Host{Home: home, GoModCache: mod, GoProxy: proxy}
}
