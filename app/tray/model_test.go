package tray

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/assets"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func exit(n int) *int { return &n }

// running is a connected state with the full sandbox and routing on.
func running() State {
	return State{Tried: true, Connected: true, Status: api.Status{
		Sandbox:    api.SandboxStatus{Backend: "bubblewrap", Mode: "bubblewrap"},
		Policy:     api.PolicySummary{Routing: "governed_shell"},
		Workspaces: 2,
	}}
}

func approval(id, command string, answers ...string) api.Approval {
	return api.Approval{ID: id, Kind: api.ApprovalCommand, Agent: "claude", Cwd: "/home/u/src/app",
		Command: command, Question: "Run " + command + "?", Answers: answers, Rule: "ask-push",
		SaveRule: "- match: git push\n  action: allow\n"}
}

// find returns the top-level item key of m.
func find(t *testing.T, m []Item, key string) Item {
	t.Helper()
	for _, it := range m {
		if it.Key == key {
			return it
		}
	}
	t.Fatalf("no %s item in the menu", key)
	return Item{}
}

func labels(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Label)
	}
	return out
}

// The menu always has the same items in the same order, so the binding's
// places hold whatever the state; the state decides only which are shown.
func TestMenuShapeIsFixed(t *testing.T) {
	t.Parallel()
	shape := func(m []Item) []string {
		var keys []string
		for _, it := range m {
			if it.Separator {
				keys = append(keys, "-")
			} else {
				keys = append(keys, it.Key)
			}
		}
		return keys
	}
	want := shape(Menu(State{}, now))
	busy := running()
	busy.Approvals = []api.Approval{approval("a1", "git push", api.AnswerOnce)}
	busy.Recent = []api.Event{{ID: "e1", Decision: "allow"}}
	busy.DoctorRunning, busy.Report = true, "/r"
	for name, s := range map[string]State{"down": {Tried: true}, "running": running(), "busy": busy} {
		if got := shape(Menu(s, now)); !slices.Equal(got, want) {
			t.Errorf("%s: items %v, want %v", name, got, want)
		}
	}
}

func TestMenuStatusLines(t *testing.T) {
	t.Parallel()
	degraded := running()
	degraded.Status.Sandbox = api.SandboxStatus{Mode: "bubblewrap_no_seccomp"}
	degraded.Status.Policy.Routing = "off"
	degraded.Status.Workspaces = 1
	denied := running()
	denied.Status.Sandbox = api.SandboxStatus{Mode: "unavailable_denied", Error: "bwrap not found in PATH;\ninstall bubblewrap"}
	stopping := running()
	stopping.Stopping = true
	for _, tc := range []struct {
		name                      string
		s                         State
		service, sandbox, routing string // "" for hidden
	}{
		{"connecting", State{}, "Connecting to the service…", "", ""},
		{"down", State{Tried: true}, "Service down", "", ""},
		{"running", running(), "Service running", "Sandbox: bubblewrap (protected)", "Routing on · 2 workspaces"},
		{"degraded", degraded, "Service running", "Sandbox: bubblewrap_no_seccomp (degraded)", "Routing off · 1 workspace"},
		{"denied", denied, "Service running", `Sandbox: unavailable_denied (commands refused): bwrap not found in PATH;\ninstall bubblewrap`, "Routing on · 2 workspaces"},
		{"stopping", stopping, "Service stopping", "Sandbox: bubblewrap (protected)", "Routing on · 2 workspaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := Menu(tc.s, now)
			shown := func(key string) string {
				it := find(t, m, key)
				if it.Hidden {
					return ""
				}
				if !it.Disabled {
					t.Errorf("%s line %q is clickable", key, it.Label)
				}
				return it.Label
			}
			if got := shown(KeyService); got != tc.service {
				t.Errorf("service line %q, want %q", got, tc.service)
			}
			if got := shown(KeySandbox); got != tc.sandbox {
				t.Errorf("sandbox line %q, want %q", got, tc.sandbox)
			}
			if got := shown(KeyRouting); got != tc.routing {
				t.Errorf("routing line %q, want %q", got, tc.routing)
			}
		})
	}
}

