package audit

// This file keeps the trail whole across crashes. An execution is on the
// record before it starts: a started row (kind "started") is appended, in
// the chain, before the sandbox is started, and the execution's end event
// follows it when the command ends. The started row's parent_id is the
// execution's event id, and its own id is "started-" and that id, so the
// two are linked in both directions without a second index.
//
// A started row with no end event is an open execution. The process that
// wrote it is named in it (pid, and whether it was the user service); when
// that process is gone, Reconcile closes the execution with an end event of
// status killed. A routed decision (its event says routed: a ticket was
// issued) with no execution event is open too: its ticket lives in the
// service's memory, so once that service is gone Reconcile records its
// execution as never_ran.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// KindStarted is the kind of a started row.
const KindStarted = "started"

// StatusStarted is the status column of a started row.
const StatusStarted = "started"

// Status reasons Reconcile writes.
const (
	// ReasonServiceCrashed: the service ended abruptly (SIGKILL, a crash,
	// power loss) while the execution ran, or before its ticket was
	// redeemed.
	ReasonServiceCrashed = api.StatusReasonServiceCrashed
	// ReasonProcessCrashed: the in-process gatehouse (exec) that ran it
	// ended abruptly.
	ReasonProcessCrashed = api.StatusReasonProcessCrashed
)

// startedPrefix begins the id of a started row.
const startedPrefix = "started-"

// Start is the content of a started row.
type Start struct {
	// Event is the execution event as it stood when the command was about
	// to start.
	Event api.Event `json:"event"`
	// PID is the process that runs the command; Service says whether it is
	// the user service.
	PID     int  `json:"pid"`
	Service bool `json:"service"`
}

