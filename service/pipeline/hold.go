package pipeline

// This file is the hold stage: a command an ask rule (or default_action or
// dynamic_action ask) holds, and a call from a directory in no workspace
// root, wait for a person's answer through the service's approvals broker
// (service/approvals), up to policy.approval_timeout_seconds. Without a
// broker (gatehouse exec with no service running) nobody can answer, and
// the call is refused.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// Denials of the hold stage.
const (
	// DenyApproval: the call needs a person's approval and no service is
	// there to ask.
	DenyApproval = "approval_required"
	// DenyApprovalDenied: a person denied it.
	DenyApprovalDenied = "approval_denied"
	// DenyApprovalTimeout: nobody answered in time.
	DenyApprovalTimeout = "approval_timeout"
	// DenyApprovalCancelled: the caller went away while it waited.
	DenyApprovalCancelled = "approval_cancelled"
	// DenyApprovalLimit: too many calls already wait.
	DenyApprovalLimit = "approval_limit"
)

// Approver asks a person about a held call and waits for the answer; the
// service's approvals.Broker is one.
type Approver interface {
	Hold(ctx context.Context, h *approvals.Hold) approvals.Outcome
}

// approvalTimeout is how long a held call waits.
func (e *Executor) approvalTimeout() time.Duration {
	return time.Duration(e.cfg.Policy.ApprovalTimeoutSeconds) * time.Second
}

// holdCommand holds a command dec asks about until a person answers; nil
// means it was approved and goes on.
func (e *Executor) holdCommand(ctx context.Context, req *api.ExecRequest, dir string, tree *analysis.Tree, dec policy.Verdict, ev *api.Event, run *decideRun) error {
	if e.opts.Approver == nil {
		return deny(ev, DenyApproval, dec.Reason+"; this needs a person's approval, which is asked through the Gatehouse service, and it is not running").
			withHint("start the service ('gatehouse service start', or 'gatehouse serve' in a terminal) and run the command again: it then waits for an answer from the tray or `gatehouse approve`")
	}
	if run.dry {
		run.held = append(run.held, dec.Reason+"; a call would wait for a person's approval (the tray, the notification or `gatehouse approve`)")
		return nil
	}
	var node *analysis.Node
	if dec.Node >= 0 && dec.Node < len(tree.Nodes) {
		node = tree.Nodes[dec.Node]
	}
	h := &approvals.Hold{
		Request: api.Approval{
			Kind: api.ApprovalCommand, DecisionID: ev.ID,
			Agent: orUnknown(req.Agent), Surface: req.Surface, SessionID: req.SessionID, Cwd: dir,
			Command: req.Command, Rule: dec.Rule, Origin: dec.Origin, Reason: dec.Reason,
			Question: fmt.Sprintf("%s wants to run `%s`", orUnknown(req.Agent), analysis.Abbrev(req.Command, 80)),
		},
		Timeout: e.approvalTimeout(),
		Matches: func(r *policy.Rule) bool { return node != nil && policy.RuleMatches(r, node) },
	}
	// A managed rule's question is IT's: a person may let this call
	// through, never save a rule around it.
	if dec.Origin != policy.OriginManaged {
		h.Save = policy.ProposeRule(tree, dec, policy.ActionAllow)
	}
	if h.Save != nil {
		h.Request.SaveRule = policy.RuleYAML(h.Save)
	}
	return e.await(ctx, h, ev)
}

// await holds h and turns its outcome into nil (approved) or the denial.
func (e *Executor) await(ctx context.Context, h *approvals.Hold, ev *api.Event) error {
	out := e.opts.Approver.Hold(ctx, h)
	rec := out.Record
	ev.Approval = &rec
	if out.Approved {
		return nil
	}
	what := "the command"
	if h.Request.Kind == api.ApprovalWorkspace {
		what = fmt.Sprintf("trusting %s as a workspace", h.Request.Workspace)
	}
	switch rec.Answer {
	case approvals.AnswerTimeout:
		return deny(ev, DenyApprovalTimeout, fmt.Sprintf("%s; nobody answered the approval request %s within %s (policy.approval_timeout_seconds), so it was not run", h.Request.Reason, rec.ID, h.Timeout)).
			withHint("answer it in the tray or with `gatehouse approve ID` while the call waits")
	case approvals.AnswerTooMany:
		return deny(ev, DenyApprovalLimit, fmt.Sprintf("%s; %d calls already wait for a person's answer, the most that may, so this one was not held", h.Request.Reason, approvals.MaxPending)).
			withHint("answer the waiting ones (gatehouse approvals), then run it again")
	case approvals.AnswerCancelled:
		return deny(ev, DenyApprovalCancelled, fmt.Sprintf("%s; the caller went away while approval request %s waited", h.Request.Reason, rec.ID))
	}
	return deny(ev, DenyApprovalDenied, fmt.Sprintf("%s; a person denied %s (approval %s, answered %s from the %s)", h.Request.Reason, what, rec.ID, rec.Answer, rec.By))
}