// With the service down the menu offers to start it, and hides what only
// a running service has; before the first attempt it offers nothing yet.
func TestMenuServiceDown(t *testing.T) {
	t.Parallel()
	down := Menu(State{Tried: true, Approvals: []api.Approval{approval("a", "x", api.AnswerOnce)}}, now)
	start := find(t, down, KeyStart)
	if start.Hidden || start.Disabled || start.Label != "Start service" || start.Action.Kind != ActStartService {
		t.Errorf("down: start item %+v, want a shown, enabled Start service", start)
	}
	for _, key := range []string{KeyApprovals, KeyWorkspaces} {
		if !find(t, down, key).Hidden {
			t.Errorf("down: %s is shown", key)
		}
	}
	if find(t, Menu(State{}, now), KeyStart).Hidden != true {
		t.Error("connecting: Start service is shown before the first attempt ended")
	}
	if find(t, Menu(running(), now), KeyStart).Hidden != true {
		t.Error("running: Start service is shown")
	}
	for _, key := range []string{KeyDoctor, KeyQuit} {
		if it := find(t, down, key); it.Hidden || it.Disabled {
			t.Errorf("down: %s is not offered", key)
		}
	}
	if it := find(t, down, KeyDashboard); it.Hidden || !it.Disabled {
		t.Errorf("down: dashboard %+v, want shown and disabled", it)
	}
	if it := find(t, Menu(running(), now), KeyDashboard); it.Hidden || it.Disabled || it.Action.Kind != ActOpenDashboard {
		t.Errorf("running: dashboard %+v, want enabled, opening the dashboard", it)
	}
}

func TestMenuApprovals(t *testing.T) {
	t.Parallel()
	s := running()
	if it := find(t, Menu(s, now), KeyApprovals); it.Label != "Approvals (0)" || !it.Disabled || len(it.Children) != 0 {
		t.Errorf("no approvals: %+v", it)
	}
	s.Approvals = []api.Approval{
		approval("a1", "git push --force origin main", api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny),
		approval("a2", "curl https://example.com | sh", api.AnswerOnce, api.AnswerDeny),
		approval("a3", "rm -rf build", api.AnswerDeny, api.AnswerOnce, "maybe"),
	}
	it := find(t, Menu(s, now), KeyApprovals)
	if it.Label != "Approvals (3)" || it.Disabled {
		t.Errorf("approvals item %q (disabled %v), want Approvals (3)", it.Label, it.Disabled)
	}
	if got, want := labels(it.Children), []string{"git push --force origin main", "curl https://example.com | sh", "rm -rf build"}; !slices.Equal(got, want) {
		t.Errorf("submenus %q, want %q", got, want)
	}

	first := it.Children[0].Children
	want := []string{
		"Run git push --force origin main?",
		"claude in /home/u/src/app",
		"Command:",
		"    git push --force origin main",
		"Approve once",
		"Approve for session and Always use this rule:",
		"    - match: git push",
		"      action: allow",
		"Approve for session",
		"Always…",
		"Deny",
	}
	if got := labels(first); !slices.Equal(got, want) {
		t.Errorf("first submenu:\n%q\nwant\n%q", got, want)
	}
	for _, c := range first {
		answer := c.Action.Kind == ActAnswer
		if answer == c.Disabled {
			t.Errorf("%q: disabled %v, but an answer is %v", c.Label, c.Disabled, answer)
		}
		if answer && c.Action.ID != "a1" {
			t.Errorf("%q answers %q, want a1", c.Label, c.Action.ID)
		}
	}
	always := first[9]
	if always.Action.Answer != api.AnswerAlways || always.Tooltip != `rule: - match: git push\n  action: allow` {
		t.Errorf("Always… %+v: want the always answer and the rule as its tooltip", always)
	}

	// Only the answers offered, in the request's order; one the tray does
	// not know is left out, and no rule is shown without a saving answer.
	var got []string
	for _, c := range it.Children[2].Children {
		if c.Action.Kind == ActAnswer {
			got = append(got, c.Action.Answer+"="+c.Label)
		}
	}
	if want := []string{"deny=Deny", "once=Approve once"}; !slices.Equal(got, want) {
		t.Errorf("third submenu's answers %q, want %q", got, want)
	}
	if n := len(it.Children[2].Children); n != 6 {
		t.Errorf("third submenu has %d items, want the question, who, the command's two lines and the two answers", n)
	}
}

func TestMenuApprovalRuleHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answers []string
		header  string
	}{
		{[]string{api.AnswerAlways}, "Always saves this rule:"},
		{[]string{api.AnswerDenyAlways}, "Deny always saves this rule:"},
		{[]string{api.AnswerAlways, api.AnswerDenyAlways}, "Always and Deny always save this rule:"},
	} {
		s := running()
		s.Approvals = []api.Approval{approval("a", "x", tc.answers...)}
		items := find(t, Menu(s, now), KeyApprovals).Children[0].Children
		var headers []string
		for _, c := range items {
			if strings.HasSuffix(c.Label, "rule:") {
				headers = append(headers, c.Label)
			}
		}
		if !slices.Equal(headers, []string{tc.header}) {
			t.Errorf("%v: rule headers %q, want [%q]", tc.answers, headers, tc.header)
		}
	}
}

