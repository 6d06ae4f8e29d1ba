// Package tray is the menu-bar app, gatehouse tray: a thin client of the
// service's admission API that shows at a glance whether commands are
// sandboxed, lists the approvals waiting, the recent executions and the
// agent sessions' ports, answers approvals and opens a session's port on
// this machine when the person asks (docs/tray.md).
//
// The menu is a pure function of what the tray knows (State) to a tree of
// labelled items (Menu); the systray binding only shows, hides and
// relabels the items it allocated up front.
package tray

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// How much of each list the menu shows. The binding allocates this many
// items up front; the model never gives more.
const (
	// MaxApprovals approvals get a submenu each; a line says how many
	// more wait.
	MaxApprovals = 8
	// MaxRecent executions are listed.
	MaxRecent = 10
	// MaxWorkspaces workspaces are listed; a line says how many more.
	MaxWorkspaces = 10
	// maxCommandLines lines show a request's command (and a workspace
	// request's directory), whole: one that needs more is not approved
	// from the tray.
	maxCommandLines = 4
	// maxRuleLines lines show the rule Approve for session grants and
	// Always saves, whole: one that needs more offers neither here.
	maxRuleLines = 10
	// approvalLines is the most items one approval's submenu holds: the
	// question, who asks and where, the two lines of a host-loopback
	// destination's warning, the command's header and lines, the
	// directory's, or a line saying it is too long; the rule's header and
	// lines, or a line saying it is too long; the six answers a request
	// may offer and Show.
	approvalLines = 2 + 2 + 1 + maxCommandLines + 1 + maxRuleLines + 7
	// maxEntryPicks entries of the *.domain ones an egress request offers
	// are listed under Always allow… and Always deny…, the widest ones;
	// a line says how many more the dashboard offers.
	maxEntryPicks = 10
)

// Label widths, in characters.
const (
	commandWidth = 48
	lineWidth    = 72
)

// State is what the tray knows of the service. The zero State is a tray
// that has not reached the service yet.
type State struct {
	// Tried is set once the first attempt to reach the service ended.
	Tried bool
	// Connected says whether the service answers; Stopping that it said
	// it is stopping.
	Connected bool
	Stopping  bool
	Status    api.Status
	// Approvals are the pending requests, oldest first.
	Approvals []api.Approval
	// Recent are the latest shell executions, newest first, at most
	// MaxRecent.
	Recent     []api.Event
	Workspaces []api.Workspace
	// Sessions are the agent sessions' networks, as GET /v1/ports lists
	// them (oldest first).
	Sessions []api.SessionNetwork
	// DoctorRunning is set while gatehouse doctor runs; Report is the
	// file the last run's report was written to.
	DoctorRunning bool
	Report        string
}

// Apply folds one notice of the live stream into s. It reports whether
// the pending approvals or the workspaces should be fetched again: the
// counts the service gave differ from what s holds, or a workspace was
// trusted.
func (s *State) Apply(n api.StreamNotice) (refetchApprovals, refetchWorkspaces bool) {
	switch n.Type {
	case api.NoticeService:
		s.Stopping = n.State == "stopping"
		if n.Status != nil {
			s.Status = *n.Status
			refetchApprovals = n.Status.Approvals != len(s.Approvals)
			refetchWorkspaces = n.Status.Workspaces != len(s.Workspaces)
		}
		if n.Sandbox != nil {
			s.Status.Sandbox = *n.Sandbox
		}
	case api.NoticeSandbox:
		if n.Sandbox != nil {
			s.setSandbox(*n.Sandbox)
		}
	case api.NoticeApprovalOpened:
		if n.Approval != nil {
			s.openApproval(*n.Approval)
		}
	case api.NoticeApprovalAnswered:
		if n.Approval != nil {
			s.RemoveApproval(n.Approval.ID)
			refetchWorkspaces = n.Approval.Kind == api.ApprovalWorkspace
		}
	case api.NoticeExecutionStarted, api.NoticeExecutionEnded:
		if n.Event != nil {
			s.AddEvent(*n.Event)
		}
	}
	return refetchApprovals, refetchWorkspaces
}

