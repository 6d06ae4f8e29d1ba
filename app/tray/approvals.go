package tray

// The Approvals submenu: one submenu per pending request, showing what is
// asked whole and offering only the answers the request offers.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

func approvalsItem(s State, down bool) Item {
	it := Item{Key: KeyApprovals, Label: fmt.Sprintf("Approvals (%d)", len(s.Approvals)), Hidden: down, Disabled: len(s.Approvals) == 0}
	for i, a := range s.Approvals {
		if i == MaxApprovals {
			it.Children = append(it.Children, Item{Disabled: true,
				Label: fmt.Sprintf("%s more: gatehouse approvals lists them", plural(len(s.Approvals)-MaxApprovals, "approval"))})
			break
		}
		it.Children = append(it.Children, approvalItem(a))
	}
	return it
}

// answerLabels are the answers the tray offers, with their labels; a
// workspace request's are answerLabel's.
var answerLabels = map[string]string{
	api.AnswerOnce:       "Approve once",
	api.AnswerSession:    "Approve for session",
	api.AnswerAlways:     "Always…",
	api.AnswerDeny:       "Deny",
	api.AnswerDenyAlways: "Deny always…",
	api.AnswerTrust:      "Trust this directory for %s",
	api.AnswerTrustAll:   "Trust this directory for every agent",
}

// answerLabel is the label of the answer ans to a, or "" when the tray
// does not know it.
func answerLabel(a api.Approval, ans string) string {
	switch {
	case a.Kind == api.ApprovalWorkspace && ans == api.AnswerOnce:
		return "Approve once (this call only, nothing trusted)"
	case a.Kind == api.ApprovalEgress && ans == api.AnswerOnce:
		return "Allow for this command" + localService(a)
	case a.Kind == api.ApprovalEgress && ans == api.AnswerSession:
		return "Allow for this session" + localService(a)
	case a.Kind == api.ApprovalEgress && ans == api.AnswerAlways && len(a.Entries) > 0:
		return "Always allow…" + localService(a)
	case a.Kind == api.ApprovalEgress && ans == api.AnswerAlways:
		return "Always allow " + Shorten(a.SaveEntry, commandWidth) + localService(a)
	case a.Kind == api.ApprovalEgress && ans == api.AnswerDenyAlways && len(a.Entries) > 0:
		return "Always deny…"
	case a.Kind == api.ApprovalEgress && ans == api.AnswerDenyAlways:
		return "Always deny " + Shorten(a.SaveEntry, commandWidth)
	case ans == api.AnswerPreset:
		what := "the " + Shorten(a.Preset, 16) + " preset's"
		if p, ok := policy.EgressPresetNamed(a.Preset); ok {
			what = p.What
		}
		return "Allow " + what + " hosts for " + Shorten(a.Agent, 24) + localService(a)
	case ans == api.AnswerTrust:
		return fmt.Sprintf(answerLabels[ans], Shorten(a.Agent, 24))
	}
	return answerLabels[ans]
}

// localService is what an allowing answer's label adds for a request to
// the host's loopback: a click on it is the person's tick on "this is a
// service on my machine".
func localService(a api.Approval) string {
	if a.HostLoopback {
		return " (a service on my machine)"
	}
	return ""
}

// entryPicks are the items of Always allow… and Always deny… when the
// service offers *.domain entries (api.Approval.Entries): the exact
// destination first, then the entries as the service gives them, the
// widest maxEntryPicks of them, each saving itself.
func entryPicks(a api.Approval, act Action) []Item {
	list := "policy.egress_allowlist"
	if act.Answer == api.AnswerDenyAlways {
		list = "policy.egress_denylist"
	}
	item := func(label, entry string) Item {
		act := act
		act.Entry = entry
		return Item{Label: label, Tooltip: "saves " + Escape(cmp.Or(entry, a.SaveEntry)) + " in " + list + " of the saved rules file", Action: act}
	}
	out := []Item{item(Shorten(a.SaveEntry, commandWidth)+" (exactly this destination)", "")}
	entries := a.Entries
	if n := len(entries) - maxEntryPicks; n > 0 {
		more := fmt.Sprintf("%d narrower entries", n)
		if n == 1 {
			more = "1 narrower entry"
		}
		out = append(out, Item{Label: more + ": in the dashboard, or gatehouse approve --entry", Disabled: true})
		entries = entries[n:]
	}
	for _, e := range entries {
		out = append(out, item(Shorten(e, commandWidth), e))
	}
	return out
}