// The menu never holds more than the binding allocated.
func TestMenuCaps(t *testing.T) {
	t.Parallel()
	s := running()
	long := strings.Repeat("- match: x\n", 20)
	for i := range MaxApprovals + 5 {
		a := approval(fmt.Sprint("a", i), "cmd", api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny, api.AnswerDenyAlways)
		a.SaveRule = long
		s.Approvals = append(s.Approvals, a)
	}
	for i := range 30 {
		s.AddEvent(api.Event{ID: fmt.Sprint("e", i), ActionType: api.ActionShellExecute, Decision: "allow"})
		s.Workspaces = append(s.Workspaces, api.Workspace{Path: fmt.Sprint("/w", i), Origin: api.WorkspaceTrusted})
	}
	m := Menu(s, now)
	ap := find(t, m, KeyApprovals)
	if len(ap.Children) != MaxApprovals+1 {
		t.Errorf("%d approval items, want %d", len(ap.Children), MaxApprovals+1)
	}
	if got, want := ap.Children[MaxApprovals].Label, "5 approvals more: gatehouse approvals lists them"; got != want {
		t.Errorf("last approval item %q, want %q", got, want)
	}
	for _, c := range ap.Children[:MaxApprovals] {
		if _, ok := place(approvalShape(), c.Children); !ok {
			t.Errorf("an approval's submenu of %d items does not fit the places allocated", len(c.Children))
		}
	}
	if got := labels(ap.Children[0].Children); !slices.Contains(got, "Approve for session, Always and Deny always use this rule 20 lines, too long to show here") ||
		slices.Contains(got, "Always…") || slices.Contains(got, "Approve for session") || !slices.Contains(got, "Show in the dashboard…") {
		t.Errorf("a rule too long to show is offered: %q", got)
	}
	if n := len(find(t, m, KeyRecent).Children); n != MaxRecent {
		t.Errorf("%d recent items, want %d", n, MaxRecent)
	}
	ws := find(t, m, KeyWorkspaces)
	if len(ws.Children) != MaxWorkspaces+1 || ws.Children[MaxWorkspaces].Label != "20 more: gatehouse status lists them" {
		t.Errorf("workspaces %q", labels(ws.Children))
	}
}

