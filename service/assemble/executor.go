package assemble

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/notify"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// Executor builds the pipeline for cfg over the user's files: the service
// (one per configuration it loads) and gatehouse exec, explain and mcp
// in-process all build theirs here, so every face runs the same pipeline.
// logger may be nil. oneShot says the process exits after its one command
// (pipeline.Options.OneShot). The executor has no observers yet: give it
// OpenObservers' (SetObservers) to record and notify.
func Executor(p Paths, cfg *policy.Config, logger *slog.Logger, oneShot bool) (*pipeline.Executor, error) {
	if !filepath.IsAbs(cfg.Exec.Shell) {
		return nil, fmt.Errorf("exec.shell %q is not absolute", cfg.Exec.Shell)
	}
	return pipeline.New(cfg, pipeline.Options{
		Home:         p.Home,
		InitPath:     p.InitPath,
		PrivatePaths: p.Private,
		HostPath:     p.HostPath,
		Logger:       logger,
		// Credentials: the keychain, and where files are made.
		Keyring:       p.Keys,
		CredentialDir: p.CredentialDir,
		ToolCacheRoot: p.ToolCacheRoot,
		ToolHost:      p.ToolHost(),
		// The workspaces the user trusted.
		Trusted:      TrustStore(p),
		TrustPrivate: p.TrustPrivate,
		OneShot:      oneShot,
	})
}

// TrustStore opens the user's trusted-workspaces file.
func TrustStore(p Paths) *trust.Store { return trust.Open(p.Trusted) }

// Observers are the audit trail and the notifier of an executor
// (pipeline.Executor.SetObservers(o, o.Notifier())). They never stop a
// command from running by failing themselves: the trail opens while the
// first command is decided, a trail that cannot be opened is tried again
// at a later write, and what failed is kept for Problem (under
// policy.audit_required the pipeline denies what it cannot record). It is
// safe for concurrent use; Close it when done.
type Observers struct {
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

// OpenObservers opens the user's audit trail and a notifier for cfg;
// service says they are the user service's (audit.Options.Service).
// logger receives the notifier's warnings and may be nil. It never fails:
// see Observers.
func OpenObservers(ctx context.Context, p Paths, cfg *policy.Config, service bool, logger *slog.Logger) *Observers {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	o := &Observers{ready: make(chan struct{})}
	o.aopts = audit.Options{
		Path:            p.Audit,
		Keys:            p.Keys,
		RetentionDays:   cfg.Exec.Audit.RetentionDays,
		RetentionEvents: cfg.Exec.Audit.RetentionEvents,
		Service:         service,
	}
	go func() {
		defer close(o.ready)
		s, err := audit.Open(ctx, o.aopts)
		if s != nil && !service {
			// The key too, while the command is being decided: the
			// start's record waits for neither. (The service reads it
			// at its first record.)
			s.LoadKey(ctx)
		}
		o.mu.Lock()
		o.store, o.openErr, o.opened = s, err, time.Now()
		o.mu.Unlock()
	}()
	o.notifier = notify.New(notify.Options{
		SandboxDegraded: cfg.Exec.Notify.SandboxDegraded,
		OutputRedacted:  cfg.Exec.Notify.OutputRedacted,
		Logger:          logger,
		Ledger:          lazyLedger{o: o, mem: notify.NewMemoryLedger()},
	})
	return o
}

// Notifier is the notifier to give the executor with these observers.
func (o *Observers) Notifier() *notify.Notifier { return o.notifier }

// trail returns the open trail, opening it again when the last attempt
// failed long enough ago.
func (o *Observers) trail(ctx context.Context) (*audit.Store, error) {
	<-o.ready
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.store == nil && time.Since(o.opened) >= reopenAfter {
		o.opened = time.Now()
		o.store, o.openErr = audit.Open(ctx, o.aopts)
	}
	return o.store, o.openErr
}

// lazyLedger is the audit trail's notification ledger once the trail is
// open, and a ledger in memory (dedupe within this process only) when it
// could not be opened.
type lazyLedger struct {
	o   *Observers
	mem *notify.MemoryLedger
}

func (l lazyLedger) Claim(key string, now time.Time, window time.Duration) (bool, error) {
	s, _ := l.o.trail(context.Background())
	if s == nil {
		return l.mem.Claim(key, now, window)
	}
	return s.Ledger().Claim(key, now, window)
}

// Append implements pipeline.AuditLog, remembering a failure for Problem.
func (o *Observers) Append(ctx context.Context, rec audit.Record) error {
	return o.write(ctx, rec, (*audit.Store).Append)
}

// Started implements pipeline.AuditLog, remembering a failure for Problem.
func (o *Observers) Started(ctx context.Context, rec audit.Record) error {
	return o.write(ctx, rec, (*audit.Store).Started)
}

func (o *Observers) write(ctx context.Context, rec audit.Record, f func(*audit.Store, context.Context, audit.Record) error) error {
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

// Problem returns why an event was not recorded, and a remedy; "" when
// all were.
func (o *Observers) Problem() (msg, hint string) {
	o.mu.Lock()
	err := o.appendErr
	o.mu.Unlock()
	if err == nil {
		return "", ""
	}
	hint = keyring.Hint(err)
	var ke *audit.KeyError
	if errors.As(err, &ke) && ke.Hint != "" {
		hint = ke.Hint
	}
	return "this execution is not on the audit record: " + err.Error(), hint
}

// Close closes the trail once its first open has ended.
func (o *Observers) Close() {
	<-o.ready
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.store != nil {
		o.store.Close()
	}
}