// setSandbox takes the sandbox a command got: its mode and error replace
// the ones held, and its backend and reason when it names them.
func (s *State) setSandbox(sb api.SandboxStatus) {
	cur := &s.Status.Sandbox
	cur.Mode, cur.Error = sb.Mode, sb.Error
	if sb.Backend != "" {
		cur.Backend = sb.Backend
	}
	if sb.Why != "" {
		cur.Why = sb.Why
	}
}

func (s *State) openApproval(a api.Approval) {
	for i := range s.Approvals {
		if s.Approvals[i].ID == a.ID {
			s.Approvals[i] = a
			return
		}
	}
	s.Approvals = append(s.Approvals, a)
}

// RemoveApproval drops the request id, when s holds it.
func (s *State) RemoveApproval(id string) {
	s.Approvals = slices.DeleteFunc(s.Approvals, func(a api.Approval) bool { return a.ID == id })
}

// AddEvent puts a shell execution's event at the top of Recent. It
// replaces the row of the same event (an execution that started and has
// now ended) or of its decision (a routed command whose relay has now
// run it). Other actions (file tools) are not executions and are left out.
func (s *State) AddEvent(ev api.Event) {
	if ev.ActionType != "" && ev.ActionType != api.ActionShellExecute {
		return
	}
	s.Recent = slices.DeleteFunc(s.Recent, func(r api.Event) bool {
		return r.ID == ev.ID || ev.ParentID != "" && r.ID == ev.ParentID
	})
	s.Recent = slices.Insert(s.Recent, 0, ev)
	if len(s.Recent) > MaxRecent {
		s.Recent = s.Recent[:MaxRecent]
	}
}

// SetEvents replaces Recent with events, newest first as the service
// lists them.
func (s *State) SetEvents(events []api.Event) {
	s.Recent = nil
	for _, ev := range slices.Backward(events) {
		s.AddEvent(ev)
	}
}

// Event returns the event id of Recent.
func (s *State) Event(id string) (api.Event, bool) {
	for _, ev := range s.Recent {
		if ev.ID == id {
			return ev, true
		}
	}
	return api.Event{}, false
}

// Icon is the state the tray's icon shows.
type Icon int

const (
	// IconDown: the service does not answer.
	IconDown Icon = iota
	// IconProtected: commands run in the full sandbox.
	IconProtected
	// IconDegraded: commands run without the sandbox, or without its
	// seccomp filter.
	IconDegraded
	// IconDenied: no sandbox is available and commands are refused.
	IconDenied
)

func (i Icon) String() string {
	return [...]string{"down", "protected", "degraded", "denied"}[i]
}

// IconOf returns the icon s shows, and whether it carries the badge of an
// approval waiting.
func IconOf(s State) (Icon, bool) {
	badge := len(s.Approvals) > 0
	if !s.Connected {
		return IconDown, badge
	}
	sb := s.Status.Sandbox
	switch sandbox.Mode(sb.Mode) {
	case sandbox.ModeBubblewrap, sandbox.ModeSeatbelt:
		if sb.Error != "" {
			return IconDenied, badge
		}
		return IconProtected, badge
	case sandbox.ModeNone, sandbox.ModeBubblewrapNoSeccomp:
		return IconDegraded, badge
	}
	// unavailable_denied, an error, or no mode at all.
	return IconDenied, badge
}

// IconFile is the embedded icon (assets.TrayIcons) for icon, badge and a
// light or dark panel.
func IconFile(icon Icon, badge, dark bool) string {
	name := "tray/" + icon.String()
	if badge {
		name += "-badge"
	}
	if dark {
		return name + "-dark.png"
	}
	return name + "-light.png"
}

