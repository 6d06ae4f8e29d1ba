// Package audit is Gatehouse's local audit trail: every decision and every
// execution event, in one SQLite database (modernc.org/sqlite, WAL mode)
// under the user's state directory, chained by HMAC so that a changed,
// removed, inserted or reordered row is found by Verify.
//
// # The chain
//
// Each row carries an HMAC-SHA256, keyed by a 32-byte key kept in the OS
// keychain (or, where there is none, in a 0600 file in the state
// directory; the trail's meta records which), over every column of the row and the previous row's HMAC. The
// first row follows 32 zero bytes. A separate chain head records the last
// row's sequence number and HMAC (itself authenticated), so removing the
// newest rows is found too. Retention removes the oldest rows and appends a
// checkpoint row that names the last removed row's HMAC: the chain then
// starts from there.
//
// # Concurrency
//
// A Store is safe for concurrent use, and several processes may append to
// one database at once: each append is one BEGIN IMMEDIATE transaction that
// reads the head, inserts the row and moves the head, so appends are
// serialised by SQLite's write lock (waiting up to the busy timeout). A
// process killed mid-append leaves the database as of its last commit.
package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

// FileName is the database's name inside the state directory.
const FileName = "audit.db"

// KeyPrefix begins the name of the keychain item holding a trail's HMAC
// key; the rest is the trail's id, made with the key on the first append.
const KeyPrefix = "audit/hmac-key/"

// Options configure a Store.
type Options struct {
	// Path is the database file; its directory is created 0700 when
	// missing, the file 0600.
	Path string
	// Keys holds the trail's HMAC key (see KeyPrefix). Reading the trail
	// needs no key; appending and verifying do. Must be non-nil.
	Keys keyring.Store
	// KeyDir is where the key is kept, in a 0600 file, when Keys is
	// unavailable (no keychain: a headless machine, an SSH session, CI);
	// "" means the database's directory. It must be hidden from commands
	// (the state directory is in the sandbox's deny-read set).
	KeyDir string
	// Service says the store belongs to the user service: its started
	// rows are closed by Reconcile when the service starts again.
	Service bool
	// RetentionDays and RetentionEvents bound what is kept: rows older
	// than RetentionDays, or beyond the newest RetentionEvents, are pruned.
	// Zero means no bound.
	RetentionDays   int
	RetentionEvents int
	// PruneEvery is how many appends pass between retention checks
	// (default 256). Prune can also be called directly.
	PruneEvery int
	// BusyTimeout is how long an append waits for another writer (default
	// 10s).
	BusyTimeout time.Duration
	// Now returns the current time; tests replace it.
	Now    func() time.Time
	Logger *slog.Logger
}

// Store is an open audit database. It is safe for concurrent use by
// several goroutines and processes.
type Store struct {
	opts Options
	w    *sql.DB // writer: one connection, BEGIN IMMEDIATE
	r    *sql.DB // readers

	stmts statements

	keyMu sync.Mutex
	key   []byte
}

// Errors callers branch on.
var (
	// ErrNotFound: no event has that id (or id prefix).
	ErrNotFound = errors.New("no such event")
	// ErrAmbiguous: an id prefix matches more than one event.
	ErrAmbiguous = errors.New("id prefix matches more than one event")
)

