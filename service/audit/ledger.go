package audit

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Ledger remembers when each notification was last sent, in the audit
// database, so that the once-per-hour rule holds across processes. It is
// not part of the chain.
type Ledger struct{ s *Store }

// Ledger returns the store's notification ledger.
func (s *Store) Ledger() *Ledger { return &Ledger{s: s} }

// Claim reports whether a notification keyed key may be sent at now: it
// may unless one was claimed less than window before. A successful claim
// is recorded in the same transaction, so two processes never both win.
func (l *Ledger) Claim(key string, now time.Time, window time.Duration) (bool, error) {
	ctx := context.Background()
	tx, err := l.s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var sent int64
	err = tx.QueryRowContext(ctx, "SELECT sent_ns FROM notices WHERE key = ?", key).Scan(&sent)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, err
	default:
		if d := now.Sub(time.Unix(0, sent)); d >= 0 && d < window {
			return false, nil
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO notices(key, sent_ns) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET sent_ns = excluded.sent_ns`, key, now.UnixNano()); err != nil {
		return false, err
	}
	// Forget claims long past, so the table stays small.
	if _, err := tx.ExecContext(ctx, "DELETE FROM notices WHERE sent_ns < ?", now.Add(-24*time.Hour).UnixNano()); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
