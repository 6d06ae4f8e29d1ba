package notify

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// privateBus starts a dbus-daemon of its own for the test and points the
// session bus at it.
func privateBus(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		if os.Getenv("GATEHOUSE_DESKTOP_SESSION") == "1" {
			t.Fatal("dbus-daemon is missing in the desktop session")
		}
		t.Skip("dbus-daemon is not installed (.ci/test-deps.sh installs it)")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
}

// fakeServer is a notification service on the private bus.
type fakeServer struct {
	conn    *dbus.Conn
	caps    []string
	mu      sync.Mutex
	notes   []note
	closed  []uint32
	nextID  uint32
	arrived chan struct{}
}

type note struct {
	summary, body string
	actions       []string
}

func (f *fakeServer) GetCapabilities() ([]string, *dbus.Error) { return f.caps, nil }

func (f *fakeServer) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.notes = append(f.notes, note{summary, body, actions})
	f.arrived <- struct{}{}
	return f.nextID, nil
}

func (f *fakeServer) CloseNotification(id uint32) *dbus.Error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = append(f.closed, id)
	return nil
}

func startFake(t *testing.T, caps ...string) *fakeServer {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeServer{conn: conn, caps: caps, arrived: make(chan struct{}, 4)}
	if err := conn.Export(f, fdoPath, fdoIface); err != nil {
		t.Fatal(err)
	}
	if r, err := conn.RequestName(fdoName, dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: %v %v", fdoName, r, err)
	}
	return f
}

