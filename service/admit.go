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
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/tickets"
)

// Status reasons of executions the service itself refused or never ran.
const (
	ReasonConcurrency   = "concurrency_limit"
	ReasonTicketExpired = "ticket_expired"
	ReasonServiceStop   = "service_stopped"
)

// routed is a decided execution waiting for its relay.
type routed struct {
	ex *pipeline.Executor
	d  *pipeline.Decision
	// in is the ticket's in-FIFO, open from the decision on.
	in *tickets.In
}

// Decide runs the pipeline up to the decision. An allowed call with
// req.Route under governed_shell routing gets a ticket; its FIFOs are
// made and the service waits for the relay.
func (s *Service) Decide(ctx context.Context, req api.DecideRequest) (*api.DecideResponse, error) {
	g := s.gen.Load()
	cfg := g.ex.Config()
	resp := &api.DecideResponse{Routing: cfg.Policy.BuiltinExecRouting}
	if req.Routing == api.RoutingGovernedShell {
		resp.Routing = api.RoutingGovernedShell
	}
	d, err := g.ex.Decide(ctx, req.Request)
	var den *pipeline.Denial
	var ae *pipeline.ArgError
	switch {
	case errors.As(err, &den):
		resp.Decision, resp.BlockedBy, resp.Reason = "deny", den.Code, den.Reason
		resp.Warning = den.Warning
		if den.Event != nil {
			resp.EventID = den.Event.ID
			s.ring.add(*den.Event)
		}
		return resp, nil
	case errors.As(err, &ae):
		resp.Decision, resp.BlockedBy = "deny", "invalid_argument"
		resp.Reason = fmt.Sprintf("argument %s", ae.Error())
		return resp, nil
	case err != nil:
		return nil, err
	}
	resp.Decision, resp.EventID, resp.TimeoutSeconds = "allow", d.Event.ID, d.Event.TimeoutSeconds
	// The decision is on the record before the answer (auditgate.go): a
	// routed one stays open there until its execution is recorded.
	d.Event.Routed = req.Route && resp.Routing == api.RoutingGovernedShell
	if resp = s.recordDecision(g.ex, d.Event, resp); resp.Decision != "allow" {
		return resp, nil
	}
	if d.Event.Routed {
		if !s.hold() {
			return nil, tickets.ErrClosed
		}
		ttl := time.Duration(cfg.Exec.Limits.TicketTTLSeconds) * time.Second
		r := &routed{ex: g.ex, d: d}
		t, name, exp, err := s.tickets.Issue(r, ttl, cfg.Exec.Limits.MaxPendingTickets, func(name string) error {
			return s.openRelay(r, name)
		})
		if errors.Is(err, tickets.ErrFull) {
			s.wg.Done()
			s.refusePending(g.ex, d, resp, cfg.Exec.Limits.MaxPendingTickets)
			return resp, nil
		}
		if err != nil {
			s.neverRan(r, "relay_unavailable", "the relay could not be prepared: "+err.Error())
			s.wg.Done()
			return nil, err
		}
		resp.Ticket, resp.ExpiresAt = t, exp.UTC()
		go s.awaitRelay(name, r.in, exp)
	}
	return resp, nil
}

// Execute decides req and runs it at once, streaming to out.
func (s *Service) Execute(ctx context.Context, req api.ExecRequest, out sandbox.Streams) *api.End {
	g := s.gen.Load()
	d, err := g.ex.Decide(ctx, req)
	var den *pipeline.Denial
	var ae *pipeline.ArgError
	switch {
	case errors.As(err, &den):
		if den.Event != nil {
			s.ring.add(*den.Event)
		}
		return denialEnd(den)
	case errors.As(err, &ae):
		return &api.End{Exit: 2, Error: &api.StreamError{Kind: api.ErrArgument, Arg: ae.Arg, Message: ae.Msg}}
	case err != nil:
		return internalEnd(err)
	}
	return s.run(ctx, g.ex, d, d.Event, out)
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
	return s.run(ctx, r.ex, r.d, r.ex.ExecutionEvent(r.d), out)
}