// Tooltip is the one line the icon's tooltip says.
func Tooltip(s State) string {
	icon, _ := IconOf(s)
	var b strings.Builder
	b.WriteString("Gatehouse: ")
	switch icon {
	case IconDown:
		b.WriteString("service down")
	case IconProtected:
		b.WriteString("protected")
	case IconDegraded:
		b.WriteString("degraded, commands run without the full sandbox")
	case IconDenied:
		b.WriteString("no sandbox, commands are refused")
	}
	if n := len(s.Approvals); n > 0 {
		fmt.Fprintf(&b, "; %s waiting", plural(n, "approval"))
	}
	return b.String()
}

// Keys of the top-level items, in menu order.
const (
	KeyService    = "service"
	KeySandbox    = "sandbox"
	KeyRouting    = "routing"
	KeyStart      = "start"
	KeyApprovals  = "approvals"
	KeyRecent     = "recent"
	KeyWorkspaces = "workspaces"
	KeySessions   = "sessions"
	KeyDoctor     = "doctor"
	KeyReport     = "report"
	KeyDashboard  = "dashboard"
	KeyQuit       = "quit"
)

// What a click does.
type ActionKind int

const (
	ActNone ActionKind = iota
	// ActAnswer answers the approval ID with Answer.
	ActAnswer
	// ActShowEvent shows the card of the event ID.
	ActShowEvent
	// ActOpen opens the file or directory ID.
	ActOpen
	ActRunDoctor
	ActStartService
	// ActOpenDashboard opens the dashboard in the browser, with a login
	// code the service gives.
	ActOpenDashboard
	// ActOpenPort forwards Port of the session ID (of Agent) to this
	// machine's loopback; ActClosePort ends that forward.
	ActOpenPort
	ActClosePort
	ActQuit
)

// An Action is what a click on an item does. For an answer, Entry is
// the egress entry picked (always, deny always; "" for the exact
// destination), and LocalService the tick on "this is a service on my
// machine" that an allowing answer to a host-loopback destination
// carries: the click on an item that says so is the tick. For a port,
// ID is the session's id, Agent its agent and Port the port in it.
type Action struct {
	Kind         ActionKind
	ID           string
	Answer       string
	Entry        string
	LocalService bool
	Agent        string
	Port         int
}

// An Item is one menu entry. Top-level items carry a Key and are always
// present (Hidden when the state has no use for them), so the binding can
// give each its place; children are listed in order.
type Item struct {
	Key       string
	Label     string
	Tooltip   string
	Disabled  bool
	Hidden    bool
	Separator bool
	Action    Action
	Children  []Item
}

// Menu returns the tray's menu for s at now.
func Menu(s State, now time.Time) []Item {
	down := !s.Connected
	serviceLine := "Service running"
	switch {
	case !s.Tried:
		serviceLine = "Connecting to the service…"
	case down:
		serviceLine = "Service down"
	case s.Stopping:
		serviceLine = "Service stopping"
	}
	routing := "Routing off"
	if s.Status.Policy.Routing == "governed_shell" {
		routing = "Routing on"
	}
	routing += " · " + plural(s.Status.Workspaces, "workspace")

	doctor := Item{Key: KeyDoctor, Label: "Run doctor", Action: Action{Kind: ActRunDoctor}}
	if s.DoctorRunning {
		doctor.Label, doctor.Disabled = "Running doctor…", true
	}
	return []Item{
		{Key: KeyService, Label: serviceLine, Disabled: true},
		{Key: KeySandbox, Label: sandboxLine(s.Status.Sandbox), Disabled: true, Hidden: down},
		{Key: KeyRouting, Label: routing, Disabled: true, Hidden: down},
		{Key: KeyStart, Label: "Start service", Hidden: !down || !s.Tried, Action: Action{Kind: ActStartService}},
		{Separator: true},
		approvalsItem(s, down),
		recentItem(s, now),
		workspacesItem(s, down),
		sessionsItem(s, down),
		{Separator: true},
		doctor,
		{Key: KeyReport, Label: "Open doctor report", Hidden: s.Report == "", Action: Action{Kind: ActOpen, ID: s.Report}},
		{Key: KeyDashboard, Label: "Open dashboard", Tooltip: "executions, approvals, workspaces and policy in the browser",
			Disabled: down, Action: Action{Kind: ActOpenDashboard}},
		{Separator: true},
		{Key: KeyQuit, Label: "Quit", Action: Action{Kind: ActQuit}},
	}
}

