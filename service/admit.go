package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/localserver"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/tickets"
)

// Status reasons of executions the service itself refused or never ran
// (service/api's names).
const (
	ReasonConcurrency   = api.StatusReasonConcurrencyLimit
	ReasonTicketExpired = api.StatusReasonTicketExpired
	ReasonServiceStop   = api.StatusReasonServiceStopped
)

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
		resp.Decision, resp.BlockedBy, resp.Reason, resp.Hint = api.DecisionDeny, den.Code, den.Reason, den.Hint
		resp.Warning = den.Warning
		if den.Event != nil {
			resp.EventID = den.Event.ID
			s.ring.add(*den.Event)
		}
		return resp, nil
	case errors.As(err, &ae):
		resp.Decision, resp.BlockedBy = api.DecisionDeny, "invalid_argument"
		resp.Reason = fmt.Sprintf("argument %s", ae.Error())
		return resp, nil
	case err != nil:
		return nil, err
	}
	resp.Decision, resp.EventID, resp.TimeoutSeconds = api.DecisionAllow, d.Event.ID, d.Event.TimeoutSeconds
	// The decision is on the record before the answer (auditgate.go): a
	// routed one stays open there until its execution is recorded.
	d.Event.Routed = req.Route && resp.Routing == api.RoutingGovernedShell
	if resp = s.recordDecision(g.ex, d.Event, resp); resp.Decision != api.DecisionAllow {
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
			s.neverRan(r, api.StatusReasonRelayUnavailable, "the relay could not be prepared: "+err.Error())
			s.wg.Done()
			return nil, err
		}
		resp.Ticket, resp.ExpiresAt = t, exp.UTC()
		go s.awaitRelay(name, r.in, exp)
	}
	return resp, nil
}

// Execute decides req and runs it at once, streaming to out. A held call
// tells the person waiting (localserver.Notices) that it waits, and for what.
func (s *Service) Execute(ctx context.Context, req api.ExecRequest, out sandbox.Streams) *api.End {
	if w := localserver.Notices(ctx); w != nil {
		ctx = approvals.WithWaiting(ctx, func(a api.Approval) { fmt.Fprint(w, WaitingLine(a)) })
	}
	g := s.gen.Load()
	d, err := g.ex.Decide(ctx, req)
	var den *pipeline.Denial
	switch {
	case errors.As(err, &den):
		if den.Event != nil {
			s.ring.add(*den.Event)
		}
		return pipeline.DenialEnd(den)
	case err != nil:
		return pipeline.EndOf(nil, err)
	}
	return s.run(ctx, g.ex, d, d.Event, out)
}

// run executes a decision under the concurrency limit, killed when ctx
// or the service ends.
func (s *Service) run(ctx context.Context, ex *pipeline.Executor, d *pipeline.Admitted, ev api.Event, out sandbox.Streams) *api.End {
	if !s.acquire() {
		max := s.gen.Load().ex.Config().Exec.Limits.MaxConcurrent
		reason := fmt.Sprintf("%d commands are already running, the limit (exec.limits.max_concurrent); try again when one has finished", max)
		ev.Decision, ev.BlockedBy, ev.Reason = api.DecisionDeny, ReasonConcurrency, reason
		ev.Status, ev.StatusReason = string(sandbox.StatusNeverRan), ReasonConcurrency
		aerr := ex.Record(&ev)
		s.ring.add(ev)
		return &api.End{Exit: api.ExitCannotRun, Event: &ev, Warning: warningOf(aerr),
			Error: &api.StreamError{Kind: api.ErrDenied, BlockedBy: ReasonConcurrency, Message: reason}}
	}
	defer s.release()
	s.hub.event(api.NoticeExecutionStarted, ev)
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
	case err == nil:
		s.ring.add(o.Event)
	}
	return pipeline.EndOf(o, err)
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
