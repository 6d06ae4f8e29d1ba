// Package export sends the audit trail to the fleet's OpenTelemetry
// collector: every event, oldest first, as an OTLP log record, through the
// official OTLP log exporters (otlploghttp, otlploggrpc), from a durable
// cursor kept in the local audit store.
//
// # Nothing lost
//
// The SDK's BatchProcessor hands a failed batch to the global error
// handler and drops it (sdk/log batch.go, exportBatch), so it is not used.
// The Exporter runs its own loop instead: it reads the events after the
// cursor, calls the OTLP exporter's Export with them, and moves the cursor
// past them only when Export reports success. A collector that is down,
// slow or refusing is retried, the same events from the same cursor, with
// the wait doubling from MinBackoff up to MaxBackoff; an event is never
// skipped. A process killed after the collector accepted a batch but
// before the cursor moved sends that one batch again when it next runs:
// duplicates are bounded by one batch, and receivers can drop them by
// gatehouse.id.
//
// Each OTLP exporter is built with its own retries off, so that every
// attempt's result reaches this loop, and with every setting given
// explicitly, so that OTEL_EXPORTER_OTLP_* variables in the service's
// environment do not change where the trail goes.
package export

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/gatehouse-dev/gatehouse/service/audit"
)

// ShutdownGrace is how long a request in flight when Serve's context ends
// may still take.
const ShutdownGrace = 2 * time.Second

// CursorName is the OTLP export's cursor in the audit store.
const CursorName = "otlp"

// Source is the audit trail as the exporter reads it. *audit.Store
// implements it.
type Source interface {
	// ExportCursor returns the last row the export name delivered (0 for
	// none).
	ExportCursor(ctx context.Context, name string) (int64, error)
	// SetExportCursor moves the cursor from from to to; it fails with
	// audit.ErrCursorMoved when the cursor is not at from.
	SetExportCursor(ctx context.Context, name string, from, to int64) error
	// EventsAfter returns up to limit events after row seq, in the order
	// they were appended.
	EventsAfter(ctx context.Context, seq int64, limit int) ([]audit.Entry, error)
	// Pruned returns how many rows after row seq retention removed.
	Pruned(ctx context.Context, seq int64) (int64, error)
}

// A Sender sends one batch of records and reports the collector's
// answer. The OTLP log exporters (otlploghttp, otlploggrpc) implement it.
type Sender interface {
	Export(ctx context.Context, records []sdklog.Record) error
	Shutdown(ctx context.Context) error
}

// Options configure an Exporter. Source and Dial are required.
type Options struct {
	Source Source
	// Dial builds the OTLP exporter (Dial in otlp.go): called when there
	// are events to send, again after a failure to build it (a locked
	// keychain, say), and after every request that failed, so that the
	// header credentials are read afresh (a rotated token).
	Dial func(ctx context.Context) (Sender, error)
	// Encoder turns events into records; nil builds one with Resource("").
	Encoder *Encoder
	// BatchSize is the most events one Export carries (default 256).
	BatchSize int
	// Timeout bounds one Export (default 10 s).
	Timeout time.Duration
	// MinBackoff is the wait after the first failure; each further one
	// doubles it up to MaxBackoff (defaults 1 s and 1 min). Each wait is
	// drawn between half of it and all of it, so that a fleet coming back
	// does not arrive at once.
	MinBackoff, MaxBackoff time.Duration
	// Poll is how often the trail is read for new events when everything
	// has been sent (default 1 s).
	Poll   time.Duration
	Logger *slog.Logger
}

// An Exporter sends the audit trail. Serve runs it; it is not safe to
// Serve twice at once.
type Exporter struct {
	opts Options
	log  *slog.Logger
}

