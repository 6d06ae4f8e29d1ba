package tray_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"

	"github.com/gatehouse-dev/gatehouse/app/cli"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/notify/notifytest"
)

// The D-Bus test runs the real 'gatehouse tray' (this test binary, which
// is gatehouse when asBinary is set) against a fake service, and reads
// its menu as a status-notifier host does: the item registered with
// org.kde.StatusNotifierWatcher, its com.canonical.dbusmenu layout, and a
// click sent back through the menu's Event method.

const asBinary = "GATEHOUSE_TRAY_TEST_AS_GATEHOUSE"

func TestMain(m *testing.M) {
	// Inside a sandbox of the real service this test binary is
	// Gatehouse's init (realservice_test.go names it exec.sandbox.init_path).
	sandboxtest.Stage(sandboxinit.Stages)
	if os.Getenv(asBinary) == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// sessionBus connects to the session bus, skipping the test where there
// is none, unless it runs in the desktop session of make test
// (GATEHOUSE_DESKTOP_SESSION), where a missing piece is a failure.
func sessionBus(t *testing.T) *dbus.Conn {
	t.Helper()
	required := os.Getenv("GATEHOUSE_DESKTOP_SESSION") != ""
	if runtime.GOOS != "linux" {
		if required {
			t.Fatalf("the D-Bus tray test runs on Linux only, not %s", runtime.GOOS)
		}
		t.Skip("the status-notifier item is a Linux desktop's")
	}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" && !required {
		t.Skip("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset); .ci/with-desktop-session.sh provides one")
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatalf("connecting to the session bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// watcher is a StatusNotifierWatcher, for a session that runs none.
type watcher struct {
	mu    sync.Mutex
	items []string // sender and the service it registered
}

func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.items = append(w.items, string(sender)+service)
	return nil
}

func (w *watcher) RegisterStatusNotifierHost(service string) *dbus.Error { return nil }

func (w *watcher) registered() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.items)
}

const watcherName = "org.kde.StatusNotifierWatcher"

// serveWatcher exports a watcher on conn when no other owns the name; it
// returns nil when another does.
func serveWatcher(t *testing.T, conn *dbus.Conn) *watcher {
	t.Helper()
	w := &watcher{}
	const path = "/StatusNotifierWatcher"
	if err := conn.Export(w, path, watcherName); err != nil {
		t.Fatal(err)
	}
	if _, err := prop.Export(conn, path, prop.Map{watcherName: {
		"RegisteredStatusNotifierItems":  {Value: []string{}, Emit: prop.EmitTrue},
		"IsStatusNotifierHostRegistered": {Value: true, Emit: prop.EmitTrue},
		"ProtocolVersion":                {Value: int32(0), Emit: prop.EmitTrue},
	}}); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(watcherName, dbus.NameFlagDoNotQueue)
	if err != nil {
		t.Fatalf("requesting %s: %v", watcherName, err)
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		t.Logf("%s is served by another process; the tray registers with it", watcherName)
		return nil
	}
	return w
}

// node is one item of the menu as the bus shows it.
type node struct {
	ID       int32
	Label    string
	Visible  bool
	Enabled  bool
	Children []node
}