// Started appends the started row of the execution rec describes; its end
// event, appended by Append with the same event id, closes it. An error
// means the execution is not on the record.
func (s *Store) Started(ctx context.Context, rec Record) error {
	if rec.Event.ID == "" {
		return errors.New("audit: event has no id")
	}
	key, err := s.loadKey(ctx, true)
	if err != nil {
		return err
	}
	st := Start{Event: rec.Event, PID: os.Getpid(), Service: s.opts.Service}
	body, _ := json.Marshal(st)
	now := s.opts.Now().UTC()
	r := &row{
		kind:     KindStarted,
		id:       startedPrefix + rec.Event.ID,
		parentID: rec.Event.ID,
		timeNS:   now.UnixNano(),
		agent:    rec.Event.Agent,
		surface:  rec.Event.Surface,
		decision: string(rec.Event.Decision),
		status:   StatusStarted,
		command:  rec.Command,
		event:    string(body),
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	if _, err := s.insert(ctx, tx, key, r); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Unfinished kinds.
const (
	UnfinishedExecution = "execution"       // started, no end event
	UnfinishedRouted    = "routed_decision" // a ticket was issued, no execution event
)

// An Unfinished is an execution the trail has not closed: open.
type Unfinished struct {
	Kind string
	// ID is the execution's event id (UnfinishedExecution) or the decision's
	// (UnfinishedRouted).
	ID   string
	Time time.Time
	// Command is the judged text.
	Command string
	// Event is the execution event as started, or the decision event.
	Event api.Event
	// PID and Service name the process that ran it (UnfinishedExecution only).
	PID     int
	Service bool
	// Running says the process that ran it is still alive, so the
	// execution may still be under way (UnfinishedExecution only; a reused pid
	// reads as alive).
	Running bool
}

// Unfinished returns the executions the trail has not closed, oldest
// first.
func (s *Store) Unfinished(ctx context.Context) ([]Unfinished, error) {
	var out []Unfinished
	rows, err := s.r.QueryContext(ctx, `SELECT s.parent_id, s.time_ns, s.command, s.event FROM events s
		WHERE s.kind = 'started' AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = s.parent_id)
		ORDER BY s.seq`)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	for rows.Next() {
		var o Unfinished
		var ns int64
		var body string
		if err := rows.Scan(&o.ID, &ns, &o.Command, &body); err != nil {
			rows.Close()
			return nil, fmt.Errorf("audit: %w", err)
		}
		var st Start
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			rows.Close()
			return nil, fmt.Errorf("audit: started row of %s: %w", o.ID, err)
		}
		o.Kind, o.Time, o.Event, o.PID, o.Service = UnfinishedExecution, time.Unix(0, ns), st.Event, st.PID, st.Service
		o.Running = processAlive(st.PID)
		out = append(out, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Routed decisions: allowed, no status (a decision, not an execution),
	// routed, and no event names them as parent.
	rows, err = s.r.QueryContext(ctx, `SELECT d.id, d.time_ns, d.command, d.event FROM events d
		WHERE d.kind = 'event' AND d.status = '' AND d.decision = 'allow'
		AND json_extract(d.event, '$.routed') = 1
		AND NOT EXISTS (SELECT 1 FROM events e WHERE e.parent_id = d.id AND e.kind = 'event')
		ORDER BY d.seq`)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o Unfinished
		var ns int64
		var body string
		if err := rows.Scan(&o.ID, &ns, &o.Command, &body); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		if err := json.Unmarshal([]byte(body), &o.Event); err != nil {
			return nil, fmt.Errorf("audit: decision %s: %w", o.ID, err)
		}
		o.Kind, o.Time = UnfinishedRouted, time.Unix(0, ns)
		out = append(out, o)
	}
	return out, rows.Err()
}

// Reconciled is one execution Reconcile closed.
type Reconciled struct {
	Unfinished
	// End is the end event it appended.
	End api.Event
}

// Reconcile closes what a process that is gone left open: an execution
// the service started (or one whose process is no longer alive) gets an
// end event of status killed, and a routed decision an execution event of
// status never_ran, both with status_reason service_crashed (or
// process_crashed for an in-process gatehouse). The user service calls it
// at start, before it serves anything: no execution or ticket of its own
// exists yet, and every one a previous service left is gone with it.
func (s *Store) Reconcile(ctx context.Context) ([]Reconciled, error) {
	open, err := s.Unfinished(ctx)
	if err != nil {
		return nil, err
	}
	var out []Reconciled
	now := s.opts.Now().UTC()
	for _, o := range open {
		ev := o.Event
		switch {
		case o.Kind == UnfinishedExecution && o.Service:
			ev.Status, ev.StatusReason = api.StatusKilled, ReasonServiceCrashed
			ev.Reason = fmt.Sprintf("the Gatehouse service (pid %d) ended abruptly while the command ran; its output and exit status were not recorded", o.PID)
		case o.Kind == UnfinishedExecution && !o.Running:
			ev.Status, ev.StatusReason = api.StatusKilled, ReasonProcessCrashed
			ev.Reason = fmt.Sprintf("the gatehouse process that ran it (pid %d) ended abruptly; its output and exit status were not recorded", o.PID)
		case o.Kind == UnfinishedExecution:
			continue // still running in another gatehouse process
		default:
			ev.ParentID, ev.ID = o.ID, randomID()
			ev.Status, ev.StatusReason = api.StatusNeverRan, ReasonServiceCrashed
			ev.Reason = "the Gatehouse service ended abruptly before the relay redeemed the ticket"
		}
		ev.ExitCode = nil
		if o.Kind == UnfinishedExecution {
			// How long it ran is not known; the end is when it was found.
			ev.DurationMS = 0
		}
		ev.Time = now
		if err := s.Append(ctx, Record{Event: ev, Command: o.Command}); err != nil {
			return out, err
		}
		out = append(out, Reconciled{Unfinished: o, End: ev})
	}
	return out, nil
}

// reconciledCount counts the end events Reconcile wrote.
func (s *Store) reconciledCount(ctx context.Context) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE kind = 'event'
		AND json_extract(event, '$.status_reason') IN (?, ?)`, ReasonServiceCrashed, ReasonProcessCrashed).Scan(&n)
	return n, err
}