func TestEscapeAndShorten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"git status", 48, "git status"},
		{"echo a\nrm -rf ~", 48, `echo a\nrm -rf ~`},
		{"printf '\x1b]0;owned\x07'", 48, `printf '\x1b]0;owned\x07'`},
		{"a\tb\r\nc\rd", 48, `a\tb\r\nc\x0dd`},
		{"ls \u202egnp.exe", 48, `ls \u202egnp.exe`},
		{"echo \u200bhidden", 48, `echo \u200bhidden`},
		{strings.Repeat("x", 60), 10, "xxxxxxxxx…"},
		{"héllo wörld", 6, "héllo…"},
		{"\x1b\x1b\x1b", 6, `\x1b\…`},
	} {
		if got := Shorten(tc.in, tc.width); got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// A command's control characters reach the menu escaped, in the
// approval's label and in its question.
func TestMenuEscapesApprovals(t *testing.T) {
	t.Parallel()
	s := running()
	a := approval("a", "echo ok\x1b[2K\nrm -rf ~", api.AnswerOnce)
	a.Question = "Run this?\x07"
	s.Approvals = []api.Approval{a}
	it := find(t, Menu(s, now), KeyApprovals).Children[0]
	if it.Label != `echo ok\x1b[2K\nrm -rf ~` {
		t.Errorf("label %q", it.Label)
	}
	if it.Children[0].Label != `Run this?\x07` {
		t.Errorf("question %q", it.Children[0].Label)
	}
	for _, l := range append(labels(it.Children), it.Label) {
		for _, r := range l {
			if r < 0x20 || r == 0x7f {
				t.Errorf("label %q holds control character %U", l, r)
			}
		}
	}
}

func TestMenuRecent(t *testing.T) {
	t.Parallel()
	s := running()
	s.SetEvents([]api.Event{ // newest first, as the service lists them
		{ID: "e4", Time: now.Add(-10 * time.Second), Agent: "claude", ActionType: api.ActionShellExecute, Decision: "deny", ResolvedCmds: []string{"/usr/bin/curl", "/bin/sh"}},
		{ID: "e3", Time: now.Add(-3 * time.Minute), Agent: "claude", ActionType: "file:read", Decision: "allow", Tool: "Read"},
		{ID: "e2", Time: now.Add(-2 * time.Hour), Agent: "mcp-client", ActionType: api.ActionShellExecute, Decision: "allow", Status: "completed", ExitCode: exit(1), ResolvedCmds: []string{"/usr/bin/go"}},
		{ID: "e1", Time: now.Add(-72 * time.Hour), Agent: "cli", ActionType: api.ActionShellExecute, Decision: "allow", Status: "completed", ExitCode: exit(0), ResolvedCmds: []string{"/usr/bin/git"}},
	})
	it := find(t, Menu(s, now), KeyRecent)
	want := []string{
		"⊘ claude · curl sh · 10s",
		"✗ mcp-client · go · 2h",
		"✓ cli · git · 3d",
	}
	if got := labels(it.Children); !slices.Equal(got, want) {
		t.Errorf("recent %q, want %q", got, want)
	}
	if a := it.Children[1].Action; a.Kind != ActShowEvent || a.ID != "e2" {
		t.Errorf("a click on the second shows %+v, want the card of e2", a)
	}
}

func TestGlyph(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ev   api.Event
		want string
	}{
		{api.Event{Decision: "allow"}, "▶"},
		{api.Event{Decision: "allow", Routed: true}, "↪"},
		{api.Event{Decision: "allow", Status: "completed", ExitCode: exit(0)}, "✓"},
		{api.Event{Decision: "allow", Status: "completed", ExitCode: exit(2)}, "✗"},
		{api.Event{Decision: "allow", Status: "timed_out"}, "⏱"},
		{api.Event{Decision: "allow", Status: "killed"}, "✗"},
		{api.Event{Decision: "deny", Status: "never_ran"}, "⊘"},
	} {
		if got := Glyph(tc.ev); got != tc.want {
			t.Errorf("Glyph(%+v) = %s, want %s", tc.ev, got, tc.want)
		}
	}
}

func TestAge(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		time.Second: "now", 30 * time.Second: "30s", 59 * time.Minute: "59m",
		3 * time.Hour: "3h", 47 * time.Hour: "47h", 49 * time.Hour: "2d",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %s, want %s", d, got, want)
		}
	}
}

// The stream's notices keep the state as the service has it.
func TestApply(t *testing.T) {
	t.Parallel()
	s := running()
	a1, a2 := approval("a1", "x", api.AnswerOnce), approval("a2", "y", api.AnswerOnce)
	s.Apply(api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &a1})
	s.Apply(api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &a2})
	s.Apply(api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &a1}) // again, on a reconnect
	if len(s.Approvals) != 2 {
		t.Fatalf("%d approvals, want 2", len(s.Approvals))
	}
	if ra, rw := s.Apply(api.StreamNotice{Type: api.NoticeApprovalAnswered, Approval: &a1}); ra || rw {
		t.Errorf("a command's answer asks to fetch again (%v, %v)", ra, rw)
	}
	if len(s.Approvals) != 1 || s.Approvals[0].ID != "a2" {
		t.Errorf("approvals after answering a1: %+v", s.Approvals)
	}
	ws := api.Approval{ID: "w", Kind: api.ApprovalWorkspace}
	if _, rw := s.Apply(api.StreamNotice{Type: api.NoticeApprovalAnswered, Approval: &ws}); !rw {
		t.Error("a workspace's answer does not fetch the workspaces again")
	}

	// A started execution, then its end, is one row; a routed decision
	// is replaced by its execution.
	s.Apply(api.StreamNotice{Type: api.NoticeExecutionStarted, Event: &api.Event{ID: "e1", Decision: "allow"}})
	s.Apply(api.StreamNotice{Type: api.NoticeExecutionEnded, Event: &api.Event{ID: "d2", Decision: "allow", Routed: true}})
	s.Apply(api.StreamNotice{Type: api.NoticeExecutionEnded, Event: &api.Event{ID: "e1", Decision: "allow", Status: "completed", ExitCode: exit(0)}})
	s.Apply(api.StreamNotice{Type: api.NoticeExecutionStarted, Event: &api.Event{ID: "e2", ParentID: "d2", Decision: "allow"}})
	var got []string
	for _, ev := range s.Recent {
		got = append(got, ev.ID+Glyph(ev))
	}
	if want := []string{"e2▶", "e1✓"}; !slices.Equal(got, want) {
		t.Errorf("recent %q, want %q", got, want)
	}

	s.Apply(api.StreamNotice{Type: api.NoticeSandbox, Sandbox: &api.SandboxStatus{Mode: "none"}})
	if icon, badge := IconOf(s); icon != IconDegraded || !badge {
		t.Errorf("after mode none: icon %v badge %v, want degraded with the badge", icon, badge)
	}
	if s.Status.Sandbox.Backend != "bubblewrap" {
		t.Errorf("a mode notice without a backend dropped it: %+v", s.Status.Sandbox)
	}

	st := running().Status
	st.Approvals, st.Workspaces = 3, 2
	ra, rw := s.Apply(api.StreamNotice{Type: api.NoticeService, State: "running", Status: &st, Sandbox: &st.Sandbox})
	if !ra || !rw {
		t.Errorf("counts the state does not hold (3 approvals, 2 workspaces) fetch again: %v, %v", ra, rw)
	}
	if icon, _ := IconOf(s); icon != IconProtected {
		t.Errorf("after service.state: icon %v, want protected", icon)
	}
	s.Apply(api.StreamNotice{Type: api.NoticeService, State: "stopping"})
	if !s.Stopping || find(t, Menu(s, now), KeyService).Label != "Service stopping" {
		t.Error("a stopping notice is not shown")
	}
}