// An approval is raised with the actions Approve once and Deny; invoking
// one answers the request, by notification. A lookalike signal from
// another client of the bus answers nothing; the notification is
// withdrawn when the request closes.
func TestActionPrompter(t *testing.T) {
	privateBus(t)
	f := startFake(t, "body", "actions")
	p, err := NewActionPrompter()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	answers := make(chan api.AnswerRequest, 4)
	answer := func(r api.AnswerRequest) api.AnswerResponse { answers <- r; return api.AnswerResponse{OK: true} }
	a := api.Approval{ID: "ab12cd34", Kind: api.ApprovalCommand, Agent: "claude-code", Command: "git push --force origin main\x1b[2J", Rule: "ask-push", Origin: "user", Reason: `rule "ask-push" matched "git push": shared history`,
		Answers: []string{api.AnswerOnce, api.AnswerDeny}}
	if err := p.Open(a, answer); err != nil {
		t.Fatal(err)
	}
	<-f.arrived
	f.mu.Lock()
	n := f.notes[0]
	f.mu.Unlock()
	if n.summary != "Approval needed: claude-code wants to run `git push --force origin main\\x1b[2J`" || !strings.Contains(n.body, "gatehouse approve ab12cd34") || !strings.Contains(n.body, "shared history") {
		t.Errorf("notification %q / %q", n.summary, n.body)
	}
	if strings.Join(n.actions, ",") != "approve-once,Approve once,deny,Deny" {
		t.Errorf("actions %v", n.actions)
	}

	// A lookalike from another connection is ignored.
	other, err := dbus.ConnectSessionBus(dbus.WithSignalHandler(dbus.NewSequentialSignalHandler()))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.Emit(fdoPath, fdoIface+".ActionInvoked", uint32(1), ActionApproveOnce)
	select {
	case r := <-answers:
		t.Fatalf("a lookalike signal answered: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}

	// The service's own signal answers.
	f.conn.Emit(fdoPath, fdoIface+".ActionInvoked", uint32(1), ActionApproveOnce)
	select {
	case r := <-answers:
		if r.ID != a.ID || r.Answer != api.AnswerOnce || r.By != api.ByNotification {
			t.Errorf("answer %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the action did not answer")
	}
	p.Close(a.ID)
	f.mu.Lock()
	closed := append([]uint32(nil), f.closed...)
	f.mu.Unlock()
	if len(closed) != 1 || closed[0] != 1 {
		t.Errorf("closed %v", closed)
	}

	// Deny, on a second request.
	b := a
	b.ID = "ffff0000"
	p.Open(b, answer)
	<-f.arrived
	f.conn.Emit(fdoPath, fdoIface+".ActionInvoked", uint32(2), ActionDeny)
	if r := <-answers; r.ID != b.ID || r.Answer != api.AnswerDeny {
		t.Errorf("deny answer %+v", r)
	}
}

// A notification service without actions gets a notification that says
// how to answer, with no actions.
func TestActionPrompterNoActions(t *testing.T) {
	privateBus(t)
	f := startFake(t, "body")
	p, err := NewActionPrompter()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	p.Open(api.Approval{ID: "x1", Kind: api.ApprovalWorkspace, Agent: "claude-code", Workspace: "/home/u/work/api"}, nil)
	<-f.arrived
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.notes[0]; len(n.actions) != 0 || !strings.Contains(n.body, "gatehouse approvals x1") || !strings.Contains(n.summary, "wants to work outside every workspace") {
		t.Errorf("%+v", n)
	}
}

// A notification may offer an approving answer only where it shows the
// whole command: one longer than CommandWidth (its tail hidden after
// spaces) offers Deny and Show, and an Approve once signal for it answers
// nothing. A workspace request, which shows the directory and not the
// command, offers no approval either. Where the server reads bodies as
// markup, a command's markup reaches it as entities.
func TestActionPrompterWholeCommandOnly(t *testing.T) {
	privateBus(t)
	f := startFake(t, "body", "actions", "body-markup")
	p, err := NewActionPrompter()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	shown := make(chan string, 1)
	p.Show = func(a api.Approval) { shown <- a.ID }
	answers := make(chan api.AnswerRequest, 4)
	answer := func(r api.AnswerRequest) api.AnswerResponse { answers <- r; return api.AnswerResponse{OK: true} }
	all := []string{api.AnswerOnce, api.AnswerSession, api.AnswerDeny}

	long := api.Approval{ID: "10n9", Kind: api.ApprovalCommand, Agent: "claude-code", Rule: "ask-push", Origin: "user",
		Command: "git push origin feat" + strings.Repeat(" ", 200) + "; echo HIDDEN > ~/.bashrc", Answers: all,
		Reason: `rule "ask-push" matched "git push origin feat": pushing <b>is</b> shared`}
	p.Open(long, answer)
	<-f.arrived
	f.mu.Lock()
	n := f.notes[0]
	f.mu.Unlock()
	if got := strings.Join(n.actions, ","); got != "deny,Deny,show,Show" {
		t.Errorf("a cut command's actions %q, want deny and show only", got)
	}
	if strings.Contains(n.summary, "HIDDEN") || !strings.Contains(n.body, "gatehouse approvals 10n9") {
		t.Errorf("a cut command's notification %q / %q", n.summary, n.body)
	}
	if strings.Contains(n.body, "<b>") || !strings.Contains(n.body, "&lt;b&gt;is&lt;/b&gt;") {
		t.Errorf("body-markup server got markup: %q", n.body)
	}
	f.conn.Emit(fdoPath, fdoIface+".ActionInvoked", uint32(1), ActionApproveOnce)
	f.conn.Emit(fdoPath, fdoIface+".ActionInvoked", uint32(1), ActionShow)
	select {
	case id := <-shown:
		if id != long.ID {
			t.Errorf("Show showed %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Show did nothing")
	}
	select {
	case r := <-answers:
		t.Fatalf("Approve once answered a notification that did not offer it: %+v", r)
	default:
	}

	// Markup in the command itself, which fits: Approve once is offered,
	// and the body-markup server gets entities.
	short := api.Approval{ID: "5h0r", Kind: api.ApprovalCommand, Agent: "claude-code", Rule: "ask", Origin: "user",
		Command: "echo '<a href=\"http://x\">click</a>' \u202e", Answers: all, Reason: `rule "ask" matched "echo": see <i>this</i> & that`}
	p.Open(short, answer)
	<-f.arrived
	f.mu.Lock()
	n = f.notes[1]
	f.mu.Unlock()
	if got := strings.Join(n.actions, ","); got != "approve-once,Approve once,deny,Deny,show,Show" {
		t.Errorf("a whole command's actions %q", got)
	}
	if !strings.Contains(n.summary, `\u202e`) || strings.ContainsRune(n.summary, '\u202e') {
		t.Errorf("summary %q: the bidi control is not shown escaped", n.summary)
	}
	if strings.Contains(n.body, "<i>") || !strings.Contains(n.body, "&lt;i&gt;this&lt;/i&gt; &amp; that") {
		t.Errorf("body %q", n.body)
	}

	// A workspace request: no approval from the notification.
	ws := api.Approval{ID: "w5", Kind: api.ApprovalWorkspace, Agent: "claude-code", Workspace: "/home/u/work/app", Command: "make", Answers: []string{api.AnswerOnce, api.AnswerDeny}}
	p.Open(ws, answer)
	<-f.arrived
	f.mu.Lock()
	n = f.notes[2]
	f.mu.Unlock()
	if got := strings.Join(n.actions, ","); got != "deny,Deny,show,Show" {
		t.Errorf("a workspace request's actions %q", got)
	}
}

// The plain notification (beeep) escapes markup too, for a server that
// reads it.
func TestDesktopMarkup(t *testing.T) {
	privateBus(t)
	f := startFake(t, "body", "body-markup")
	if err := (Desktop{}).Send("Approval needed: <b>x</b>", "run <b>rm</b> & go"); err != nil {
		t.Fatal(err)
	}
	<-f.arrived
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.notes[0]; n.body != "run &lt;b&gt;rm&lt;/b&gt; &amp; go" {
		t.Errorf("body %q", n.body)
	}
}
