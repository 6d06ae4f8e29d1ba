package audit

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

// Row kinds.
const (
	KindEvent      = "event"
	KindCheckpoint = "checkpoint"
)

// genesis is the "previous HMAC" of the first row ever written.
var genesis = make([]byte, sha256.Size)

// row is one events row as stored, every column of it.
type row struct {
	seq           int64
	kind          string
	id            string
	parentID      string
	timeNS        int64
	agent         string
	surface       string
	decision      string
	status        string
	sandboxMode   string
	exitCode      sql.NullInt64
	durationMS    int64
	command       string
	reason        string
	sandboxReason string
	event         string
	stdout        []byte // nil: not kept
	stderr        []byte
	prevHMAC      []byte
	hmac          []byte
}

// mac computes a row's HMAC: every column but seq and hmac, each
// length-prefixed, then the previous row's HMAC. seq is left out so that a
// renumbered or moved row is reported by the chain's links, which say where
// it belongs.
func mac(key []byte, r *row) []byte {
	h := hmac.New(sha256.New, key)
	var n [8]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	str := func(s string) { put([]byte(s)) }
	num := func(i int64) {
		binary.BigEndian.PutUint64(n[:], uint64(i))
		h.Write(n[:])
	}
	opt := func(b []byte) {
		if b == nil {
			h.Write([]byte{0})
			return
		}
		h.Write([]byte{1})
		put(b)
	}
	h.Write([]byte("gatehouse-audit-v1\x00"))
	str(r.kind)
	str(r.id)
	str(r.parentID)
	num(r.timeNS)
	str(r.agent)
	str(r.surface)
	str(r.decision)
	str(r.status)
	str(r.sandboxMode)
	if r.exitCode.Valid {
		h.Write([]byte{1})
		num(r.exitCode.Int64)
	} else {
		h.Write([]byte{0})
	}
	num(r.durationMS)
	str(r.command)
	str(r.reason)
	str(r.sandboxReason)
	str(r.event)
	opt(r.stdout)
	opt(r.stderr)
	put(r.prevHMAC)
	return h.Sum(nil)
}

// headMAC authenticates the chain head.
func headMAC(key []byte, seq int64, last []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("gatehouse-audit-head-v1\x00"))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(seq))
	h.Write(n[:])
	h.Write(last)
	return h.Sum(nil)
}

// keyID names a key without revealing it, so that a database signed with
// another key is told apart from a tampered one.
func keyID(key []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("gatehouse-audit-key-id"))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// A KeyError says the chain's key cannot be used; nothing was written.
type KeyError struct {
	Err  error
	Hint string
}

func (e *KeyError) Error() string { return "audit key: " + e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// errNoTrail: nothing was ever appended, so there is no key yet.
var errNoTrail = errors.New("no events recorded yet")

// trailID returns the trail's id (meta "trail_id"), "" before the first
// append.
func trailID(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'trail_id'").Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// KeyName returns the keychain item holding this trail's HMAC key
// (KeyPrefix and the trail's id); "" before the first append.
func (s *Store) KeyName(ctx context.Context) (string, error) {
	id, err := trailID(ctx, s.r)
	if id == "" || err != nil {
		return "", err
	}
	return KeyPrefix + id, nil
}

// Key sources, recorded in the trail's meta as key_source.
const (
	KeySourceKeychain = "keychain"
	KeySourceFile     = "file"
)

// KeyFilePrefix begins the name of a key file in Options.KeyDir; the rest
// is the trail's id, as in the keychain item's name.
const KeyFilePrefix = "audit-hmac-key-"

// KeySource says where this trail's HMAC key is kept: KeySourceKeychain
// (location is the keychain item's name) or KeySourceFile (location is
// the file); "" before the first append. Trails begun before the source
// was recorded keep theirs in the keychain.
func (s *Store) KeySource(ctx context.Context) (source, location string, err error) {
	id, err := trailID(ctx, s.r)
	if id == "" || err != nil {
		return "", "", err
	}
	src, err := metaValue(ctx, s.r, "key_source")
	if err != nil {
		return "", "", err
	}
	if src == KeySourceFile {
		return KeySourceFile, s.keyFile(id), nil
	}
	return KeySourceKeychain, KeyPrefix + id, nil
}

func (s *Store) keyFile(id string) string {
	return filepath.Join(s.opts.KeyDir, KeyFilePrefix+id)
}

func metaValue(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, key string) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// LoadKey reads the trail's HMAC key ahead of the first append, which
// then does not wait for the keychain or the key file. It creates none: a
// trail that has no key yet gets one at its first append. An error is
// not kept: the first append tries again and returns its own.
func (s *Store) LoadKey(ctx context.Context) {
	s.loadKey(ctx, false)
}

// loadKey returns the HMAC key, creating it (and the trail's id) on first
// use when create is set. Creation happens inside the database's write
// lock, so that two processes starting at once agree on one key; each
// trail has a key of its own, so two databases never share one.
func (s *Store) loadKey(ctx context.Context, create bool) ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	// The key is read through the writer's connection, which every open
	// store has (Open prepares the append statements on it): a process
	// that only appends (an in-process gatehouse exec) then never opens a
	// reader connection, which would parse the schema a second time.
	id, err := trailID(ctx, s.w)
	if err != nil {
		return nil, err
	}
	var key []byte
	switch {
	case id != "":
		key, err = s.readKey(ctx, id)
	case create:
		key, err = s.createKey(ctx)
	default:
		err = errNoTrail
	}
	if err != nil {
		return nil, err
	}
	if err := s.checkKeyID(ctx, key); err != nil {
		return nil, err
	}
	s.key = key
	return key, nil
}

// readKey reads the key of trail id from where its meta says it is.
func (s *Store) readKey(ctx context.Context, id string) ([]byte, error) {
	src, err := metaValue(ctx, s.w, "key_source")
	if err != nil {
		return nil, err
	}
	if src == KeySourceFile {
		return s.readKeyFile(ctx, id)
	}
	name := KeyPrefix + id
	v, err := s.opts.Keys.Get(name)
	if errors.Is(err, keyring.ErrNotFound) {
		var rows int64
		s.r.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&rows)
		return nil, &KeyError{
			Err:  fmt.Errorf("the keychain has no %q, the key of the %d rows in %s", name, rows, s.opts.Path),
			Hint: "restore the key to the keychain, or move " + s.opts.Path + " aside to start a new trail",
		}
	}
	if err != nil {
		return nil, &KeyError{Err: fmt.Errorf("the trail's key is in the keychain: %w", err), Hint: keyring.Hint(err)}
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) != 32 {
		return nil, &KeyError{Err: fmt.Errorf("the keychain item %q is not a 32-byte hex key", name)}
	}
	return key, nil
}

