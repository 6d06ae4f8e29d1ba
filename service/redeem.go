package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/tickets"
)

// routed is a decided execution waiting for its relay.
type routed struct {
	ex *pipeline.Executor
	d  *pipeline.Admitted
	// in is the ticket's in-FIFO, open from the decision on.
	in *tickets.In
}

// Redeem runs the execution ticket t stands for, streaming to out.
func (s *Service) Redeem(ctx context.Context, t string, out sandbox.Streams) *api.End {
	r, err := s.tickets.Redeem(t)
	if err != nil {
		return ticketEnd(err)
	}
	name := tickets.Name(t)
	r.in.Release()
	tickets.Retire(s.opts.RelayDir, name, tickets.GoneUsed)
	if w := out.Stderr; w != nil {
		ctx = approvals.WithWaiting(ctx, func(a api.Approval) { fmt.Fprint(w, WaitingLine(a)) })
	}
	return s.run(ctx, r.ex, r.d, r.ex.ExecutionEvent(r.d), out)
}

// expired is called when a ticket was not redeemed in time.
func (s *Service) expired(name string, r *routed) {
	s.neverRan(r, ReasonTicketExpired, "the ticket expired before its relay redeemed it")
	r.in.Release()
	tickets.Retire(s.opts.RelayDir, name, tickets.GoneExpired)
}

// neverRan records the execution event of a routed command that never
// ran.
func (s *Service) neverRan(r *routed, reason, text string) {
	ev := r.ex.ExecutionEvent(r.d)
	ev.Status, ev.StatusReason, ev.Reason = string(sandbox.StatusNeverRan), reason, text
	r.ex.Record(&ev)
	s.ring.add(ev)
}

// awaitRelay waits for the relay of ticket name, then runs its execution,
// streaming into the out-FIFO. The relay holds the in-FIFO open until it
// exits: end of file there means it is gone, and the execution is killed.
func (s *Service) awaitRelay(name string, in *tickets.In, expires time.Time) {
	defer s.wg.Done()
	dir := s.opts.RelayDir
	defer in.Close()
	// Release at expiry ends the wait; the deadline is a second bound for
	// a relay that opened the FIFO and wrote nothing.
	in.SetReadDeadline(expires.Add(5 * time.Second))
	br := bufio.NewReaderSize(in, 512)
	line, err := br.ReadSlice('\n')
	// Gone from the directory at once: no second opener can share it.
	os.Remove(dirJoin(dir, tickets.InName(name)))
	in.Release()
	if len(line) == 0 {
		return // released: the ticket expired or the service is stopping
	}
	var req api.RelayRequest
	if err != nil || json.Unmarshal(line, &req) != nil || tickets.Name(req.Ticket) != name {
		s.log.Warn("malformed relay request", "fifo", name)
		tickets.Retire(dir, name, "")
		return
	}
	in.SetReadDeadline(time.Time{})

	r, rerr := s.tickets.Redeem(req.Ticket)
	why := tickets.GoneUsed
	if errors.Is(rerr, tickets.ErrExpired) || errors.Is(rerr, tickets.ErrClosed) {
		why = tickets.GoneExpired
	}
	out, err := tickets.OpenOut(s.root, dir, name, 5*time.Second)
	tickets.Retire(dir, name, why)
	if err != nil {
		s.log.Warn("relay did not open its output FIFO", "err", err)
		if rerr == nil {
			s.neverRan(r, api.StatusReasonRelayGone, "the relay went away before the command started")
		}
		return
	}
	defer out.Close()
	fw := api.NewFrameWriter(out, nil)
	if rerr != nil {
		fw.End(ticketEnd(rerr))
		return
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A connection the command makes may be held for a person's answer
	// (policy.egress_unknown: ask): the relay's stderr says so.
	ctx = approvals.WithWaiting(ctx, func(a api.Approval) { fmt.Fprint(fw.Stderr(), WaitingLine(a)) })
	go func() {
		// The relay writes nothing more: any return means it has exited.
		io.Copy(io.Discard, br)
		cancel()
	}()
	end := s.run(ctx, r.ex, r.d, r.ex.ExecutionEvent(r.d), sandbox.Streams{Stdout: fw.Stdout(), Stderr: fw.Stderr()})
	fw.End(end)
}

// openRelay makes the FIFOs of ticket name and opens its in-FIFO, without
// waiting for the relay.
func (s *Service) openRelay(r *routed, name string) error {
	if err := tickets.MakeFIFOs(s.opts.RelayDir, name); err != nil {
		return fmt.Errorf("preparing the relay: %w", err)
	}
	in, err := tickets.OpenIn(s.opts.RelayDir, name)
	if err != nil {
		tickets.Retire(s.opts.RelayDir, name, "")
		return fmt.Errorf("preparing the relay: %w", err)
	}
	r.in = in
	return nil
}

// refusePending answers a routed decision when as many tickets as
// exec.limits.max_pending_tickets wait for their relay: after the
// decision, already on the record, comes an execution that never ran
// (concurrency_limit).
func (s *Service) refusePending(ex *pipeline.Executor, d *pipeline.Admitted, resp *api.DecideResponse, max int) {
	reason := fmt.Sprintf("%d routed commands are already waiting for their relay, the limit (exec.limits.max_pending_tickets); try again when one has run or its ticket has expired", max)
	ev := ex.ExecutionEvent(d)
	ev.Decision, ev.BlockedBy, ev.Reason = api.DecisionDeny, ReasonConcurrency, reason
	ev.Status, ev.StatusReason = string(sandbox.StatusNeverRan), ReasonConcurrency
	ex.Record(&ev)
	s.ring.add(ev)
	resp.Decision, resp.BlockedBy, resp.Reason, resp.Ticket = api.DecisionDeny, ReasonConcurrency, reason, ""
}

func dirJoin(dir, name string) string { return dir + string(os.PathSeparator) + name }

func ticketEnd(err error) *api.End {
	kind := api.ErrTicketUnknown
	switch {
	case errors.Is(err, tickets.ErrUsed):
		kind = api.ErrTicketUsed
	case errors.Is(err, tickets.ErrExpired), errors.Is(err, tickets.ErrClosed):
		kind = api.ErrTicketExpired
	}
	return &api.End{Exit: api.ExitCannotRun, Error: &api.StreamError{Kind: kind, Message: err.Error()}}
}
