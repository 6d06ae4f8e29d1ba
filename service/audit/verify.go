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
	"time"
)

// Report is the outcome of Verify.
type Report struct {
	// Rows were checked, FirstSeq to LastSeq; Checkpoints of them are
	// retention checkpoints.
	Rows        int
	FirstSeq    int64
	LastSeq     int64
	Checkpoints int
	// Problem is the first break in the chain; nil when it is intact.
	Problem *Problem
	// KeySource says where the chain's key is kept (KeySourceKeychain or
	// KeySourceFile) and KeyLocation which item or file.
	KeySource, KeyLocation string
	// Open are the executions the trail has not closed: still running, or
	// left by a process that ended abruptly (Reconcile closes those).
	Open []Unfinished
	// Reconciled counts the end events Reconcile wrote for executions a
	// crashed process left open.
	Reconciled int
}

// Problem kinds.
const (
	ProblemChanged   = "changed"
	ProblemRemoved   = "removed"
	ProblemInserted  = "inserted"
	ProblemReordered = "reordered"
	ProblemHead      = "head"
)

// A Problem is the first place the chain does not hold.
type Problem struct {
	Kind string
	// Seq, ID and Time name the row where the break was found.
	Seq    int64
	ID     string
	Time   time.Time
	Detail string
}

func (p *Problem) Error() string { return p.Detail }

// link is what Verify keeps of each row.
type link struct {
	seq   int64
	id    string
	time  time.Time
	prev  []byte
	hmac  []byte
	valid bool // its HMAC matches its content
}

func (l *link) name() string {
	return fmt.Sprintf("row %d (%s, %s)", l.seq, l.id, l.time.UTC().Format(time.RFC3339))
}

