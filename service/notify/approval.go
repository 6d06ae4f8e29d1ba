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
)

// ApprovalText words the notification of a pending request.
func ApprovalText(a api.Approval) (title, body string) {
	if a.Kind == api.ApprovalWorkspace {
		return "Approval needed: trust a workspace?",
			fmt.Sprintf("%s asks to work in %s, which is in no workspace root. Answer from the Gatehouse tray or run: gatehouse approve %s",
				a.Agent, termesc.String(a.Workspace), a.ID)
	}
	cmd := []rune(termesc.String(a.Command))
	short := string(cmd)
	if len(cmd) > 80 {
		short = string(cmd[:79]) + "…"
	}
	title = fmt.Sprintf("Approval needed: %s wants to run `%s`", a.Agent, short)
	why := a.Reason
	if i := strings.Index(why, ": "); i >= 0 && a.Origin != "" {
		why = why[i+2:] // the rule's own reason, after what it matched
	}
	body = fmt.Sprintf("Held by %s (%s). Answer from the Gatehouse tray or run: gatehouse approve %s", a.Rule, termesc.String(why), a.ID)
	return title, body
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
	title, body := ApprovalText(a)
	return s.Send(title, body)
}

// Close implements Prompter; a plain notification stays until dismissed.
func (PlainPrompter) Close(string) {}