// run executes a decision under the concurrency limit, killed when ctx
// or the service ends.
func (s *Service) run(ctx context.Context, ex *pipeline.Executor, d *pipeline.Decision, ev api.Event, out sandbox.Streams) *api.End {
	if !s.acquire() {
		max := s.gen.Load().ex.Config().Exec.Limits.MaxConcurrent
		reason := fmt.Sprintf("%d commands are already running, the limit (exec.limits.max_concurrent); try again when one has finished", max)
		ev.Decision, ev.BlockedBy, ev.Reason = "deny", ReasonConcurrency, reason
		ev.Status, ev.StatusReason = string(sandbox.StatusNeverRan), ReasonConcurrency
		aerr := ex.Record(&ev)
		s.ring.add(ev)
		return &api.End{Exit: api.ExitCannotRun, Event: &ev, Warning: warningOf(aerr),
			Error: &api.StreamError{Kind: api.ErrDenied, BlockedBy: ReasonConcurrency, Message: reason}}
	}
	defer s.release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.root, cancel)
	defer stop()

	o, err := ex.Run(ctx, d, out, ev)
	var den *pipeline.Denial
	switch {
	case errors.As(err, &den):
		if den.Event != nil {
			s.ring.add(*den.Event)
		}
		return denialEnd(den)
	case err != nil:
		return internalEnd(err)
	}
	s.ring.add(o.Event)
	res, oev := o.Result, o.Event
	end := &api.End{Exit: exitCode(o.Raw), Result: &res, Event: &oev, Warning: o.Warning}
	if o.Raw.Status == sandbox.StatusFailedToStart {
		end.Error = &api.StreamError{Kind: api.ErrFailedToStart, Message: "could not start: " + o.Raw.Error}
	}
	return end
}

func (s *Service) acquire() bool {
	max := s.gen.Load().ex.Config().Exec.Limits.MaxConcurrent
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || s.running >= max {
		return false
	}
	s.running++
	s.wg.Add(1)
	return true
}

// hold counts one more goroutine shutdown waits for, unless it has begun.
func (s *Service) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *Service) release() {
	s.mu.Lock()
	s.running--
	s.mu.Unlock()
	s.wg.Done()
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

// relayRequest is what a relay writes into its ticket's in-FIFO.
type relayRequest struct {
	Ticket string `json:"ticket"`
	PID    int    `json:"pid"`
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
	var req relayRequest
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
			s.neverRan(r, "relay_gone", "the relay went away before the command started")
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
func (s *Service) refusePending(ex *pipeline.Executor, d *pipeline.Decision, resp *api.DecideResponse, max int) {
	reason := fmt.Sprintf("%d routed commands are already waiting for their relay, the limit (exec.limits.max_pending_tickets); try again when one has run or its ticket has expired", max)
	ev := ex.ExecutionEvent(d)
	ev.Decision, ev.BlockedBy, ev.Reason = "deny", ReasonConcurrency, reason
	ev.Status, ev.StatusReason = string(sandbox.StatusNeverRan), ReasonConcurrency
	ex.Record(&ev)
	s.ring.add(ev)
	resp.Decision, resp.BlockedBy, resp.Reason, resp.Ticket = "deny", ReasonConcurrency, reason, ""
}

func dirJoin(dir, name string) string { return dir + string(os.PathSeparator) + name }

func exitCode(r *sandbox.Result) int {
	switch r.Status {
	case sandbox.StatusCompleted:
		return r.ExitCode
	case sandbox.StatusTimedOut:
		return api.ExitTimeout
	case sandbox.StatusKilled:
		return api.ExitKilled
	}
	return api.ExitCannotRun
}

func denialEnd(d *pipeline.Denial) *api.End {
	return &api.End{Exit: api.ExitCannotRun, Event: d.Event, Warning: d.Warning,
		Error: &api.StreamError{Kind: api.ErrDenied, BlockedBy: d.Code, Message: d.Reason}}
}

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

func internalEnd(err error) *api.End {
	return &api.End{Exit: api.ExitCannotRun, Error: &api.StreamError{Kind: api.ErrInternal, Message: err.Error()}}
}
