package service

// This file keeps the service's part of "nothing lost": a decision the
// agent acts on alone is on the record before the answer, what went
// unrecorded is carried back as a warning, and what a previous service
// left open is closed at start (Options.Reconcile).

import (
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
)

// recordDecision records an allowed decision before the caller is
// answered: for a call that is not routed it is the only record of a
// command the agent runs itself, and a routed one must be on the record
// before its ticket exists. When it cannot be written the call is denied
// audit_unavailable, or under policy.audit_required false allowed with a
// warning.
func (s *Service) recordDecision(ex *pipeline.Executor, ev api.Event, resp *api.DecideResponse) *api.DecideResponse {
	err := ex.Record(&ev)
	if err == nil {
		s.ring.add(ev)
		return resp
	}
	if !ex.Config().Policy.AuditRequired {
		s.ring.add(ev)
		resp.Warning = warningOf(err)
		return resp
	}
	reason := "the audit record could not be written (" + err.Error() + "), so the command may not run; free space in Gatehouse's state directory or repair its audit database, then try again"
	ev.Decision, ev.BlockedBy, ev.Reason = api.DecisionDeny, pipeline.DenyAuditUnavailable, reason
	s.ring.add(ev)
	resp.Decision, resp.BlockedBy, resp.Reason = api.DecisionDeny, pipeline.DenyAuditUnavailable, reason
	resp.TimeoutSeconds = 0
	return resp
}

// warningOf is the warning of an event that could not be recorded; "" for
// a nil error.
func warningOf(err error) string {
	if err == nil {
		return ""
	}
	return "this call is not on the audit record: " + err.Error()
}
