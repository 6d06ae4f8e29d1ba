package pipeline

// This file is the one translation from what the order returned to how a
// call ended on the wire (api.End): its exit status, message and remedy.
// Every face — the service's execute and redeem, the hook's decide, the
// in-process gatehouse exec, MCP — turns an outcome into an end here, so
// that one status and one reason mean one exit code and one remedy
// everywhere.

import (
	"errors"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// ExitArgument is the exit status of a call with a bad argument: nothing
// ran (the usage status of a command line).
const ExitArgument = 2

// EndOf returns how a call that returned o and err (Execute or Run)
// ended. A *Denial or *ArgError means nothing ran; another error is
// Gatehouse's own failure.
func EndOf(o *Outcome, err error) *api.End {
	var ae *ArgError
	var den *Denial
	switch {
	case errors.As(err, &ae):
		return &api.End{Exit: ExitArgument, Error: &api.StreamError{Kind: api.ErrArgument, Arg: ae.Arg, Message: ae.Msg}}
	case errors.As(err, &den):
		return DenialEnd(den)
	case err != nil:
		return InternalEnd(err)
	}
	res, ev := o.Result, o.Event
	end := &api.End{Exit: ExitOf(o.Raw), Result: &res, Event: &ev, Warning: o.Warning}
	if o.Raw.Status == sandbox.StatusFailedToStart {
		end.Error = &api.StreamError{Kind: api.ErrFailedToStart, Message: "could not start: " + o.Raw.Error}
	}
	return end
}

// DenialEnd is the end of a call the order refused: nothing ran.
func DenialEnd(d *Denial) *api.End {
	return &api.End{Exit: api.ExitCannotRun, Event: d.Event, Warning: d.Warning,
		Error: &api.StreamError{Kind: api.ErrDenied, BlockedBy: d.Code, Message: d.Reason, Hint: Remedy(d.Code, d.Hint)}}
}

// InternalEnd is the end of a call Gatehouse itself failed.
func InternalEnd(err error) *api.End { return api.InternalEnd(err) }

// ExitOf is the exit status of a run: the command's own when it
// completed, ExitTimeout, ExitKilled, or ExitCannotRun when it never got
// to an end of its own (mvdan/sh's DefaultExecHandler is the shape).
func ExitOf(r *sandbox.Result) int {
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

// Remedy is what a person can do about a denial with code: the stage's own
// remedy (stage) when it gave one, else the one for code; "" when there is
// none.
func Remedy(code, stage string) string {
	if stage != "" {
		return stage
	}
	switch code {
	case DenySandboxUnavailable, DenyAuditUnavailable:
		return "run 'gatehouse doctor' to see why and how to fix it"
	case DenyCwdOutside:
		return "use a directory inside a workspace root (gatehouse workspace list), or trust the project with gatehouse workspace add DIR"
	case DenyPolicyRule, DenyDefault, DenyDynamic, DenyApproval, DenyParseError:
		return "run 'gatehouse explain' with the same command to see its tree and the rule that decided"
	case DenyModified:
		return "a script the command runs changed after it was judged; run the command again"
	case DenyAnalysisOff:
		return "set policy.command_analysis_mode: enforce"
	}
	return ""
}