// ruleAnswers are the answers whose effect is the request's rule: a
// session grant covers what it matches, always and deny always save it.
var ruleAnswers = []string{api.AnswerSession, api.AnswerAlways, api.AnswerDenyAlways}

// approvalItem is one request's submenu: what is asked, by whom and
// where, the command whole (and a workspace request's directory), then
// the answers it offers, in its order. Before the first answer whose
// effect is the rule (Approve for session, Always…, Deny always…), the
// rule is shown whole, exactly as it will be granted or saved.
//
// An answer that lets something run is offered only when the submenu
// shows all of it: a command (or directory) longer than maxCommandLines
// lines offers Deny and Show alone, and a rule longer than maxRuleLines
// lines drops the answers that use it. Show opens the dashboard, where
// the request is shown whole.
func approvalItem(a api.Approval) Item {
	label := a.Command
	switch a.Kind {
	case api.ApprovalWorkspace:
		label = "Work in " + a.Workspace
	case api.ApprovalEgress:
		label = "Reach " + a.SaveEntry
	}
	it := Item{Label: Shorten(label, commandWidth), Tooltip: Escape(a.Reason)}
	question := a.Question
	if question == "" {
		question = a.Reason
	}
	it.Children = append(it.Children,
		Item{Label: Shorten(question, lineWidth), Disabled: true},
		Item{Label: Shorten(fmt.Sprintf("%s in %s", a.Agent, a.Cwd), lineWidth), Disabled: true},
	)
	if a.HostLoopback {
		it.Children = append(it.Children,
			Item{Label: "⚠ " + Shorten(a.SaveEntry, commandWidth) + " is a service on this machine, outside the sandbox", Disabled: true},
			Item{Label: "Clicking an item marked (a service on my machine) says you know it", Disabled: true})
	}
	whole := true
	if a.Kind == api.ApprovalWorkspace {
		lines, ok := wrapLines("Directory:", a.Workspace, 2)
		it.Children = append(it.Children, lines...)
		whole = whole && ok
	}
	budget := maxCommandLines
	if a.Kind == api.ApprovalWorkspace {
		budget -= 2
	}
	lines, ok := wrapLines("Command:", a.Command, budget)
	it.Children = append(it.Children, lines...)
	whole = whole && ok

	rule, ruleWhole := []Item(nil), false
	if a.SaveRule != "" {
		rule, ruleWhole = ruleLines(a)
	}
	ruleShown := false
	for _, ans := range a.Answers {
		label := answerLabel(a, ans)
		if label == "" || !whole && ans != api.AnswerDeny {
			continue
		}
		usesRule := slices.Contains(ruleAnswers, ans) && a.SaveRule != ""
		if usesRule && !ruleShown {
			ruleShown = true
			it.Children = append(it.Children, rule...)
		}
		if usesRule && !ruleWhole {
			continue
		}
		item := Item{Label: label, Action: Action{Kind: ActAnswer, ID: a.ID, Answer: ans, LocalService: a.HostLoopback && api.Lets(ans)}}
		if usesRule {
			item.Tooltip = "rule: " + Escape(strings.TrimSpace(a.SaveRule))
		}
		if a.Kind == api.ApprovalEgress && len(a.Entries) > 0 && (ans == api.AnswerAlways || ans == api.AnswerDenyAlways) {
			item.Children, item.Action = entryPicks(a, item.Action), Action{}
		}
		it.Children = append(it.Children, item)
	}
	if !whole || ruleShown && !ruleWhole {
		it.Children = append(it.Children, Item{Label: "Show in the dashboard…", Tooltip: "the whole request, and every answer; or run gatehouse approvals " + a.ID,
			Action: Action{Kind: ActOpenDashboard}})
	}
	return it
}

