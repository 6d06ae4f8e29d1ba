package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Filter selects events. The zero Filter selects every event, newest
// first. Checkpoint rows are never selected.
type Filter struct {
	// Since and Until bound the event time (Since inclusive, Until
	// exclusive); zero means unbounded.
	Since, Until time.Time
	// Status is an event status (completed, timed_out, killed,
	// failed_to_start, never_ran) or "denied" for every denied decision.
	Status      string
	SandboxMode string
	Agent       string
	Surface     string
	// Answered selects the decisions a person answered (held calls): the
	// history of approvals.
	Answered bool
	// Before and After select the events strictly older, or newer, than a
	// position in the newest-first order: keyset pagination, which costs
	// the same on the last page as on the first. A zero Cursor is unset.
	Before, After Cursor
	// Grep matches, case-insensitively, a substring of the command text or
	// of the event's reason.
	Grep string
	// Calls lists calls rather than records: a routed call's decision,
	// once its execution is on the record, is left out, so that the call
	// is one entry, its execution, which carries the decision's fields
	// (decision, reason, approval) and names it by ParentID. The decision
	// stays its own record in the chain; export and verify read every
	// record.
	Calls bool
	// Limit caps the number of events; 0 means no cap.
	Limit int
	// Oldest orders oldest first (export); the default is newest first.
	Oldest bool
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Entry is one stored event.
type Entry struct {
	Seq int64
	// TimeNS is the event's time as stored, in Unix nanoseconds.
	TimeNS int64
	Record
}

// A Cursor is a position in the order events are listed in: time, then
// sequence number.
type Cursor struct{ TimeNS, Seq int64 }

// Cursor returns e's position.
func (e *Entry) Cursor() Cursor { return Cursor{e.TimeNS, e.Seq} }

// IsZero reports whether c is unset.
func (c Cursor) IsZero() bool { return c == Cursor{} }

// String returns c as ParseCursor reads it: "TIME_NS.SEQ".
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	return strconv.FormatInt(c.TimeNS, 10) + "." + strconv.FormatInt(c.Seq, 10)
}

// ParseCursor reads a Cursor's String; "" is the zero Cursor.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	t, q, ok := strings.Cut(s, ".")
	ns, err1 := strconv.ParseInt(t, 10, 64)
	seq, err2 := strconv.ParseInt(q, 10, 64)
	if !ok || err1 != nil || err2 != nil || seq < 1 {
		return Cursor{}, fmt.Errorf("%q is not a position in the list (TIME_NS.SEQ)", s)
	}
	return Cursor{ns, seq}, nil
}