// sandboxLine says the sandbox a command would get now and what it means.
func sandboxLine(sb api.SandboxStatus) string {
	mode := sb.Mode
	if mode == "" {
		mode = "unavailable"
	}
	line := "Sandbox: " + mode
	icon, _ := IconOf(State{Connected: true, Status: api.Status{Sandbox: sb}})
	switch icon {
	case IconProtected:
		line += " (protected)"
	case IconDegraded:
		line += " (degraded)"
	case IconDenied:
		line += " (commands refused)"
	}
	if sb.Error != "" {
		line += ": " + Shorten(sb.Error, lineWidth)
	}
	return line
}

func recentItem(s State, now time.Time) Item {
	it := Item{Key: KeyRecent, Label: "Recent executions", Disabled: len(s.Recent) == 0}
	for _, ev := range s.Recent {
		it.Children = append(it.Children, Item{
			Label:  fmt.Sprintf("%s %s · %s · %s", Glyph(ev), Shorten(ev.Agent, 16), Shorten(CommandOf(ev), commandWidth), Age(now.Sub(ev.Time))),
			Action: Action{Kind: ActShowEvent, ID: ev.ID},
		})
	}
	return it
}

func workspacesItem(s State, down bool) Item {
	it := Item{Key: KeyWorkspaces, Label: "Workspaces…", Hidden: down, Disabled: len(s.Workspaces) == 0}
	for i, w := range s.Workspaces {
		if i == MaxWorkspaces {
			it.Children = append(it.Children, Item{Disabled: true,
				Label: fmt.Sprintf("%d more: gatehouse status lists them", len(s.Workspaces)-MaxWorkspaces)})
			break
		}
		label := Shorten(w.Path, lineWidth) + " (" + w.Origin
		if len(w.Agents) > 0 {
			label += ", for " + Shorten(strings.Join(w.Agents, ", "), 32) + " only"
		}
		label += ")"
		if w.Problem != "" {
			label += ": " + Shorten(w.Problem, lineWidth)
		}
		it.Children = append(it.Children, Item{Label: label, Action: Action{Kind: ActOpen, ID: w.Path}})
	}
	return it
}

// Glyph is one character for how an execution's event ended: its mark
// in the one table the dashboard shows too (card.Marks).
func Glyph(ev api.Event) string { return card.MarkOf(&ev).Glyph }

// CommandOf names what an event ran. Events carry the command's hash, not
// its text, so this is the commands it resolved to, by base name.
func CommandOf(ev api.Event) string {
	if len(ev.ResolvedCmds) == 0 {
		if ev.Tool != "" {
			return ev.Tool
		}
		return "(no command)"
	}
	names := make([]string, len(ev.ResolvedCmds))
	for i, c := range ev.ResolvedCmds {
		names[i] = filepath.Base(c)
	}
	return strings.Join(names, " ")
}

// Age says how long ago something was, in the largest whole unit.
func Age(d time.Duration) string {
	switch {
	case d < 5*time.Second:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// Escape shows every control and invisible character of s as an escape
// (termesc.Line: a one-line label cannot show a tab or a newline either),
// so that a label reads exactly as the text it stands for.
func Escape(s string) string { return termesc.Line(s) }

// Shorten escapes s and cuts it to at most width characters, ending in an
// ellipsis when cut.
func Shorten(s string, width int) string {
	s = Escape(s)
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