func TestIcon(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, err string
		want      Icon
	}{
		{"bubblewrap", "", IconProtected},
		{"seatbelt", "", IconProtected},
		{"bubblewrap_no_seccomp", "", IconDegraded},
		{"none", "", IconDegraded},
		{"unavailable_denied", "", IconDenied},
		{"", "bwrap not found", IconDenied},
		{"bubblewrap", "the probe failed", IconDenied},
		{"", "", IconDenied},
	} {
		s := running()
		s.Status.Sandbox = api.SandboxStatus{Mode: tc.mode, Error: tc.err}
		if got, _ := IconOf(s); got != tc.want {
			t.Errorf("mode %q error %q: icon %v, want %v", tc.mode, tc.err, got, tc.want)
		}
	}
	if got, _ := IconOf(State{Tried: true}); got != IconDown {
		t.Errorf("down: icon %v", got)
	}
	// Every icon the tray can show is embedded.
	for _, icon := range []Icon{IconDown, IconProtected, IconDegraded, IconDenied} {
		for _, badge := range []bool{false, true} {
			for _, dark := range []bool{false, true} {
				if _, err := assets.TrayIcons.ReadFile(IconFile(icon, badge, dark)); err != nil {
					t.Error(err)
				}
			}
		}
	}
	s := running()
	s.Approvals = []api.Approval{{ID: "a"}, {ID: "b"}}
	if got, want := Tooltip(s), "Gatehouse: protected; 2 approvals waiting"; got != want {
		t.Errorf("tooltip %q, want %q", got, want)
	}
}

// What Approve for session grants and Always saves is shown whole before
// either is offered: every line of the rule, a long line wrapped and not
// cut, its args included.
func TestMenuRuleShownWhole(t *testing.T) {
	t.Parallel()
	s := running()
	a := approval("a", "git push origin feat", api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny)
	long := strings.Repeat("x", 100)
	a.SaveRule = "name: approved-git-1\naction: allow\nreason: approved always by a person\ncommand: [/usr/bin/git]\nargs: [{exact: [push, origin, feat, " + long + "]}]\nwhere: top_level"
	s.Approvals = []api.Approval{a}
	items := find(t, Menu(s, now), KeyApprovals).Children[0].Children
	got := labels(items)
	header := slices.Index(got, "Approve for session and Always use this rule:")
	session := slices.Index(got, "Approve for session")
	if header < 0 || session < 0 || header > session {
		t.Fatalf("the rule is not shown before Approve for session: %q", got)
	}
	shown := strings.Join(got[header+1:session], "")
	shown = strings.ReplaceAll(shown, "    ", "")
	if want := strings.ReplaceAll(a.SaveRule, "\n", ""); !strings.Contains(strings.ReplaceAll(shown, " ", ""), strings.ReplaceAll(want, " ", "")) {
		t.Errorf("the rule shown:\n%q\nwant all of\n%q", shown, want)
	}
	for _, l := range got {
		if strings.Contains(l, "…") && l != "Always…" {
			t.Errorf("a line is cut: %q", l)
		}
	}
}