// where renders f as a WHERE clause and its arguments.
func (f Filter) where() (string, []any) {
	conds := []string{"kind = 'event'"}
	var args []any
	if !f.Since.IsZero() {
		conds = append(conds, "time_ns >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "time_ns < ?")
		args = append(args, f.Until.UnixNano())
	}
	switch f.Status {
	case "":
	case "denied":
		conds = append(conds, "decision = 'deny'")
	default:
		conds = append(conds, "status = ?")
		args = append(args, f.Status)
	}
	if f.SandboxMode != "" {
		conds = append(conds, "sandbox_mode = ?")
		args = append(args, f.SandboxMode)
	}
	if f.Agent != "" {
		conds = append(conds, "agent = ?")
		args = append(args, f.Agent)
	}
	if f.Surface != "" {
		conds = append(conds, "surface = ?")
		args = append(args, f.Surface)
	}
	if f.Answered {
		conds = append(conds, `instr(event, '"approval":{') > 0`)
	}
	if f.Calls {
		// parent_id != '' lets SQLite use the partial index events_parent.
		conds = append(conds, "NOT EXISTS (SELECT 1 FROM events x WHERE x.parent_id = events.id AND x.parent_id != '' AND x.kind = 'event')")
	}
	// Written so that the planner walks the time index from the cursor.
	if c := f.Before; !c.IsZero() {
		conds = append(conds, "time_ns <= ? AND (time_ns < ? OR seq < ?)")
		args = append(args, c.TimeNS, c.TimeNS, c.Seq)
	}
	if c := f.After; !c.IsZero() {
		conds = append(conds, "time_ns >= ? AND (time_ns > ? OR seq > ?)")
		args = append(args, c.TimeNS, c.TimeNS, c.Seq)
	}
	if f.Grep != "" {
		// LIKE folds ASCII case; other letters must match exactly.
		pat := "%" + likeEscaper.Replace(f.Grep) + "%"
		conds = append(conds, `(command LIKE ? ESCAPE '\' OR reason LIKE ? ESCAPE '\')`)
		args = append(args, pat, pat)
	}
	return strings.Join(conds, " AND "), args
}

const listColumns = "seq, id, time_ns, command, sandbox_reason, event"

// List returns the events f selects, without their output.
func (s *Store) List(ctx context.Context, f Filter) ([]Entry, error) {
	var out []Entry
	err := s.Each(ctx, f, func(e *Entry) error {
		out = append(out, *e)
		return nil
	})
	return out, err
}

// Each calls fn for each event f selects, without its output, stopping at
// fn's first error. The Entry is reused between calls.
func (s *Store) Each(ctx context.Context, f Filter, fn func(*Entry) error) error {
	where, args := f.where()
	order := "DESC"
	if f.Oldest {
		order = "ASC"
	}
	q := "SELECT " + listColumns + " FROM events WHERE " + where + " ORDER BY time_ns " + order + ", seq " + order
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	var e Entry
	for rows.Next() {
		var id string
		var ev string
		e = Entry{}
		if err := rows.Scan(&e.Seq, &id, &e.TimeNS, &e.Command, &e.SandboxReason, &ev); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if err := json.Unmarshal([]byte(ev), &e.Event); err != nil {
			return fmt.Errorf("audit: row %d: decoding the event: %w", e.Seq, err)
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Get returns the event whose id is id, or the only one it is a prefix of
// (at least 4 hex digits), with its stored output.
func (s *Store) Get(ctx context.Context, id string) (*Entry, error) {
	id = strings.ToLower(id)
	if len(id) < 4 || strings.Trim(id, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("%w: %q is not an event id (hex, at least 4 digits)", ErrNotFound, id)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, id, time_ns, command, sandbox_reason, event, stdout, stderr
		FROM events WHERE kind = 'event' AND id >= ? AND id < ? ORDER BY id LIMIT 2`, id, id+"g")
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	var found []*Entry
	for rows.Next() {
		e := &Entry{}
		var eid, ev string
		if err := rows.Scan(&e.Seq, &eid, &e.TimeNS, &e.Command, &e.SandboxReason, &ev, blob{&e.Stdout}, blob{&e.Stderr}); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		if err := json.Unmarshal([]byte(ev), &e.Event); err != nil {
			return nil, fmt.Errorf("audit: row %d: decoding the event: %w", e.Seq, err)
		}
		found = append(found, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	case len(found) > 1 && found[0].Event.ID != id:
		return nil, fmt.Errorf("%w: %s", ErrAmbiguous, id)
	}
	return found[0], nil
}

// Children returns the events whose parent is id (the executions of a
// decision), oldest first, without their output.
func (s *Store) Children(ctx context.Context, id string) ([]api.Event, error) {
	// parent_id != '' lets SQLite use the partial index events_parent;
	// without it every row is read.
	rows, err := s.r.QueryContext(ctx, "SELECT event FROM events WHERE parent_id = ? AND parent_id != '' AND kind = 'event' ORDER BY seq", id)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	var out []api.Event
	for rows.Next() {
		var ev string
		if err := rows.Scan(&ev); err != nil {
			return nil, err
		}
		var e api.Event
		if err := json.Unmarshal([]byte(ev), &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Stats describes the database.
type Stats struct {
	Events      int64
	Checkpoints int64
	Started     int64
	FirstSeq    int64
	LastSeq     int64
}

// Stats counts the rows.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	var first, last sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE kind = 'event'), count(*) FILTER (WHERE kind = 'checkpoint'),
		count(*) FILTER (WHERE kind = 'started'),
		min(seq), max(seq) FROM events`).Scan(&st.Events, &st.Checkpoints, &st.Started, &first, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	st.FirstSeq, st.LastSeq = first.Int64, last.Int64
	return st, err
}
