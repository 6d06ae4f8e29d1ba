package audit

// This file keeps the export cursors: for each export of the trail (the
// fleet's OpenTelemetry collector, service/export), the sequence number of
// the last row the other side acknowledged. A cursor is not part of the
// chain, like the notification ledger: it says what was sent, not what
// happened. It only moves forward, and only when its holder says so.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrCursorMoved: the cursor was not where the caller last saw it, so
// another exporter moved it.
var ErrCursorMoved = errors.New("the export cursor was moved by another exporter")

// ExportCursor returns the sequence number of the last row the export
// name delivered; 0 when it has delivered none.
func (s *Store) ExportCursor(ctx context.Context, name string) (int64, error) {
	var seq int64
	err := s.r.QueryRowContext(ctx, "SELECT seq FROM export_cursors WHERE name = ?", name).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("audit: reading the export cursor: %w", err)
	}
	return seq, nil
}

// SetExportCursor moves the cursor of the export name from from to to,
// in one transaction. It returns ErrCursorMoved when the cursor is not at
// from, and refuses to move it back.
func (s *Store) SetExportCursor(ctx context.Context, name string, from, to int64) error {
	if to < from {
		return fmt.Errorf("audit: the export cursor moves forward only (from %d to %d)", from, to)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	var cur int64
	err = tx.QueryRowContext(ctx, "SELECT seq FROM export_cursors WHERE name = ?", name).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("audit: reading the export cursor: %w", err)
	}
	if cur != from {
		return fmt.Errorf("%w (it is at row %d, not %d)", ErrCursorMoved, cur, from)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO export_cursors(name, seq, updated_ns) VALUES (?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET seq = excluded.seq, updated_ns = excluded.updated_ns`,
		name, to, s.opts.Now().UnixNano()); err != nil {
		return fmt.Errorf("audit: moving the export cursor: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: moving the export cursor: %w", err)
	}
	return nil
}

// EventsAfter returns at most limit events whose rows come after row seq,
// in the order they were appended, without their output. Started and
// checkpoint rows are not events and are skipped. Rows removed by
// retention before they were read are gone; Pruned says how many.
func (s *Store) EventsAfter(ctx context.Context, seq int64, limit int) ([]Entry, error) {
	if limit <= 0 {
		return nil, errors.New("audit: EventsAfter needs a positive limit")
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+listColumns+
		" FROM events WHERE seq > ? AND kind = 'event' ORDER BY seq LIMIT ?", seq, limit)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var id, ev string
		var ns int64
		if err := rows.Scan(&e.Seq, &id, &ns, &e.Command, &e.SandboxReason, &ev); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		if err := json.Unmarshal([]byte(ev), &e.Event); err != nil {
			return nil, fmt.Errorf("audit: row %d: decoding the event: %w", e.Seq, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Backlog counts the events after row seq: what an export at seq has yet
// to send.
func (s *Store) Backlog(ctx context.Context, seq int64) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE seq > ? AND kind = 'event'", seq).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	return n, nil
}

// Pruned returns how many rows after row seq retention removed: rows an
// export at seq never read. Checkpoints record what each pruning removed.
func (s *Store) Pruned(ctx context.Context, seq int64) (int64, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT event FROM events WHERE kind = 'checkpoint' ORDER BY seq")
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	var lost int64
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return 0, fmt.Errorf("audit: %w", err)
		}
		var cp Checkpoint
		if json.Unmarshal([]byte(body), &cp) != nil || cp.PrunedThroughSeq <= seq {
			continue
		}
		first := cp.PrunedThroughSeq - cp.PrunedRows + 1
		lost += cp.PrunedThroughSeq - max(first-1, seq)
	}
	return lost, rows.Err()
}