// readKeyFile reads a key file, narrowing its mode when it is wider than
// 0600.
func (s *Store) readKeyFile(ctx context.Context, id string) ([]byte, error) {
	path := s.keyFile(id)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		var rows int64
		s.r.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&rows)
		return nil, &KeyError{
			Err:  fmt.Errorf("the key file %s, the key of the %d rows in %s, is missing", path, rows, s.opts.Path),
			Hint: "restore the key file, or move " + s.opts.Path + " aside to start a new trail",
		}
	}
	if err != nil {
		return nil, &KeyError{Err: fmt.Errorf("reading the key file: %w", err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return nil, &KeyError{Err: fmt.Errorf("narrowing the key file's mode: %w", err)}
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return nil, &KeyError{Err: fmt.Errorf("reading the key file: %w", err)}
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != 32 {
		return nil, &KeyError{Err: fmt.Errorf("the key file %s is not a 32-byte hex key", path)}
	}
	return key, nil
}

// writeKeyFile creates the key file of trail id, 0600; it never replaces
// one.
func (s *Store) writeKeyFile(id string, key []byte) error {
	if err := os.MkdirAll(s.opts.KeyDir, 0o700); err != nil {
		return err
	}
	path := s.keyFile(id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

func (s *Store) createKey(ctx context.Context) ([]byte, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// Another process may have created it while this one waited.
	id, err := trailID(ctx, tx)
	if err != nil {
		return nil, err
	}
	if id != "" {
		tx.Rollback()
		return s.readKey(ctx, id)
	}
	var rows int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&rows); err != nil {
		return nil, err
	}
	if rows > 0 {
		return nil, &KeyError{
			Err:  fmt.Errorf("%s holds %d rows but no trail id: its meta table was edited", s.opts.Path, rows),
			Hint: "move " + s.opts.Path + " aside to start a new trail",
		}
	}
	id = randomID()
	key := make([]byte, 32)
	rand.Read(key)
	// The keychain where there is one; else a key file in the state
	// directory, so that a headless machine keeps a trail too.
	source := KeySourceKeychain
	if err := s.opts.Keys.Set(KeyPrefix+id, hex.EncodeToString(key)); err != nil {
		if !errors.Is(err, keyring.ErrUnavailable) {
			return nil, &KeyError{Err: err, Hint: keyring.Hint(err)}
		}
		if ferr := s.writeKeyFile(id, key); ferr != nil {
			return nil, &KeyError{Err: fmt.Errorf("%w, and the key file could not be written: %w", err, ferr), Hint: keyring.Hint(err)}
		}
		source = KeySourceFile
		s.opts.Logger.Info("audit: no keychain; the trail's key is in a file", "file", s.keyFile(id), "cause", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('trail_id', ?), ('key_id', ?), ('key_source', ?)",
		id, keyID(key), source); err != nil {
		return nil, err
	}
	return key, tx.Commit()
}

// checkKeyID refuses a key other than the one the database was signed
// with.
func (s *Store) checkKeyID(ctx context.Context, key []byte) error {
	var id string
	err := s.w.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'key_id'").Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return &KeyError{Err: fmt.Errorf("%s has no key id: its meta table was edited", s.opts.Path)}
	}
	if err != nil {
		return err
	}
	if id != keyID(key) {
		name, _ := s.KeyName(ctx)
		return &KeyError{
			Err:  fmt.Errorf("the keychain's %q (id %s) is not the key %s was signed with (id %s)", name, keyID(key), s.opts.Path, id),
			Hint: "restore the original key to the keychain, or move " + s.opts.Path + " aside to start a new trail",
		}
	}
	return nil
}

// blob scans a BLOB column keeping NULL (nil) apart from an empty value
// (non-nil, zero length): the driver hands both over as nil.
type blob struct{ b *[]byte }

func (x blob) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*x.b = nil
	case []byte:
		*x.b = append([]byte{}, v...)
	case string:
		*x.b = []byte(v)
	default:
		return fmt.Errorf("blob column holds %T", src)
	}
	return nil
}
