package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// A RowVerdict says whether one row holds in the chain: its HMAC matches
// its content, it chains to the row before it, and the row after it (or
// the chain head) chains to it. It is what Verify checks, for one row and
// its neighbours only; a break elsewhere in the trail is Verify's to find.
type RowVerdict struct {
	OK bool
	// Detail says what holds, or the first thing that does not.
	Detail string
}

const rowColumns = `seq, kind, id, parent_id, time_ns, agent, surface, decision, status,
	sandbox_mode, exit_code, duration_ms, command, reason, sandbox_reason, event, stdout, stderr, prev_hmac, hmac`

// scanRow reads one row of rowColumns.
func scanRow(sc interface{ Scan(...any) error }) (*row, error) {
	var r row
	err := sc.Scan(&r.seq, &r.kind, &r.id, &r.parentID, &r.timeNS, &r.agent, &r.surface, &r.decision,
		&r.status, &r.sandboxMode, &r.exitCode, &r.durationMS, &r.command, &r.reason, &r.sandboxReason, &r.event,
		blob{&r.stdout}, blob{&r.stderr}, &r.prevHMAC, &r.hmac)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// VerifyRow checks the row numbered seq in one read snapshot, as Verify
// would check it.
func (s *Store) VerifyRow(ctx context.Context, seq int64) (*RowVerdict, error) {
	key, err := s.loadKey(ctx, false)
	if err != nil {
		return nil, err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	one := func(where string, args ...any) (*row, error) {
		r, err := scanRow(tx.QueryRowContext(ctx, "SELECT "+rowColumns+" FROM events WHERE "+where, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return r, err
	}
	r, err := one("seq = ?", seq)
	if err != nil || r == nil {
		return nil, errors.Join(err, fmt.Errorf("%w: row %d", ErrNotFound, seq))
	}
	if !hmac.Equal(mac(key, r), r.hmac) {
		return &RowVerdict{Detail: fmt.Sprintf("row %d was changed: its HMAC does not match its content", seq)}, nil
	}
	prev, err := one("seq = (SELECT max(seq) FROM events WHERE seq < ?)", seq)
	if err != nil {
		return nil, err
	}
	switch {
	case prev != nil && !bytes.Equal(r.prevHMAC, prev.hmac):
		return &RowVerdict{Detail: fmt.Sprintf("row %d does not chain to row %d before it: a row was removed, inserted or moved", seq, prev.seq)}, nil
	case prev == nil && !bytes.Equal(r.prevHMAC, genesis) && !s.checkpointLeadsTo(ctx, tx, r.prevHMAC):
		return &RowVerdict{Detail: fmt.Sprintf("row %d is the first kept and chains to neither the start nor a retention checkpoint: rows before it were removed", seq)}, nil
	}
	next, err := one("seq = (SELECT min(seq) FROM events WHERE seq > ?)", seq)
	if err != nil {
		return nil, err
	}
	if next != nil {
		if !bytes.Equal(next.prevHMAC, r.hmac) {
			return &RowVerdict{Detail: fmt.Sprintf("row %d after it does not chain to row %d: a row was removed, inserted or moved", next.seq, seq)}, nil
		}
		return &RowVerdict{OK: true, Detail: fmt.Sprintf("row %d matches its HMAC and chains between rows %s and %d", seq, prevName(prev), next.seq)}, nil
	}
	var headSeq int64
	var headHMAC, m []byte
	if err := tx.QueryRowContext(ctx, "SELECT seq, hmac, mac FROM chain_head WHERE one = 1").Scan(&headSeq, &headHMAC, &m); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return &RowVerdict{Detail: "the chain head record was removed"}, nil
		}
		return nil, err
	}
	if !hmac.Equal(headMAC(key, headSeq, headHMAC), m) || headSeq != seq || !bytes.Equal(headHMAC, r.hmac) {
		return &RowVerdict{Detail: fmt.Sprintf("row %d is the last but the chain head records row %d: rows after it were removed, or the head was changed", seq, headSeq)}, nil
	}
	return &RowVerdict{OK: true, Detail: fmt.Sprintf("row %d matches its HMAC, chains to row %s and is the chain head", seq, prevName(prev))}, nil
}

func prevName(prev *row) string {
	if prev == nil {
		return "the start"
	}
	return fmt.Sprint(prev.seq)
}

// checkpointLeadsTo reports whether a retention checkpoint names h as the
// HMAC of the last row it removed.
func (s *Store) checkpointLeadsTo(ctx context.Context, tx *sql.Tx, h []byte) bool {
	rows, err := tx.QueryContext(ctx, "SELECT event FROM events WHERE kind = ?", KindCheckpoint)
	if err != nil {
		return false
	}
	defer rows.Close()
	for rows.Next() {
		var ev string
		var cp Checkpoint
		if rows.Scan(&ev) == nil && json.Unmarshal([]byte(ev), &cp) == nil {
			if b, err := hex.DecodeString(cp.NextPrevHMAC); err == nil && bytes.Equal(b, h) {
				return true
			}
		}
	}
	return false
}