// New returns an Exporter for opts.
func New(opts Options) (*Exporter, error) {
	if opts.Source == nil || opts.Dial == nil {
		return nil, errors.New("export: Source and Dial are required")
	}
	if opts.Encoder == nil {
		opts.Encoder = NewEncoder(Resource(""), "")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Second
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(opts.MinBackoff, time.Minute)
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Exporter{opts: opts, log: opts.Logger}, nil
}

// Serve sends events until ctx ends; it returns nil then. Failures are
// logged and retried, never returned: the cursor keeps what is unsent.
func (e *Exporter) Serve(ctx context.Context) error {
	var exp Sender
	// drop shuts the exporter down; the next batch dials again, reading
	// the header credentials afresh (a rotated token is picked up).
	drop := func() {
		if exp != nil {
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			exp.Shutdown(sctx)
			exp = nil
		}
	}
	defer drop()
	failures := 0
	// fail logs a failure and waits before the next attempt; it reports
	// false when ctx ended meanwhile.
	fail := func(what string, err error, attrs ...any) bool {
		failures++
		wait := e.backoff(failures)
		e.log.Warn("audit export: "+what+"; retrying", append(attrs, "err", err, "attempt", failures, "retry_in", wait.Round(time.Millisecond))...)
		return sleep(ctx, wait)
	}
	cursor, err := e.opts.Source.ExportCursor(ctx, CursorName)
	for err != nil {
		if !fail("reading the export cursor", err) {
			return nil
		}
		cursor, err = e.opts.Source.ExportCursor(ctx, CursorName)
	}
	e.log.Info("audit export started", "after_row", cursor)
	e.reportPruned(ctx, cursor)
	for ctx.Err() == nil {
		batch, err := e.opts.Source.EventsAfter(ctx, cursor, e.opts.BatchSize)
		if err != nil {
			if !fail("reading the audit trail", err) {
				return nil
			}
			continue
		}
		if len(batch) == 0 {
			if !sleep(ctx, e.opts.Poll) {
				return nil
			}
			continue
		}
		if exp == nil {
			if exp, err = e.opts.Dial(ctx); err != nil {
				exp = nil
				if !fail("connecting to the collector", err) {
					return nil
				}
				continue
			}
		}
		recs, err := e.opts.Encoder.Records(batch)
		if err != nil {
			// An event that cannot be encoded is a bug; it is not skipped.
			if !fail("encoding events", err, "first_row", batch[0].Seq) {
				return nil
			}
			continue
		}
		if err := e.send(ctx, exp, recs); err != nil {
			if ctx.Err() != nil {
				return nil // unanswered: the cursor keeps the batch
			}
			drop()
			if !fail("the collector did not accept the batch", err, "events", len(batch), "first_row", batch[0].Seq) {
				return nil
			}
			continue
		}
		last := batch[len(batch)-1].Seq
		if err := e.opts.Source.SetExportCursor(context.WithoutCancel(ctx), CursorName, cursor, last); err != nil {
			if errors.Is(err, audit.ErrCursorMoved) {
				// Another exporter moved it (two services on one trail
				// cannot happen; a restored database can): follow it.
				c, rerr := e.opts.Source.ExportCursor(ctx, CursorName)
				if rerr == nil {
					e.log.Warn("audit export: the cursor was moved elsewhere; following it", "from", cursor, "to", c)
					cursor = c
					continue
				}
			}
			// The collector has the batch; the next attempt sends it again.
			if !fail("recording the export cursor", err, "row", last) {
				return nil
			}
			continue
		}
		if failures > 0 {
			e.log.Info("audit export: the collector accepted events again", "after_attempts", failures)
		}
		failures = 0
		cursor = last
	}
	return nil
}

// send exports one batch within the timeout. A partial success — the
// collector took the request and rejected some records as invalid —
// counts as delivered: sending the same records again would be rejected
// again and hold up every later event. It is logged.
//
// When ctx ends during the request (the service stopping), the request
// is given ShutdownGrace to be answered, so that a batch the collector is
// taking is recorded as sent rather than sent again at the next start.
func (e *Exporter) send(ctx context.Context, exp Sender, recs []sdklog.Record) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.opts.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(ShutdownGrace, cancel) })
	defer stop()
	err := exp.Export(sctx, recs)
	if err != nil && partialSuccess(err) {
		e.log.Warn("audit export: the collector rejected some records", "err", err)
		return nil
	}
	return err
}

// partialSuccess reports whether err is only the OTLP exporters' report
// of a partial success (their internal PartialSuccess type, whose message
// begins so); TestPartialSuccess holds it to the SDK's wording.
func partialSuccess(err error) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if !partialSuccess(e) {
				return false
			}
		}
		return len(joined.Unwrap()) > 0
	}
	return strings.HasPrefix(err.Error(), "OTLP partial success")
}

// reportPruned logs rows retention removed before they were sent.
func (e *Exporter) reportPruned(ctx context.Context, cursor int64) {
	if n, err := e.opts.Source.Pruned(ctx, cursor); err == nil && n > 0 {
		e.log.Error("audit export: retention removed rows before they were sent", "rows", n, "after_row", cursor)
	}
}

// backoff returns the wait after the n-th consecutive failure.
func (e *Exporter) backoff(n int) time.Duration {
	d := e.opts.MinBackoff
	for i := 1; i < n && d < e.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, e.opts.MaxBackoff)
	return d/2 + rand.N(d/2+1)
}

// sleep waits d; it reports false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