// Open opens (creating when missing) the database at opts.Path and brings
// its schema up to date.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Keys == nil {
		return nil, errors.New("audit: no key store")
	}
	if opts.Path == "" {
		return nil, errors.New("audit: no database path")
	}
	if strings.ContainsAny(opts.Path, "?#") {
		return nil, fmt.Errorf("audit: database path %q contains '?' or '#'", opts.Path)
	}
	if opts.PruneEvery <= 0 {
		opts.PruneEvery = 256
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.KeyDir == "" {
		opts.KeyDir = filepath.Dir(opts.Path)
	}
	if err := prepareFile(opts.Path); err != nil {
		return nil, err
	}
	base := opts.Path + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)", opts.BusyTimeout.Milliseconds())
	w, err := sql.Open("sqlite", base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("opening the audit database: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("opening the audit database: %w", err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{opts: opts, w: w, r: r}
	// Two processes opening a new trail at once (the service and its
	// reconcile, a CLI beside the service) can see SQLITE_BUSY while the
	// other sets the journal mode, which the busy timeout does not cover:
	// try again until it has passed.
	deadline := opts.Now().Add(opts.BusyTimeout)
	for {
		err := s.migrate(ctx)
		if err == nil {
			break
		}
		if !busy(err) || opts.Now().After(deadline) || ctx.Err() != nil {
			s.Close()
			return nil, fmt.Errorf("opening the audit database %s: %w", opts.Path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("opening the audit database %s: %w", opts.Path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	for _, st := range []*sql.Stmt{s.stmts.head, s.stmts.insert, s.stmts.moveHead} {
		if st != nil {
			st.Close()
		}
	}
	return errors.Join(s.r.Close(), s.w.Close())
}

// Path returns the database file.
func (s *Store) Path() string { return s.opts.Path }

// prepareFile creates the directory (0700) and the file (0600), and
// narrows the file's mode when it is wider.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating the state directory: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit database: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return fmt.Errorf("narrowing the audit database's mode: %w", err)
		}
	}
	return nil
}

// migrations are the schema, one step per version; a database at
// user_version N has had steps [0, N) applied. Steps are never edited once
// released: a change is a new step.
var migrations = []string{
	// 1: events, the chain head, metadata, notification dedupe.
	`CREATE TABLE events (
		seq            INTEGER PRIMARY KEY,
		kind           TEXT NOT NULL,
		id             TEXT NOT NULL,
		parent_id      TEXT NOT NULL DEFAULT '',
		time_ns        INTEGER NOT NULL,
		agent          TEXT NOT NULL DEFAULT '',
		surface        TEXT NOT NULL DEFAULT '',
		decision       TEXT NOT NULL DEFAULT '',
		status         TEXT NOT NULL DEFAULT '',
		sandbox_mode   TEXT NOT NULL DEFAULT '',
		exit_code      INTEGER,
		duration_ms    INTEGER NOT NULL DEFAULT 0,
		command        TEXT NOT NULL DEFAULT '',
		reason         TEXT NOT NULL DEFAULT '',
		sandbox_reason TEXT NOT NULL DEFAULT '',
		event          TEXT NOT NULL,
		stdout         BLOB,
		stderr         BLOB,
		prev_hmac      BLOB NOT NULL,
		hmac           BLOB NOT NULL
	);
	CREATE UNIQUE INDEX events_id ON events(id);
	CREATE INDEX events_time ON events(time_ns);
	CREATE INDEX events_parent ON events(parent_id) WHERE parent_id != '';
	CREATE INDEX events_status ON events(status, time_ns);
	CREATE INDEX events_mode ON events(sandbox_mode, time_ns);
	CREATE INDEX events_agent ON events(agent, time_ns);
	CREATE TABLE chain_head (
		one  INTEGER PRIMARY KEY CHECK (one = 1),
		seq  INTEGER NOT NULL,
		hmac BLOB NOT NULL,
		mac  BLOB NOT NULL
	);
	CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
	CREATE TABLE notices (key TEXT PRIMARY KEY, sent_ns INTEGER NOT NULL);`,
	// 2: where each export of the trail has got to (export.go).
	`CREATE TABLE export_cursors (
		name       TEXT PRIMARY KEY,
		seq        INTEGER NOT NULL,
		updated_ns INTEGER NOT NULL
	);`,
}

// SchemaVersion is the version this build writes.
var SchemaVersion = len(migrations)

func (s *Store) migrate(ctx context.Context) error {
	var v int
	// On the writer's connection, which Open uses anyway (see loadKey).
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v == len(migrations) {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another process may have migrated while this one waited for the lock.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this gatehouse knows (%d); upgrade gatehouse", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("schema step %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}

// busy reports whether err is SQLite's SQLITE_BUSY (5) or SQLITE_LOCKED (6).
func busy(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		c := coded.Code() & 0xff // extended codes keep the primary in the low byte
		return c == 5 || c == 6
	}
	return false
}