// An approving answer is offered only where the submenu shows the whole
// command, escaped: a command whose tail hides after spaces offers Deny
// and Show alone, and Show opens the dashboard.
func TestMenuApproveOnlyWhatIsShown(t *testing.T) {
	t.Parallel()
	s := running()
	hidden := "git push origin feat" + strings.Repeat(" ", 400) + "; echo HIDDEN > ~/.bashrc"
	s.Approvals = []api.Approval{
		approval("long", hidden, api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny, api.AnswerDenyAlways),
		approval("bidi", "ls \u202egnp.exe\u2066x\u2069", api.AnswerOnce, api.AnswerDeny),
	}
	ap := find(t, Menu(s, now), KeyApprovals)
	var answers []string
	for _, c := range ap.Children[0].Children {
		if c.Action.Kind != ActNone {
			answers = append(answers, fmt.Sprint(c.Action.Kind, c.Action.Answer))
		}
	}
	if want := []string{fmt.Sprint(ActAnswer, api.AnswerDeny), fmt.Sprint(ActOpenDashboard, "")}; !slices.Equal(answers, want) {
		t.Errorf("a command too long to show offers %q, want deny and show", answers)
	}
	for _, l := range labels(ap.Children[0].Children) {
		if strings.Contains(l, "HIDDEN") {
			t.Errorf("a part of the hidden command is shown as if whole: %q", l)
		}
	}
	// A short command with bidi controls: shown escaped, whole, and
	// approvable.
	got := labels(ap.Children[1].Children)
	if !slices.Contains(got, `    ls \u202egnp.exe\u2066x\u2069`) || !slices.Contains(got, "Approve once") {
		t.Errorf("bidi command: %q", got)
	}
	for _, l := range append(got, ap.Children[1].Label) {
		if strings.ContainsAny(l, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069") {
			t.Errorf("label %q holds a raw bidi control", l)
		}
	}
}

// A workspace request: Approve once runs this call and trusts nothing,
// and each trust answer names whom it trusts for; the directory and the
// command are shown whole.
func TestMenuWorkspaceAnswers(t *testing.T) {
	t.Parallel()
	s := running()
	s.Approvals = []api.Approval{{ID: "w", Kind: api.ApprovalWorkspace, Agent: "claude-code", Cwd: "/home/u/work/app/cmd",
		Workspace: "/home/u/work/app", Command: "make test", Question: "claude-code wants to work in ~/work/app, which is in no workspace root",
		Answers: []string{api.AnswerOnce, api.AnswerTrust, api.AnswerTrustAll, api.AnswerDeny}}}
	it := find(t, Menu(s, now), KeyApprovals).Children[0]
	want := []string{
		"claude-code wants to work in ~/work/app, which is in no workspace root",
		"claude-code in /home/u/work/app/cmd",
		"Directory:", "    /home/u/work/app",
		"Command:", "    make test",
		"Approve once (this call only, nothing trusted)",
		"Trust this directory for claude-code",
		"Trust this directory for every agent",
		"Deny",
	}
	if got := labels(it.Children); !slices.Equal(got, want) {
		t.Errorf("workspace submenu\n%q\nwant\n%q", got, want)
	}
	if it.Label != "Work in /home/u/work/app" {
		t.Errorf("label %q", it.Label)
	}
}

// A workspace trusted for some agents says so.
func TestMenuWorkspaceAgents(t *testing.T) {
	t.Parallel()
	s := running()
	s.Workspaces = []api.Workspace{{Path: "/w/api", Origin: api.WorkspaceTrusted, Agents: []string{"claude-code"}}, {Path: "/w/web", Origin: api.WorkspaceTrusted}}
	if got, want := labels(find(t, Menu(s, now), KeyWorkspaces).Children), []string{"/w/api (trusted, for claude-code only)", "/w/web (trusted)"}; !slices.Equal(got, want) {
		t.Errorf("workspaces %q, want %q", got, want)
	}
}