func orUnknown(agent string) string {
	if agent == "" {
		return "an agent"
	}
	return agent
}

// holdWorkspace asks a person about a call whose directory lies in no
// workspace root (cwdErr, from resolveCwd), and returns the roots and the
// resolved directory once approved. The directory asked about is the top
// of the git repository the call came from (the agent's project
// directory, req.ProjectDir, when the call came from inside it). Approved
// once, this call alone runs with it writable (its decision event carries
// the answer: onceRoot) and nothing is trusted; trusted (for the agent,
// or for every agent), it is a workspace root from now on. Without an
// approver, or when the directory may never be trusted, the call is
// refused cwd_outside_workspace.
func (e *Executor) holdWorkspace(ctx context.Context, req *api.ExecRequest, cwdErr error, ev *api.Event, run *decideRun) ([]string, string, error) {
	var out *outsideError
	if !errors.As(cwdErr, &out) {
		return nil, "", deny(ev, DenyCwdOutside, cwdErr.Error())
	}
	project := out.real
	if p := req.ProjectDir; p != "" {
		if real, err := filepath.EvalSymlinks(p); err == nil && sandbox.Within(out.real, real) {
			project = real
		}
	}
	top := trust.Top(project, e.opts.Home)
	if problem := e.guard().Problem(top); problem != "" {
		return nil, "", deny(ev, DenyCwdOutside, fmt.Sprintf("%s; %s cannot be trusted as a workspace: it is %s", cwdErr, top, problem)).
			withHint("run it from a directory inside a workspace root (gatehouse workspace list)")
	}
	if e.opts.Approver == nil || e.opts.Trusted == nil {
		return nil, "", deny(ev, DenyCwdOutside, cwdErr.Error()).
			withHint(fmt.Sprintf("trust the project with 'gatehouse workspace add %s', or add it to policy.workspace_roots", top))
	}
	agent := orUnknown(req.Agent)
	h := &approvals.Hold{
		Request: api.Approval{
			Kind: api.ApprovalWorkspace, DecisionID: ev.ID,
			Agent: agent, Surface: req.Surface, SessionID: req.SessionID, Cwd: out.real,
			Command: req.Command, Rule: RuleWorkspace, Origin: RuleWorkspace, Reason: cwdErr.Error(),
			Workspace: top,
			Question:  fmt.Sprintf("%s wants to work in %s, which is in no workspace root", agent, fspath.Tilde(top, e.opts.Home)),
		},
		Timeout:    e.approvalTimeout(),
		TrustAgent: req.Agent,
	}
	if run.dry {
		// Explained, the call goes on as if the person let it work there
		// once.
		run.held = append(run.held, fmt.Sprintf("%s; a call would wait for a person to let it work in %s (the tray, the notification or `gatehouse approve`)", cwdErr, top))
		ev.Approval = &api.ApprovalRecord{Kind: api.ApprovalWorkspace, Answer: api.AnswerOnce, Workspace: top}
	} else if err := e.await(ctx, h, ev); err != nil {
		return nil, "", err
	}
	roots, err := e.workspaceRoots(req.Agent)
	if err != nil {
		return nil, "", deny(ev, DenyWorkspaceRoot, err.Error())
	}
	if once := onceRoot(ev.Approval); once != "" && !slices.Contains(roots, once) {
		roots = append(roots, once) // this call's, and no other's
	}
	dir, err := e.resolveCwd(req.Cwd, roots)
	if err != nil {
		return nil, "", deny(ev, DenyCwdOutside, err.Error()+"; it was trusted, and is still not a workspace root now")
	}
	return roots, dir, nil
}

// RuleWorkspace names what holds a call from outside every workspace root.
const RuleWorkspace = "workspace"
