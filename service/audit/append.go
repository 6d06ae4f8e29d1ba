package audit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Record is what is appended for one decision or execution.
type Record struct {
	Event api.Event
	// Command is the judged text: credential references, never values.
	Command string
	// SandboxReason is the host's reason for the sandbox mode (why it is
	// none, say), when the executor knew one.
	SandboxReason string
	// Stdout and Stderr are the output as delivered (redacted), capped by
	// the caller; nil when not kept.
	Stdout, Stderr []byte
}

// Checkpoint is the content of a retention checkpoint row.
type Checkpoint struct {
	Time time.Time `json:"time"`
	// PrunedThroughSeq is the last row removed; PrunedRows how many.
	PrunedThroughSeq int64 `json:"pruned_through_seq"`
	PrunedRows       int64 `json:"pruned_rows"`
	// NextPrevHMAC is the HMAC of the last removed row: the row after it
	// chains to it.
	NextPrevHMAC string `json:"next_prev_hmac"`
	Reason       string `json:"reason"`
}

// Append adds rec to the chain. The event's id must be new.
func (s *Store) Append(ctx context.Context, rec Record) error {
	key, err := s.loadKey(ctx, true)
	if err != nil {
		return err
	}
	if rec.Event.ID == "" {
		return errors.New("audit: event has no id")
	}
	r := recordRow(rec)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	seq, err := s.insert(ctx, tx, key, r)
	if err != nil {
		return err
	}
	if seq%int64(s.opts.PruneEvery) == 0 {
		if _, err := s.prune(ctx, tx, key); err != nil {
			return fmt.Errorf("audit: retention: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Statements every append runs, prepared once on the writer.
const (
	sqlHead   = "SELECT seq, hmac FROM chain_head WHERE one = 1"
	sqlInsert = `INSERT INTO events
		(seq, kind, id, parent_id, time_ns, agent, surface, decision, status, sandbox_mode,
		 exit_code, duration_ms, command, reason, sandbox_reason, event, stdout, stderr, prev_hmac, hmac)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlMoveHead = `INSERT INTO chain_head(one, seq, hmac, mac) VALUES (1, ?, ?, ?)
		ON CONFLICT(one) DO UPDATE SET seq = excluded.seq, hmac = excluded.hmac, mac = excluded.mac`
)

type statements struct {
	head, insert, moveHead *sql.Stmt
}

func (s *Store) prepare(ctx context.Context) error {
	var err error
	for _, p := range []struct {
		into **sql.Stmt
		q    string
	}{{&s.stmts.head, sqlHead}, {&s.stmts.insert, sqlInsert}, {&s.stmts.moveHead, sqlMoveHead}} {
		if *p.into, err = s.w.PrepareContext(ctx, p.q); err != nil {
			return err
		}
	}
	return nil
}

// recordRow lays rec out as a row, not yet chained.
func recordRow(rec Record) *row {
	ev, _ := json.Marshal(rec.Event) // api.Event always encodes
	r := &row{
		kind:          KindEvent,
		id:            rec.Event.ID,
		parentID:      rec.Event.ParentID,
		timeNS:        rec.Event.Time.UnixNano(),
		agent:         rec.Event.Agent,
		surface:       rec.Event.Surface,
		decision:      string(rec.Event.Decision),
		status:        rec.Event.Status,
		sandboxMode:   rec.Event.SandboxMode,
		durationMS:    rec.Event.DurationMS,
		command:       rec.Command,
		reason:        rec.Event.Reason,
		sandboxReason: rec.SandboxReason,
		event:         string(ev),
		stdout:        rec.Stdout,
		stderr:        rec.Stderr,
	}
	if rec.Event.ExitCode != nil {
		r.exitCode = sql.NullInt64{Int64: int64(*rec.Event.ExitCode), Valid: true}
	}
	return r
}

// insert chains r after the head and moves the head; it returns r's seq.
func (s *Store) insert(ctx context.Context, tx *sql.Tx, key []byte, r *row) (int64, error) {
	var seq int64
	var last []byte
	err := tx.StmtContext(ctx, s.stmts.head).QueryRowContext(ctx).Scan(&seq, &last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		seq, last = 0, genesis
	case err != nil:
		return 0, fmt.Errorf("audit: reading the chain head: %w", err)
	}
	r.seq = seq + 1
	r.prevHMAC = last
	r.hmac = mac(key, r)
	_, err = tx.StmtContext(ctx, s.stmts.insert).ExecContext(ctx,
		r.seq, r.kind, r.id, r.parentID, r.timeNS, r.agent, r.surface, r.decision, r.status, r.sandboxMode,
		r.exitCode, r.durationMS, r.command, r.reason, r.sandboxReason, r.event, r.stdout, r.stderr, r.prevHMAC, r.hmac)
	if err != nil {
		return 0, fmt.Errorf("audit: appending event %s: %w", r.id, err)
	}
	_, err = tx.StmtContext(ctx, s.stmts.moveHead).ExecContext(ctx,
		r.seq, r.hmac, headMAC(key, r.seq, r.hmac))
	if err != nil {
		return 0, fmt.Errorf("audit: moving the chain head: %w", err)
	}
	return r.seq, nil
}

// Prune applies the retention bounds now, recording a checkpoint when it
// removes rows. It returns how many rows it removed.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	key, err := s.loadKey(ctx, true)
	if err != nil {
		return 0, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n, err := s.prune(ctx, tx, key)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// prune removes the oldest rows — a prefix of the chain — beyond the
// retention bounds, and appends a checkpoint that anchors what is left.
func (s *Store) prune(ctx context.Context, tx *sql.Tx, key []byte) (int64, error) {
	var minSeq, maxSeq sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT min(seq), max(seq) FROM events").Scan(&minSeq, &maxSeq); err != nil {
		return 0, err
	}
	if !minSeq.Valid {
		return 0, nil
	}
	through := minSeq.Int64 - 1
	var reasons []string
	if d := s.opts.RetentionDays; d > 0 {
		cutoff := s.opts.Now().Add(-time.Duration(d) * 24 * time.Hour).UnixNano()
		var p sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT max(seq) FROM events WHERE time_ns < ?", cutoff).Scan(&p); err != nil {
			return 0, err
		}
		if p.Valid && p.Int64 > through {
			through = p.Int64
			reasons = append(reasons, fmt.Sprintf("older than retention_days %d", d))
		}
	}
	if n := s.opts.RetentionEvents; n > 0 {
		// Keep the newest n rows, the checkpoint about to be written among
		// them.
		if p := maxSeq.Int64 - int64(n) + 1; p > through {
			through = p
			reasons = append(reasons, fmt.Sprintf("beyond retention_events %d", n))
		}
	}
	if through < minSeq.Int64 {
		return 0, nil
	}
	var last []byte
	if err := tx.QueryRowContext(ctx, "SELECT hmac FROM events WHERE seq = ?", through).Scan(&last); err != nil {
		return 0, fmt.Errorf("reading row %d: %w", through, err)
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM events WHERE seq <= ?", through)
	if err != nil {
		return 0, err
	}
	removed, _ := res.RowsAffected()
	now := s.opts.Now().UTC()
	cp := Checkpoint{
		Time:             now,
		PrunedThroughSeq: through,
		PrunedRows:       removed,
		NextPrevHMAC:     hex.EncodeToString(last),
		Reason:           joinReasons(reasons),
	}
	body, _ := json.Marshal(cp)
	r := &row{kind: KindCheckpoint, id: "checkpoint-" + randomID(), timeNS: now.UnixNano(), event: string(body)}
	if _, err := s.insert(ctx, tx, key, r); err != nil {
		return 0, err
	}
	s.opts.Logger.Info("audit: retention pruned rows", "rows", removed, "through_seq", through, "reason", cp.Reason)
	return removed, nil
}

func joinReasons(rs []string) string {
	switch len(rs) {
	case 0:
		return ""
	case 1:
		return rs[0]
	}
	return rs[0] + " and " + rs[1]
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
