package pipeline

// This file is the egress hold: under policy.egress_unknown: ask, a
// running command's connection to a destination no allowlist entry covers
// waits (in the execution's proxy, sandbox/egress/ask.go) for a person's
// answer through the same broker as held commands, up to
// policy.egress_approval_timeout_seconds. Ask takes effect only when a
// person can answer: the executor has an Approver (the service), and
// either the call's person waits at a terminal (ExecRequest.Interactive)
// or someone follows the service (a tray, a dashboard page: Attended).
// Otherwise (gatehouse exec in process, headless, a service nobody
// watches) such a destination is refused as under deny. A managed allowlist bounds what an answer may grant: a
// destination outside it is refused at once, and nobody is asked. Each
// answer is on the execution's event (egress.approved).
//
// A destination on the host's own loopback (an IP literal or localhost:
// the proxy flags it, Destination.HostLoopback) is a service on this
// machine, outside the sandbox: its question warns, and the broker lets
// it through only with the person's local-service tick, which the verdict
// carries to the proxy (approvals.Outcome.LocalService). A destination
// one of a preset's hosts offers the preset answer, for the agent that
// asked.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// RuleEgressUnknown names what holds a connection to a destination no
// allowlist entry covers.
const RuleEgressUnknown = "egress_unknown"

// egressAnswers collects an execution's egress answers for its event.
type egressAnswers struct {
	mu   sync.Mutex
	list []api.EgressApproval
}

func (a *egressAnswers) add(x api.EgressApproval) {
	a.mu.Lock()
	a.list = append(a.list, x)
	a.mu.Unlock()
}

func (a *egressAnswers) all() []api.EgressApproval {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]api.EgressApproval(nil), a.list...)
}

// egressAsking reports whether a destination no entry covers, reached by
// req's command, is asked about rather than refused: under
// egress_unknown ask, when a person can answer — the call's own person
// waits at a terminal, or the Approver says someone follows it (a tray or
// a dashboard page, Attended). Otherwise it is refused at once, as under
// deny: nobody would see the question before it timed out.
func (e *Executor) egressAsking(req *api.ExecRequest) bool {
	if e.cfg.Policy.EgressUnknown != policy.EgressAsk || e.opts.Approver == nil {
		return false
	}
	if a, ok := e.opts.Approver.(Attended); ok && !req.Interactive {
		return a.Attended()
	}
	return true
}

// Attended is an Approver that knows whether a person follows its
// questions now.
type Attended interface {
	Attended() bool
}

// egressAsk returns the execution's proxy's Ask: it asks a person about a
// destination of req's command (run in dir) and records the answer in
// answers. ctx is the execution's: its values (who waits, and where to
// tell them) go with the question.
func (e *Executor) egressAsk(ctx context.Context, req *api.ExecRequest, dir, field string, ev *api.Event, answers *egressAnswers) func(context.Context, egress.Destination) egress.Verdict {
	agent := orUnknown(req.Agent)
	return func(pctx context.Context, d egress.Destination) egress.Verdict {
		dest := d.String()
		if m := e.cfg.ManagedEgress; !m.Allows(req.Agent, dest) {
			_, mfield, _ := m.Bound(req.Agent)
			return egress.Verdict{Rule: "managed_bound",
				Reason: fmt.Sprintf("%s is not allowed by the managed %s (%s), so no approval is asked", dest, mfield, m.File)}
		}
		question := fmt.Sprintf("%s wants to reach %s (during `%s`, in %s)", agent, dest, analysis.Abbrev(req.Command, 60), fspath.Tilde(dir, e.opts.Home))
		if d.Literal {
			question += "; it is an IP address, and an answer allows that address only"
		}
		if d.HostLoopback {
			question += "; warning: it is this machine's own loopback, so approving lets the command reach a service running on this machine, outside the sandbox (tick \"this is a service on my machine\" to approve)"
		}
		preset, isPreset := policy.EgressPresetOf(dest)
		h := &approvals.Hold{
			Request: api.Approval{
				Kind: api.ApprovalEgress, DecisionID: ev.ID,
				Agent: agent, Surface: req.Surface, SessionID: req.SessionID, Cwd: dir,
				Command: req.Command, Rule: RuleEgressUnknown, Origin: "policy.egress_unknown",
				Reason:   fmt.Sprintf("%s is not on %s", dest, field),
				Question: question,
				Host:     d.Host, Port: int(d.Port), Literal: d.Literal, SaveEntry: dest,
				HostLoopback: d.HostLoopback,
			},
			Timeout: time.Duration(e.cfg.Policy.EgressApprovalTimeoutSeconds) * time.Second,
		}
		if isPreset {
			h.Request.Preset = preset.Name
			h.PresetAgent = req.Agent // "": no preset answer
		}
		// The hold ends when the execution's proxy does, or its caller
		// goes away.
		hctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(pctx, cancel)
		defer stop()
		out := e.opts.Approver.Hold(hctx, h)
		rec := out.Record
		answers.add(api.EgressApproval{Host: d.Host, Port: int(d.Port), Answer: rec.Answer, By: rec.By, ID: rec.ID, SavedEntry: rec.SavedEntry, SavedFile: rec.SavedFile})
		if out.Approved {
			return egress.Verdict{Allow: true, LocalService: out.LocalService}
		}
		switch rec.Answer {
		case approvals.AnswerTimeout:
			return egress.Verdict{Rule: DenyApprovalTimeout,
				Reason: fmt.Sprintf("nobody answered approval request %s about %s within %s (policy.egress_approval_timeout_seconds)", rec.ID, dest, h.Timeout)}
		case approvals.AnswerTooMany:
			return egress.Verdict{Rule: DenyApprovalLimit,
				Reason: fmt.Sprintf("%d requests already wait for a person's answer, the most that may, so %s was not asked about", approvals.MaxPending, dest)}
		case approvals.AnswerCancelled:
			return egress.Verdict{Rule: DenyApprovalCancelled,
				Reason: fmt.Sprintf("the command ended while approval request %s about %s waited", rec.ID, dest)}
		}
		return egress.Verdict{Rule: DenyApprovalDenied,
			Reason: fmt.Sprintf("a person denied %s (approval %s, answered %s from the %s)", dest, rec.ID, rec.Answer, rec.By)}
	}
}

// egressDenylist returns policy.egress_denylist's entries and their field,
// for the proxy.
func (e *Executor) egressDenylist() ([]egress.Entry, []string, error) {
	var list []egress.Entry
	var fields []string
	for i, s := range e.cfg.Policy.EgressDenylist {
		d, err := egress.ParseEntry(s)
		if err != nil {
			return nil, nil, fmt.Errorf("policy.egress_denylist[%d]: %q %w", i, s, err)
		}
		list = append(list, d)
		fields = append(fields, "policy.egress_denylist")
	}
	return list, fields, nil
}