func (n node) String() string {
	var b strings.Builder
	var walk func(n node, depth int)
	walk = func(n node, depth int) {
		flags := ""
		if !n.Visible {
			flags += " (hidden)"
		}
		if !n.Enabled {
			flags += " (disabled)"
		}
		fmt.Fprintf(&b, "%s%d %q%s\n", strings.Repeat("  ", depth), n.ID, n.Label, flags)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// shown returns the visible children of n.
func (n node) shown() []node {
	var out []node
	for _, c := range n.Children {
		if c.Visible && c.Label != "" {
			out = append(out, c)
		}
	}
	return out
}

// child returns n's visible child labelled label.
func (n node) child(label string) (node, bool) {
	for _, c := range n.shown() {
		if c.Label == label {
			return c, true
		}
	}
	return node{}, false
}

func (n node) labels() []string {
	var out []string
	for _, c := range n.shown() {
		out = append(out, c.Label)
	}
	return out
}

// toNode converts a dbusmenu layout, (ia{sv}av), into a node. Labels are
// read as a host shows them: a doubled underscore is a literal one.
func toNode(id int32, props map[string]dbus.Variant, children []dbus.Variant) node {
	n := node{ID: id, Visible: true, Enabled: true}
	if v, ok := props["label"].Value().(string); ok {
		n.Label = strings.ReplaceAll(v, "__", "_")
	}
	if v, ok := props["visible"].Value().(bool); ok {
		n.Visible = v
	}
	if v, ok := props["enabled"].Value().(bool); ok {
		n.Enabled = v
	}
	for _, c := range children {
		s, ok := c.Value().([]any)
		if !ok || len(s) != 3 {
			continue
		}
		cid, _ := s[0].(int32)
		cprops, _ := s[1].(map[string]dbus.Variant)
		cchildren, _ := s[2].([]dbus.Variant)
		n.Children = append(n.Children, toNode(cid, cprops, cchildren))
	}
	return n
}

// trayOnBus is the tray process as a host sees it.
type trayOnBus struct {
	t      *testing.T
	conn   *dbus.Conn
	name   string
	menu   dbus.ObjectPath
	stderr *lockedBuffer
	// done is closed when the process has exited, with exitErr.
	done    chan struct{}
	exitErr error
	last    node
}

func (tr *trayOnBus) layout() (node, error) {
	var rev uint32
	var l struct {
		V0 int32
		V1 map[string]dbus.Variant
		V2 []dbus.Variant
	}
	err := tr.conn.Object(tr.name, tr.menu).Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &l)
	if err != nil {
		return node{}, err
	}
	return toNode(l.V0, l.V1, l.V2), nil
}

// waitFor polls the menu until cond holds of it, failing at the deadline
// with the last menu seen.
func (tr *trayOnBus) waitFor(what string, cond func(root node) bool) node {
	tr.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		var root node
		if root, err = tr.layout(); err == nil {
			tr.last = root
			if cond(root) {
				return root
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	tr.t.Fatalf("the menu never showed %s (last error %v); last menu:\n%s\ntray's stderr:\n%s", what, err, tr.last, tr.stderr)
	return node{}
}

// click sends a host's click on the item id.
func (tr *trayOnBus) click(id int32) {
	tr.t.Helper()
	err := tr.conn.Object(tr.name, tr.menu).Call("com.canonical.dbusmenu.Event", 0, id, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix())).Err
	if err != nil {
		tr.t.Fatalf("clicking item %d: %v", id, err)
	}
}

func (tr *trayOnBus) tooltip() string {
	v, err := tr.conn.Object(tr.name, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.ToolTip")
	if err != nil {
		return ""
	}
	s, ok := v.Value().([]any)
	if !ok || len(s) != 4 {
		return ""
	}
	title, _ := s[2].(string)
	return title
}

func (tr *trayOnBus) waitTooltip(want string) {
	tr.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		if got = tr.tooltip(); got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tr.t.Fatalf("tooltip %q, want %q", got, want)
}

// startTray runs 'gatehouse tray' against the socket and waits for its
// item on the bus.
func startTray(t *testing.T, conn *dbus.Conn, w *watcher, sock, home string) *trayOnBus {
	t.Helper()
	cmd := exec.Command(os.Args[0], "tray", "--theme", "dark")
	// Under -race the tray reports its races on stderr, which the test
	// reads; fyne.io/systray v1.12.2 has one of its own (GetLayout reads
	// the menu's revision while its delayed refresh writes it, under
	// another lock), so a race alone does not fail the process.
	cmd.Env = append(os.Environ(), asBinary+"=1", "GORACE=exitcode=0", "GATEHOUSE_SOCKET="+sock, "HOME="+home,
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	stderr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tr := &trayOnBus{t: t, conn: conn, name: fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", cmd.Process.Pid), stderr: stderr, done: make(chan struct{})}
	go func() { tr.exitErr = cmd.Wait(); close(tr.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-tr.done
		for _, race := range races(stderr.String()) {
			if strings.Contains(race, "gatehouse-dev/gatehouse") {
				t.Errorf("the tray raced:\n%s", race)
			} else {
				t.Logf("a race inside the tray's dependencies, not gatehouse's code:\n%s", race)
			}
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := conn.Object(tr.name, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.Menu")
		if err == nil {
			tr.menu, _ = v.Value().(dbus.ObjectPath)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tray's item %s never appeared on the bus: %v\ntray's stderr:\n%s", tr.name, err, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w != nil {
		var owner string
		if err := conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, tr.name).Store(&owner); err != nil {
			t.Fatal(err)
		}
		for !slices.Contains(w.registered(), owner+"/StatusNotifierItem") {
			if time.Now().After(deadline) {
				t.Fatalf("the tray never registered with the watcher (registered: %q)", w.registered())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return tr
}

func TestTrayOverDBus(t *testing.T) {
	conn := sessionBus(t)
	w := serveWatcher(t, conn)

	home := t.TempDir()
	sock := filepath.Join(home, "run", "s.sock")
	svc := newFakeService(t, sock)
	code := func(n int) *int { return &n }
	svc.status = api.Status{Version: "test", Sandbox: api.SandboxStatus{Backend: "bubblewrap", Mode: "bubblewrap"},
		Policy: api.PolicySummary{Routing: "governed_shell"}, Workspaces: 2}
	svc.workspaces = []api.Workspace{{Path: "/home/u/src", Origin: api.WorkspacePolicy}, {Path: "/home/u/work", Origin: api.WorkspaceTrusted, By: "cli"}}
	svc.events = []api.Event{{ID: "e1", Time: time.Now().Add(-3 * time.Minute), Agent: "claude", Surface: api.SurfaceAgentHook,
		ActionType: api.ActionShellExecute, Decision: "allow", Status: "completed", ExitCode: code(0), ResolvedCmds: []string{"/usr/bin/git"}}}
	svc.start()

	tr := startTray(t, conn, w, sock, home)

	// The status, the counts and the recent execution.
	root := tr.waitFor("the running service", func(root node) bool {
		recent, ok := root.child("Recent executions")
		return ok && len(recent.shown()) == 1 && slices.Contains(root.labels(), "Service running")
	})
	for _, want := range []string{"Service running", "Sandbox: bubblewrap (protected)", "Routing on · 2 workspaces", "Approvals (0)", "Workspaces…", "Run doctor", "Open dashboard", "Quit"} {
		if !slices.Contains(root.labels(), want) {
			t.Errorf("the menu has no %q:\n%s", want, root)
		}
	}
	for _, gone := range []string{"Start service", "Open doctor report"} {
		if slices.Contains(root.labels(), gone) {
			t.Errorf("the running service's menu shows %q", gone)
		}
	}
	if dash, _ := root.child("Open dashboard"); !dash.Enabled {
		t.Error("Open dashboard is disabled with the service running")
	}
	recent, _ := root.child("Recent executions")
	if got := recent.shown()[0].Label; got != "✓ claude · git · 3m" {
		t.Errorf("recent execution %q, want \"✓ claude · git · 3m\"", got)
	}
	ws, _ := root.child("Workspaces…")
	if got, want := ws.labels(), []string{"/home/u/src (policy)", "/home/u/work (trusted)"}; !slices.Equal(got, want) {
		t.Errorf("workspaces %q, want %q", got, want)
	}
	tr.waitTooltip("Gatehouse: protected")

	// An approval opens: its submenu shows the command whole, offers the
	// answers it offers, and shows the rule session and Always use before
	// either.
	svc.push(api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &api.Approval{
		ID: "ap1", Kind: api.ApprovalCommand, Agent: "claude", Cwd: "/home/u/src", Command: "git push --force\x1b[2K origin",
		Question: "Run git push --force origin?", Answers: []string{api.AnswerOnce, api.AnswerSession, api.AnswerAlways, api.AnswerDeny},
		SaveRule: "- match: git push --force origin\n  action: allow\n",
	}})
	// The label and the request's submenu reach the bus as separate
	// updates: wait for both.
	root = tr.waitFor("the approval's submenu (the command escaped)", func(root node) bool {
		approvals, _ := root.child("Approvals (1)")
		req, ok := approvals.child(`git push --force\x1b[2K origin`)
		return ok && slices.Contains(req.labels(), "Deny")
	})
	approvals, _ := root.child("Approvals (1)")
	req, _ := approvals.child(`git push --force\x1b[2K origin`)
	want := []string{"Run git push --force origin?", "claude in /home/u/src", "Command:", `    git push --force\x1b[2K origin`, "Approve once",
		"Approve for session and Always use this rule:", "    - match: git push --force origin", "      action: allow", "Approve for session", "Always…", "Deny"}
	if got := req.labels(); !slices.Equal(got, want) {
		t.Errorf("the request's submenu:\n%q\nwant\n%q", got, want)
	}
	tr.waitTooltip("Gatehouse: protected; 1 approval waiting")

	// Approve once: the service gets the answer, from the tray, and the
	// request leaves the menu.
	once, _ := req.child("Approve once")
	tr.click(once.ID)
	deadline := time.Now().Add(30 * time.Second)
	for len(svc.answered()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got, want := svc.answered(), []api.AnswerRequest{{ID: "ap1", Answer: api.AnswerOnce, By: api.ByTray}}; !slices.Equal(got, want) {
		t.Fatalf("the service was answered %+v, want %+v", got, want)
	}
	tr.waitFor("the approval answered", func(root node) bool { return slices.Contains(root.labels(), "Approvals (0)") })

	// An egress request whose destination lies in domains the service
	// offers: Always allow… holds the picks, and a click on one sends it;
	// a host-loopback request's allowing answer says it is a service on
	// my machine, and sends the tick.
	svc.push(api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &api.Approval{
		ID: "eg1", Kind: api.ApprovalEgress, Agent: "claude-code", Cwd: "/home/u/src", Command: "npm install", Host: "registry.npmjs.org", Port: 443,
		SaveEntry: "registry.npmjs.org:443", Entries: []string{"*.registry.npmjs.org:443", "*.npmjs.org:443", "*.npmjs.org"}, Preset: "npm",
		Question: "claude-code wants to reach registry.npmjs.org:443", Answers: []string{api.AnswerOnce, api.AnswerAlways, api.AnswerPreset, api.AnswerDeny, api.AnswerDenyAlways},
	}})
	svc.push(api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &api.Approval{
		ID: "lo1", Kind: api.ApprovalEgress, Agent: "claude-code", Cwd: "/home/u/src", Command: "curl http://127.0.0.1:8765/", Host: "127.0.0.1", Port: 8765,
		SaveEntry: "127.0.0.1:8765", Literal: true, HostLoopback: true,
		Question: "claude-code wants to reach 127.0.0.1:8765, a service on this machine", Answers: []string{api.AnswerOnce, api.AnswerDeny},
	}})
	root = tr.waitFor("the egress requests", func(root node) bool {
		approvals, _ := root.child("Approvals (2)")
		eg, _ := approvals.child("Reach registry.npmjs.org:443")
		always, _ := eg.child("Always allow…")
		lo, _ := approvals.child("Reach 127.0.0.1:8765")
		return len(always.shown()) == 4 && slices.Contains(lo.labels(), "Deny")
	})
	approvals, _ = root.child("Approvals (2)")
	eg, _ := approvals.child("Reach registry.npmjs.org:443")
	if got, want := eg.labels(), []string{"claude-code wants to reach registry.npmjs.org:443", "claude-code in /home/u/src", "Command:", "    npm install",
		"Allow for this command", "Always allow…", "Allow the npm registry hosts for claude-code", "Deny", "Always deny…"}; !slices.Equal(got, want) {
		t.Errorf("the egress request's submenu:\n%q\nwant\n%q", got, want)
	}
	always, _ := eg.child("Always allow…")
	if got, want := always.labels(), []string{"registry.npmjs.org:443 (exactly this destination)", "*.registry.npmjs.org:443", "*.npmjs.org:443", "*.npmjs.org"}; !slices.Equal(got, want) {
		t.Errorf("Always allow… holds %q, want %q", got, want)
	}
	lo, _ := approvals.child("Reach 127.0.0.1:8765")
	allow, ok := lo.child("Allow for this command (a service on my machine)")
	if !ok {
		t.Fatalf("the loopback request's submenu: %q", lo.labels())
	}
	pick, _ := always.child("*.npmjs.org")
	tr.click(pick.ID)
	tr.click(allow.ID)
	for deadline := time.Now().Add(30 * time.Second); len(svc.answered()) < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	got := svc.answered()[1:]
	slices.SortFunc(got, func(a, b api.AnswerRequest) int { return strings.Compare(a.ID, b.ID) })
	if want := []api.AnswerRequest{{ID: "eg1", Answer: api.AnswerAlways, Entry: "*.npmjs.org", By: api.ByTray}, {ID: "lo1", Answer: api.AnswerOnce, LocalService: true, By: api.ByTray}}; !slices.Equal(got, want) {
		t.Fatalf("the service was answered %+v, want %+v", got, want)
	}
	tr.waitFor("the egress requests answered", func(root node) bool { return slices.Contains(root.labels(), "Approvals (0)") })

	// An execution starts, then ends.
	ev := api.Event{ID: "e2", Time: time.Now(), Agent: "claude", Surface: api.SurfaceAgentHook, ActionType: api.ActionShellExecute,
		Decision: "allow", ResolvedCmds: []string{"/usr/bin/make"}, SandboxMode: "bubblewrap"}
	svc.push(api.StreamNotice{Type: api.NoticeExecutionStarted, Event: &ev})
	firstRecent := func(label string) func(node) bool {
		return func(root node) bool {
			r, _ := root.child("Recent executions")
			s := r.shown()
			return len(s) > 0 && s[0].Label == label
		}
	}
	tr.waitFor("the execution running", firstRecent("▶ claude · make · now"))
	ev.Status, ev.ExitCode, ev.DurationMS = "completed", code(2), 1500
	svc.push(api.StreamNotice{Type: api.NoticeExecutionEnded, Event: &ev})
	root = tr.waitFor("the execution ended", firstRecent("✗ claude · make · now"))
	r, _ := root.child("Recent executions")
	if len(r.shown()) != 2 {
		t.Errorf("an execution that started and ended is not one row:\n%s", r)
	}

	// A click on it shows its card as a notification, where a
	// notification server runs.
	if notifytest.Available() || notifytest.Required() {
		tr.click(r.shown()[0].ID)
		waitNotification(t, "Gatehouse: ✗ make", "exit code: 2\nduration: 1.5s of")
	}

	// The sandbox degrades.
	svc.push(api.StreamNotice{Type: api.NoticeSandbox, Sandbox: &api.SandboxStatus{Mode: "none"}})
	tr.waitFor("the sandbox degraded", func(root node) bool { return slices.Contains(root.labels(), "Sandbox: none (degraded)") })
	tr.waitTooltip("Gatehouse: degraded, commands run without the full sandbox")

	// Run doctor: the report is written where the menu opens it.
	root = tr.waitFor("Run doctor", func(root node) bool { return slices.Contains(root.labels(), "Run doctor") })
	doctor, _ := root.child("Run doctor")
	tr.click(doctor.ID)
	tr.waitFor("the doctor's report", func(root node) bool { return slices.Contains(root.labels(), "Open doctor report") })
	report, err := os.ReadFile(filepath.Join(home, "state", "gatehouse", "doctor-report.txt"))
	if err != nil || !bytes.Contains(report, []byte("backend:")) {
		t.Errorf("the doctor's report (%v):\n%s", err, report)
	}
	if notifytest.Available() || notifytest.Required() {
		waitNotification(t, "Gatehouse doctor", "doctor-report.txt")
	}

	// The service says it is stopping, then winds down with the stream
	// still open: the menu says stopping, then down once the service no
	// longer answers, not when the stream ends.
	svc.push(api.StreamNotice{Type: api.NoticeService, State: "stopping"})
	tr.waitFor("the service stopping", func(root node) bool { return slices.Contains(root.labels(), "Service stopping") })
	svc.windDown()
	tr.waitFor("the service down while its stream is open", func(root node) bool { return slices.Contains(root.labels(), "Service down") })

	// The service stops: the menu says so and offers to start it.
	svc.stop()
	root = tr.waitFor("the service down", func(root node) bool { return slices.Contains(root.labels(), "Service down") })
	if start, ok := root.child("Start service"); !ok || !start.Enabled {
		t.Errorf("no enabled Start service while down:\n%s", root)
	}
	for _, gone := range []string{"Approvals (0)", "Workspaces…"} {
		if slices.Contains(root.labels(), gone) {
			t.Errorf("the menu shows %q while the service is down", gone)
		}
	}
	tr.waitTooltip("Gatehouse: service down")

	// It comes back: the tray reconnects by itself.
	svc.start()
	root = tr.waitFor("the service back", func(root node) bool { return slices.Contains(root.labels(), "Service running") })
	if slices.Contains(root.labels(), "Start service") {
		t.Errorf("Start service is still shown after the reconnection:\n%s", root)
	}
	tr.waitTooltip("Gatehouse: degraded, commands run without the full sandbox")

	// Quit ends the process.
	quit, _ := root.child("Quit")
	tr.click(quit.ID)
	select {
	case <-tr.done:
		if tr.exitErr != nil {
			t.Errorf("the tray exited %v after Quit\n%s", tr.exitErr, tr.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the tray did not exit after Quit")
	}
}

// waitNotification waits for a notification whose summary starts with
// summary and whose body holds body.
func waitNotification(t *testing.T, summary, body string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var shown []notifytest.Shown
	var err error
	for time.Now().Before(deadline) {
		if shown, err = notifytest.History(); err == nil {
			for _, n := range shown {
				if strings.HasPrefix(n.Summary, summary) && strings.Contains(n.Body, body) {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("no notification %q holding %q (%v); shown: %+v", summary, body, err, shown)
}

// races returns the race detector's reports in out.
func races(out string) []string {
	const mark = "WARNING: DATA RACE"
	var reports []string
	for {
		i := strings.Index(out, mark)
		if i < 0 {
			return reports
		}
		out = out[i:]
		end := strings.Index(out, "\n==================")
		if end < 0 {
			end = len(out)
		}
		reports = append(reports, out[:end])
		out = out[end:]
	}
}

// lockedBuffer is the tray's output, read while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
