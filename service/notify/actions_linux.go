package notify

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// The freedesktop notification service (Desktop Notifications
// Specification 1.2): Notify with actions, and the ActionInvoked and
// NotificationClosed signals its owner sends back.
const (
	fdoName  = "org.freedesktop.Notifications"
	fdoPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	fdoIface = "org.freedesktop.Notifications"
)

// ActionPrompter raises approvals as freedesktop notifications with the
// actions Approve once (only where the notification shows the whole
// command: ApprovalText), Deny and Show (where Show is set), and answers
// the request when one is invoked. Only signals from the notification
// service's own connection count: another client of the bus cannot
// answer by sending a lookalike. Where the service offers no actions, the
// notification says how to answer instead (as PlainPrompter). Where it
// reads the body as markup (body-markup), the body's &, < and > are
// written as entities.
type ActionPrompter struct {
	// Show, when set before the first Open, is what the Show action does:
	// show the request whole (the dashboard).
	Show func(a api.Approval)

	conn    *dbus.Conn
	sigs    chan *dbus.Signal
	mu      sync.Mutex
	open    map[uint32]prompt // notification id → request
	byID    map[string]uint32 // request id → notification id
	actions bool
	markup  bool
}

type prompt struct {
	a      api.Approval
	answer Answerer
	keys   []string // the action keys offered
}

// NewActionPrompter connects to the session bus. It fails where there is
// none.
func NewActionPrompter() (*ActionPrompter, error) {
	if err := checkSession(); err != nil {
		return nil, err
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("connecting to the session bus: %w", err)
	}
	p := &ActionPrompter{conn: conn, sigs: make(chan *dbus.Signal, 16), open: map[uint32]prompt{}, byID: map[string]uint32{}}
	var caps []string
	if err := conn.Object(fdoName, fdoPath).Call(fdoIface+".GetCapabilities", 0).Store(&caps); err != nil {
		conn.Close()
		return nil, fmt.Errorf("no notification service on the session bus: %w", err)
	}
	p.actions = slices.Contains(caps, "actions")
	p.markup = slices.Contains(caps, "body-markup")
	if err := conn.AddMatchSignal(dbus.WithMatchInterface(fdoIface), dbus.WithMatchObjectPath(fdoPath)); err != nil {
		conn.Close()
		return nil, err
	}
	conn.Signal(p.sigs)
	go p.listen()
	return p, nil
}

// Shutdown ends the prompter's connection.
func (p *ActionPrompter) Shutdown() { p.conn.Close() }

// Open implements Prompter.
func (p *ActionPrompter) Open(a api.Approval, answer Answerer) error {
	title, body, whole := ApprovalText(a)
	if p.markup {
		body = termesc.Markup(body)
	}
	var actions, keys []string
	if p.actions {
		actions = approvalActions(a, whole, p.Show != nil)
		for i := 0; i < len(actions); i += 2 {
			keys = append(keys, actions[i])
		}
	}
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2)), "resident": dbus.MakeVariant(true)}
	var nid uint32
	call := p.conn.Object(fdoName, fdoPath).Call(fdoIface+".Notify", 0,
		AppName, uint32(0), "dialog-question", title, body, actions, hints, int32(0))
	if err := call.Store(&nid); err != nil {
		return fmt.Errorf("raising the approval notification: %w", err)
	}
	p.mu.Lock()
	p.open[nid] = prompt{a: a, answer: answer, keys: keys}
	p.byID[a.ID] = nid
	p.mu.Unlock()
	return nil
}

// Close implements Prompter: the notification of a request no longer
// pending is withdrawn.
func (p *ActionPrompter) Close(id string) {
	p.mu.Lock()
	nid, ok := p.byID[id]
	delete(p.byID, id)
	delete(p.open, nid)
	p.mu.Unlock()
	if ok {
		p.conn.Object(fdoName, fdoPath).Call(fdoIface+".CloseNotification", 0, nid)
	}
}

// owner returns the unique name that owns the notification service now.
func (p *ActionPrompter) owner() (string, error) {
	var name string
	err := p.conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, fdoName).Store(&name)
	return name, err
}

func (p *ActionPrompter) listen() {
	for sig := range p.sigs {
		if sig.Path != fdoPath || len(sig.Body) < 1 {
			continue
		}
		owner, err := p.owner()
		if err != nil || sig.Sender != owner {
			continue // not from the notification service
		}
		nid, ok := sig.Body[0].(uint32)
		if !ok {
			continue
		}
		switch sig.Name {
		case fdoIface + ".ActionInvoked":
			key, _ := sig.Body[1].(string)
			p.invoke(nid, key)
		case fdoIface + ".NotificationClosed":
			p.mu.Lock()
			if pr, ok := p.open[nid]; ok {
				delete(p.open, nid)
				delete(p.byID, pr.a.ID)
			}
			p.mu.Unlock()
		}
	}
}

// errNoAction is what an unknown action key answers.
var errNoAction = errors.New("unknown action")

func (p *ActionPrompter) invoke(nid uint32, key string) error {
	p.mu.Lock()
	pr, ok := p.open[nid]
	p.mu.Unlock()
	if !ok {
		return nil
	}
	if !slices.Contains(pr.keys, key) {
		return errNoAction // not offered on this notification
	}
	answer := ""
	switch key {
	case ActionShow:
		if p.Show != nil {
			p.Show(pr.a)
		}
		return nil
	case ActionApproveOnce:
		answer = api.AnswerOnce
	case ActionDeny:
		answer = api.AnswerDeny
	default:
		return errNoAction
	}
	pr.answer(api.AnswerRequest{ID: pr.a.ID, Answer: answer, By: api.ByNotification})
	return nil
}

// approvalActions are the freedesktop actions (key, label pairs) a
// notification of a offers: Approve once only where the notification
// shows the whole command and once is offered, and never for a service
// on this machine (HostLoopback: approving it needs the person's
// local-service tick, which a notification has no box for); Show where
// show is set; Deny where deny is offered.
func approvalActions(a api.Approval, whole, show bool) []string {
	var out []string
	if whole && !a.HostLoopback && slices.Contains(a.Answers, api.AnswerOnce) {
		out = append(out, ActionApproveOnce, "Approve once")
	}
	if slices.Contains(a.Answers, api.AnswerDeny) {
		out = append(out, ActionDeny, "Deny")
	}
	if show {
		out = append(out, ActionShow, "Show")
	}
	return out
}