// wrapLines shows text (escaped) under header in lines of lineWidth,
// whole: at most n lines. When it needs more, it reports false and shows
// one line saying so instead.
func wrapLines(header, text string, n int) ([]Item, bool) {
	r := []rune(termesc.Line(text))
	width := lineWidth - 4
	if (len(r)+width-1)/width > n {
		return []Item{{Label: fmt.Sprintf("%s %d characters, too long to show here: answer it in the dashboard or with gatehouse approvals", header, len(r)), Disabled: true}}, false
	}
	out := []Item{{Label: header, Disabled: true}}
	for len(r) > 0 {
		k := min(width, len(r))
		out = append(out, Item{Label: "    " + string(r[:k]), Disabled: true})
		r = r[k:]
	}
	return out, true
}

// ruleLines are the header and the lines of the rule a's session grant
// covers and its always or deny_always saves, whole, and true; or one line
// saying it is too long to show, and false.
func ruleLines(a api.Approval) ([]Item, bool) {
	var names []string
	for _, ans := range ruleAnswers {
		if slices.Contains(a.Answers, ans) {
			names = append(names, strings.TrimSuffix(answerLabels[ans], "…"))
		}
	}
	verb := " saves"
	switch {
	case slices.Contains(a.Answers, api.AnswerSession) && len(names) > 1:
		verb = " use"
	case slices.Contains(a.Answers, api.AnswerSession):
		verb = " grants"
	case len(names) > 1:
		verb = " save"
	}
	header := strings.Join(names, ", ")
	if i := strings.LastIndex(header, ", "); i >= 0 {
		header = header[:i] + " and " + header[i+2:]
	}
	header += verb + " this rule:"
	var out []Item
	whole := true
	for _, l := range strings.Split(strings.TrimRight(a.SaveRule, "\n"), "\n") {
		lines, ok := wrapLines("", l, maxRuleLines)
		whole = whole && ok
		out = append(out, lines[1:]...)
	}
	if !whole || len(out) > maxRuleLines {
		return []Item{{Label: fmt.Sprintf("%s %d lines, too long to show here", strings.TrimSuffix(header, ":"), len(out)), Disabled: true}}, false
	}
	return append([]Item{{Label: header, Disabled: true}}, out...), true
}

// pickItems is the most items a pick submenu holds: the exact
// destination, a line saying how many more, maxEntryPicks entries.
const pickItems = 2 + maxEntryPicks

// afterPick is the most items that follow a pick submenu in an
// approval's submenu: the other answers (one of them perhaps the other
// pick submenu) and Show.
const afterPick = 6

// approvalShape is how the binding allocates one approval's submenu, in
// order: false for an item, true for one holding a submenu of pickItems
// items. An item that ever held a submenu is drawn as one (an arrow, no
// click), so answers and pick submenus get places of their own: room for
// a whole submenu without picks, then for each of Always allow… and
// Always deny… a place, followed by room for what may come after it.
func approvalShape() []bool {
	shape := make([]bool, approvalLines)
	for range 2 {
		shape = append(shape, true)
		shape = append(shape, make([]bool, afterPick)...)
	}
	return shape
}

// place gives each of items, in order, a place in shape of its kind (a
// submenu or not), after the place of the one before: at[i] is item i's
// place, -1 when none was left, and ok says every item got one.
func place(shape []bool, items []Item) (at []int, ok bool) {
	at, ok = make([]int, len(items)), true
	j := 0
	for i, it := range items {
		sub := len(it.Children) > 0
		for j < len(shape) && shape[j] != sub {
			j++
		}
		if j == len(shape) {
			at[i], ok = -1, false
			continue
		}
		at[i] = j
		j++
	}
	return at, ok
}