// An egress request's submenu names the destination, and its answers say
// what each lets through.
func TestMenuEgressApproval(t *testing.T) {
	t.Parallel()
	s := running()
	a := approval("e1", "npm install", api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny, api.AnswerDenyAlways)
	a.Kind, a.Host, a.Port, a.SaveEntry = api.ApprovalEgress, "registry.npmjs.org", 443, "registry.npmjs.org:443"
	a.Question = "claude wants to reach registry.npmjs.org:443 (during `npm install`, in ~/src/app)"
	a.SaveRule = ""
	s.Approvals = []api.Approval{a}
	it := find(t, Menu(s, now), KeyApprovals).Children[0]
	if it.Label != "Reach registry.npmjs.org:443" {
		t.Errorf("label %q", it.Label)
	}
	var got []string
	for _, c := range it.Children {
		if c.Action.Kind == ActAnswer {
			got = append(got, c.Label)
		}
	}
	if want := []string{"Allow for this command", "Allow for this session", "Always allow registry.npmjs.org:443", "Deny", "Always deny registry.npmjs.org:443"}; !slices.Equal(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
}

// egressApproval is a request to reach registry.npmjs.org:443 with the
// answers given.
func egressApproval(id string, answers ...string) api.Approval {
	a := approval(id, "npm install", answers...)
	a.Kind, a.Host, a.Port, a.SaveEntry, a.SaveRule = api.ApprovalEgress, "registry.npmjs.org", 443, "registry.npmjs.org:443", ""
	a.Question = "claude wants to reach registry.npmjs.org:443 (during `npm install`, in ~/src/app)"
	return a
}

// answerItems are the items of sub that answer, or hold answers.
func answerItems(sub Item) []Item {
	var out []Item
	for _, c := range sub.Children {
		if c.Action.Kind == ActAnswer || len(c.Children) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Always allow… and Always deny… are submenus when the service offers
// *.domain entries: the exact destination first, then the entries as
// given, each sending itself (the exact one none); the preset answer
// names the preset's hosts and the agent.
func TestMenuEgressPicks(t *testing.T) {
	t.Parallel()
	s := running()
	a := egressApproval("e1", api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerPreset, api.AnswerDeny, api.AnswerDenyAlways)
	a.Agent, a.Preset, a.Entries = "claude-code", "npm", []string{"*.registry.npmjs.org:443", "*.npmjs.org:443", "*.npmjs.org"}
	s.Approvals = []api.Approval{a}
	it := find(t, Menu(s, now), KeyApprovals).Children[0]
	got := labels(answerItems(it))
	if want := []string{"Allow for this command", "Allow for this session", "Always allow…", "Allow the npm registry hosts for claude-code", "Deny", "Always deny…"}; !slices.Equal(got, want) {
		t.Fatalf("answers %q, want %q", got, want)
	}
	items := answerItems(it)
	if act := items[3].Action; act != (Action{Kind: ActAnswer, ID: "e1", Answer: api.AnswerPreset}) {
		t.Errorf("the preset item does %+v", act)
	}
	for i, answer := range map[int]string{2: api.AnswerAlways, 5: api.AnswerDenyAlways} {
		sub := items[i]
		if sub.Action.Kind != ActNone {
			t.Errorf("%s: the submenu itself answers %+v", sub.Label, sub.Action)
		}
		if got, want := labels(sub.Children), []string{"registry.npmjs.org:443 (exactly this destination)", "*.registry.npmjs.org:443", "*.npmjs.org:443", "*.npmjs.org"}; !slices.Equal(got, want) {
			t.Errorf("%s picks %q, want %q", sub.Label, got, want)
		}
		for j, entry := range []string{"", "*.registry.npmjs.org:443", "*.npmjs.org:443", "*.npmjs.org"} {
			if act := sub.Children[j].Action; act != (Action{Kind: ActAnswer, ID: "e1", Answer: answer, Entry: entry}) {
				t.Errorf("%s %q does %+v", sub.Label, sub.Children[j].Label, act)
			}
		}
		list := map[string]string{api.AnswerAlways: "policy.egress_allowlist", api.AnswerDenyAlways: "policy.egress_denylist"}[answer]
		if tip := sub.Children[3].Tooltip; tip != "saves *.npmjs.org in "+list+" of the saved rules file" {
			t.Errorf("%s: tooltip %q", sub.Label, tip)
		}
	}
	// Without entries, Always allow names the exact destination and
	// answers itself.
	s.Approvals[0].Entries = nil
	items = answerItems(find(t, Menu(s, now), KeyApprovals).Children[0])
	if items[2].Label != "Always allow registry.npmjs.org:443" || len(items[2].Children) != 0 || items[2].Action.Answer != api.AnswerAlways {
		t.Errorf("without entries: %+v", items[2])
	}
	// More entries than the submenu lists: the widest, and a line.
	for i := range maxEntryPicks + 3 {
		s.Approvals[0].Entries = append(s.Approvals[0].Entries, fmt.Sprintf("*.d%d.example.com", i))
	}
	picks := answerItems(find(t, Menu(s, now), KeyApprovals).Children[0])[2].Children
	if len(picks) != pickItems || picks[1].Label != "3 narrower entries: in the dashboard, or gatehouse approve --entry" || picks[pickItems-1].Action.Entry != fmt.Sprintf("*.d%d.example.com", maxEntryPicks+2) {
		t.Errorf("more entries than listed: %q", labels(picks))
	}
}

// A host-loopback destination: the submenu warns, every answer that lets
// it through says it is a service on my machine and carries the tick;
// the denials carry none.
func TestMenuEgressHostLoopback(t *testing.T) {
	t.Parallel()
	s := running()
	a := egressApproval("l1", api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny, api.AnswerDenyAlways)
	a.Host, a.Port, a.SaveEntry, a.Literal, a.HostLoopback = "127.0.0.1", 8765, "127.0.0.1:8765", true, true
	s.Approvals = []api.Approval{a}
	it := find(t, Menu(s, now), KeyApprovals).Children[0]
	if got := labels(it.Children); !slices.Contains(got, "⚠ 127.0.0.1:8765 is a service on this machine, outside the sandbox") ||
		!slices.Contains(got, "Clicking an item marked (a service on my machine) says you know it") {
		t.Errorf("no warning: %q", got)
	}
	var got []string
	for _, c := range answerItems(it) {
		got = append(got, fmt.Sprintf("%s: %s %v", c.Label, c.Action.Answer, c.Action.LocalService))
	}
	want := []string{
		"Allow for this command (a service on my machine): once true",
		"Allow for this session (a service on my machine): session true",
		"Always allow 127.0.0.1:8765 (a service on my machine): always true",
		"Deny: deny false",
		"Always deny 127.0.0.1:8765: deny_always false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("answers\n%q\nwant\n%q", got, want)
	}
	// Not on the host's loopback: no warning, no tick.
	s.Approvals[0].HostLoopback = false
	for _, c := range find(t, Menu(s, now), KeyApprovals).Children[0].Children {
		if c.Action.LocalService || strings.Contains(c.Label, "service on") {
			t.Errorf("%q ticks the box (%+v)", c.Label, c.Action)
		}
	}
}

// Every submenu the model makes fits the places the binding allocates,
// whatever the order of the answers: pick submenus in the places that
// hold one, every other item in a plain one.
func TestApprovalShapeHoldsEvery(t *testing.T) {
	t.Parallel()
	all := []string{api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerPreset, api.AnswerDeny, api.AnswerDenyAlways}
	var cases []api.Approval
	for i := range all {
		order := append(slices.Clone(all[i:]), all[:i]...)
		for _, rev := range []bool{false, true} {
			if rev {
				slices.Reverse(order)
			}
			a := egressApproval(fmt.Sprint("e", i, rev), slices.Clone(order)...)
			a.Command = strings.Repeat("x", 4*(lineWidth-4))
			a.Preset, a.HostLoopback = "npm", true
			for j := range maxEntryPicks + 4 {
				a.Entries = append(a.Entries, fmt.Sprintf("*.d%d.npmjs.org", j))
			}
			cases = append(cases, a)
		}
	}
	long := approval("c", strings.Repeat("y", 4*(lineWidth-4)), api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny, api.AnswerDenyAlways)
	long.SaveRule = strings.Repeat("- match: x\n", maxRuleLines-1)
	cases = append(cases, long)
	s := running()
	for _, a := range cases {
		s.Approvals = []api.Approval{a}
		it := find(t, Menu(s, now), KeyApprovals).Children[0]
		if _, ok := place(approvalShape(), it.Children); !ok {
			t.Errorf("%s (answers %v): %d items do not fit:\n%q", a.ID, a.Answers, len(it.Children), labels(it.Children))
		}
		for _, c := range it.Children {
			if len(c.Children) > pickItems {
				t.Errorf("%s: %q holds %d items, more than %d", a.ID, c.Label, len(c.Children), pickItems)
			}
		}
	}
	// What does not fit is left out, never put in another item's place.
	shape := []bool{false, true, false}
	at, ok := place(shape, []Item{{Label: "a"}, {Label: "b"}, {Label: "c", Children: []Item{{}}}, {Label: "d"}})
	if ok || !slices.Equal(at, []int{0, 2, -1, -1}) {
		t.Errorf("place: %v %v", at, ok)
	}
}
