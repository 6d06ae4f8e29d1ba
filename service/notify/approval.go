package notify

import (
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// KindApprovalNeeded: a call waits for a person's answer.
const KindApprovalNeeded = "approval.needed"

// Actions a person may take on an approval's notification.
const (
	ActionApproveOnce = "approve-once"
	ActionDeny        = "deny"
	// ActionShow shows the whole request elsewhere (Prompter's Show).
	ActionShow = "show"
)

// CommandWidth is the most characters of a command a notification shows:
// a longer one is cut, and its notification offers no approving answer.
const CommandWidth = 80

// ApprovalText words the notification of a pending request. whole says
// whether it shows everything an approving answer would let run, escaped
// (termesc.Line): a command request whose command fits in CommandWidth. A
// workspace request shows the directory, not the command its call would
// run, so it is never whole. Only a whole notification may offer Approve
// once; otherwise the text says where to see the request whole.
func ApprovalText(a api.Approval) (title, body string, whole bool) {
	const elsewhere = "See it whole with `gatehouse approvals %s` or in the dashboard, and answer there"
	if a.Kind == api.ApprovalWorkspace {
		return fmt.Sprintf("Approval needed: %s wants to work outside every workspace", termesc.Line(a.Agent)),
			fmt.Sprintf("%s asks to work in %s, which is in no workspace root. "+elsewhere+": once (this call only) or trust it.",
				termesc.Line(a.Agent), termesc.Line(a.Workspace), a.ID), false
	}
	if a.Kind == api.ApprovalEgress {
		// The destination is what an approving answer lets through: whole
		// when it fits.
		dest := []rune(termesc.Line(a.SaveEntry))
		if len(dest) > CommandWidth {
			return fmt.Sprintf("Approval needed: %s wants to reach a destination not on the allowlist", termesc.Line(a.Agent)),
				fmt.Sprintf("%s. "+elsewhere+".", termesc.Line(a.Question), a.ID), false
		}
		title := fmt.Sprintf("Approval needed: %s wants to reach %s", termesc.Line(a.Agent), string(dest))
		if a.HostLoopback {
			// Approving needs the local-service tick: the CLI's flag, or
			// the box in the tray or the dashboard.
			return title, fmt.Sprintf("%s. Answer from the Gatehouse tray or run: gatehouse approve %s --local-service", termesc.Line(a.Question), a.ID), true
		}
		return title, fmt.Sprintf("%s. Answer from the Gatehouse tray or run: gatehouse approve %s", termesc.Line(a.Question), a.ID), true
	}
	cmd := []rune(termesc.Line(a.Command))
	short, whole := string(cmd), len(cmd) <= CommandWidth
	if !whole {
		short = string(cmd[:CommandWidth-1]) + "…"
	}
	title = fmt.Sprintf("Approval needed: %s wants to run `%s`", termesc.Line(a.Agent), short)
	why := a.Reason
	if i := strings.Index(why, ": "); i >= 0 && a.Origin != "" {
		why = why[i+2:] // the rule's own reason, after what it matched
	}
	if !whole {
		body = fmt.Sprintf("The command is longer than a notification shows. "+elsewhere+". Held by %s (%s).",
			a.ID, termesc.Line(a.Rule), termesc.Line(why))
		return title, body, false
	}
	body = fmt.Sprintf("Held by %s (%s). Answer from the Gatehouse tray or run: gatehouse approve %s", termesc.Line(a.Rule), termesc.Line(why), a.ID)
	return title, body, true
}

// An Answerer answers a pending request from a notification's action.
type Answerer func(api.AnswerRequest) api.AnswerResponse

// A Prompter raises an approval's notification, with the platform's
// actions (Approve once, Deny) where it has them, and withdraws it when
// the request is no longer pending. It is safe for concurrent use.
type Prompter interface {
	Open(a api.Approval, answer Answerer) error
	Close(id string)
}

// PlainPrompter raises the notification through a Sender, without
// actions: the person answers from the tray or the CLI, which the text
// says.
type PlainPrompter struct{ Sender Sender }

// Open implements Prompter.
func (p PlainPrompter) Open(a api.Approval, _ Answerer) error {
	s := p.Sender
	if s == nil {
		s = Desktop{}
	}
	title, body, _ := ApprovalText(a)
	return s.Send(title, body)
}

// Close implements Prompter; a plain notification stays until dismissed.
func (PlainPrompter) Close(string) {}