// Verify walks the chain in one read snapshot and reports the first row
// that was changed, removed, inserted or reordered.
func (s *Store) Verify(ctx context.Context) (*Report, error) {
	key, err := s.loadKey(ctx, false)
	if errors.Is(err, errNoTrail) {
		// Nothing was ever appended: fine if the tables say so too.
		st, err := s.Stats(ctx)
		if err != nil {
			return nil, err
		}
		var head int
		s.r.QueryRowContext(ctx, "SELECT count(*) FROM chain_head").Scan(&head)
		if st.Events+st.Checkpoints+st.Started == 0 && head == 0 {
			return &Report{}, nil
		}
		return nil, &KeyError{
			Err:  fmt.Errorf("%s holds rows but no trail id: its meta table was edited", s.opts.Path),
			Hint: "the trail cannot be verified without it",
		}
	}
	if err != nil {
		return nil, err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	rows, err := tx.QueryContext(ctx, `SELECT seq, kind, id, parent_id, time_ns, agent, surface, decision, status,
		sandbox_mode, exit_code, duration_ms, command, reason, sandbox_reason, event, stdout, stderr, prev_hmac, hmac
		FROM events ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	var links []link
	var anchor *Checkpoint
	anchorAt := -1
	rep := &Report{}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.kind, &r.id, &r.parentID, &r.timeNS, &r.agent, &r.surface, &r.decision,
			&r.status, &r.sandboxMode, &r.exitCode, &r.durationMS, &r.command, &r.reason, &r.sandboxReason, &r.event,
			blob{&r.stdout}, blob{&r.stderr}, &r.prevHMAC, &r.hmac); err != nil {
			rows.Close()
			return nil, err
		}
		l := link{seq: r.seq, id: r.id, time: time.Unix(0, r.timeNS), prev: r.prevHMAC, hmac: r.hmac}
		l.valid = hmac.Equal(mac(key, &r), r.hmac)
		links = append(links, l)
		if r.kind == KindCheckpoint {
			rep.Checkpoints++
			anchor, anchorAt = nil, len(links)-1
			var cp Checkpoint
			if json.Unmarshal([]byte(r.event), &cp) == nil {
				anchor = &cp
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rep.Rows = len(links)
	if len(links) > 0 {
		rep.FirstSeq, rep.LastSeq = links[0].seq, links[len(links)-1].seq
	}

	// Where the chain starts: after the newest checkpoint's pruned rows,
	// else at the genesis. A changed checkpoint cannot be trusted as the
	// start.
	expect := genesis
	startSeq := int64(0)
	if anchorAt >= 0 {
		l := &links[anchorAt]
		h, err := hex.DecodeString(anchor.safeNextPrev())
		if !l.valid || anchor == nil || err != nil {
			rep.Problem = &Problem{Kind: ProblemChanged, Seq: l.seq, ID: l.id, Time: l.time,
				Detail: fmt.Sprintf("retention checkpoint %s was changed: its HMAC does not match its content", l.name())}
			return rep, nil
		}
		expect, startSeq = h, anchor.PrunedThroughSeq
	}
	head, prob, err := readHead(ctx, tx, key, links)
	if err != nil || prob != nil {
		rep.Problem = prob
		return rep, err
	}
	rep.Problem = walk(links, expect, startSeq, head)
	if rep.Problem == nil {
		rep.Problem = checkHead(links, head)
	}
	if err := s.completeness(ctx, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// completeness fills in the report's key source, open executions and
// reconciled count.
func (s *Store) completeness(ctx context.Context, rep *Report) error {
	var err error
	if rep.KeySource, rep.KeyLocation, err = s.KeySource(ctx); err != nil {
		return err
	}
	if rep.Open, err = s.Unfinished(ctx); err != nil {
		return err
	}
	rep.Reconciled, err = s.reconciledCount(ctx)
	return err
}

// walk follows the links from expect and returns the first break. The
// head stands for the row after the last.
func walk(links []link, expect []byte, startSeq int64, head *chainHead) *Problem {
	prevName := ""
	if startSeq > 0 {
		prevName = fmt.Sprintf("the retention checkpoint's last pruned row %d", startSeq)
	}
	for i := range links {
		l := &links[i]
		prob := func(kind, format string, args ...any) *Problem {
			return &Problem{Kind: kind, Seq: l.seq, ID: l.id, Time: l.time, Detail: fmt.Sprintf(format, args...)}
		}
		nextLinksHere := i+1 < len(links) && bytes.Equal(links[i+1].prev, expect) ||
			i+1 == len(links) && head != nil && bytes.Equal(head.hmac, expect)
		switch {
		case !l.valid && nextLinksHere:
			return prob(ProblemInserted, "%s was inserted: its HMAC does not match its content and the chain skips it", l.name())
		case !l.valid:
			return prob(ProblemChanged, "%s was changed: its HMAC does not match its content", l.name())
		case !bytes.Equal(l.prev, expect):
			for j := range links {
				if j != i && bytes.Equal(links[j].hmac, l.hmac) {
					return prob(ProblemInserted, "%s was inserted: it is a copy of %s", l.name(), links[j].name())
				}
			}
			// Which row should have come here?
			for j := i + 1; j < len(links); j++ {
				if bytes.Equal(links[j].prev, expect) {
					return prob(ProblemReordered, "%s is out of order: %s belongs before it", l.name(), links[j].name())
				}
			}
			for j := range links {
				if j != i && bytes.Equal(links[j].hmac, l.prev) {
					return prob(ProblemReordered, "%s is out of order: it belongs after %s", l.name(), links[j].name())
				}
			}
			if nextLinksHere {
				return prob(ProblemInserted, "%s was inserted: it does not chain to the row before it, and the next row chains past it", l.name())
			}
			switch {
			case prevName == "" && i == 0:
				return prob(ProblemRemoved, "rows before %s were removed: the chain starts mid-way and no retention checkpoint accounts for it", l.name())
			case i == 0:
				return prob(ProblemRemoved, "rows were removed before %s: it does not chain to %s", l.name(), prevName)
			}
			gap := ""
			switch p := links[i-1].seq; {
			case l.seq == p+2:
				gap = fmt.Sprintf(" (row %d is missing)", p+1)
			case l.seq > p+2:
				gap = fmt.Sprintf(" (rows %d–%d are missing)", p+1, l.seq-1)
			}
			return prob(ProblemRemoved, "a row was removed between %s and %s%s", links[i-1].name(), l.name(), gap)
		}
		expect = l.hmac
		prevName = l.name()
	}
	return nil
}

// chainHead is the authenticated record of the last row.
type chainHead struct {
	seq  int64
	hmac []byte
}

// readHead reads the chain head and checks its own MAC; a nil head means
// there is none (an empty database).
func readHead(ctx context.Context, tx *sql.Tx, key []byte, links []link) (*chainHead, *Problem, error) {
	var h chainHead
	var m []byte
	err := tx.QueryRowContext(ctx, "SELECT seq, hmac, mac FROM chain_head WHERE one = 1").Scan(&h.seq, &h.hmac, &m)
	if errors.Is(err, sql.ErrNoRows) {
		if len(links) == 0 {
			return nil, nil, nil
		}
		return nil, &Problem{Kind: ProblemHead, Detail: "the chain head record was removed"}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !hmac.Equal(headMAC(key, h.seq, h.hmac), m) {
		return nil, &Problem{Kind: ProblemHead, Seq: h.seq, Detail: fmt.Sprintf("the chain head record (row %d) was changed", h.seq)}, nil
	}
	return &h, nil, nil
}

// checkHead compares the chain head with the last row.
func checkHead(links []link, head *chainHead) *Problem {
	if head == nil {
		return nil
	}
	if len(links) == 0 {
		return &Problem{Kind: ProblemRemoved, Seq: head.seq, Detail: fmt.Sprintf("every row was removed: the chain head records row %d", head.seq)}
	}
	end := &links[len(links)-1]
	if end.seq == head.seq && bytes.Equal(end.hmac, head.hmac) {
		return nil
	}
	if bytes.Equal(end.hmac, head.hmac) {
		return &Problem{Kind: ProblemReordered, Seq: end.seq, ID: end.id, Time: end.time,
			Detail: fmt.Sprintf("%s was renumbered: the chain head records it as row %d", end.name(), head.seq)}
	}
	first := end.seq + 1
	return &Problem{Kind: ProblemRemoved, Seq: first,
		Detail: fmt.Sprintf("the newest rows were removed, from row %d through row %d: the chain ends at %s", first, max(head.seq, first), end.name())}
}

func (c *Checkpoint) safeNextPrev() string {
	if c == nil {
		return ""
	}
	return c.NextPrevHMAC
}
