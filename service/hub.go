package service

import (
	"context"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
)

// hub fans the live stream out to its subscribers (the tray, the
// dashboard). A subscriber that falls behind by more than its buffer is
// dropped: it reconnects and starts again from the status.
type hub struct {
	mu   sync.Mutex
	subs map[chan api.StreamNotice]struct{}
	// mode is the sandbox mode the last execution ran in, so that a change
	// is told once.
	mode string
	// ended: the service is stopping; the stream is over for everyone.
	ended bool
}

const subscriberBuffer = 256

func newHub() *hub { return &hub{subs: map[chan api.StreamNotice]struct{}{}} }

// subscribe returns a channel of notices until ctx ends; it is closed when
// ctx ends or the subscriber is dropped.
func (h *hub) subscribe(ctx context.Context) <-chan api.StreamNotice {
	c := make(chan api.StreamNotice, subscriberBuffer)
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		close(c)
		return c
	}
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() { h.drop(c) })
	return c
}

func (h *hub) drop(c chan api.StreamNotice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[c]; ok {
		delete(h.subs, c)
		close(c)
	}
}

// following reports whether anyone follows the stream now (a tray, a
// dashboard page).
func (h *hub) following() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs) > 0
}

// end closes every subscriber's stream after what was published to it
// (the service's "stopping" notice last): a tray or dashboard following
// it sees the end at once, and its connection no longer holds the
// service's shutdown open.
func (h *hub) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended = true
	for c := range h.subs {
		delete(h.subs, c)
		close(c)
	}
}

// publish sends n to every subscriber.
func (h *hub) publish(n api.StreamNotice) {
	if n.Time.IsZero() {
		n.Time = time.Now().UTC()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- n:
		default:
			delete(h.subs, c)
			close(c)
		}
	}
}

// event publishes an execution's (or a decision's) event, and a
// sandbox.mode notice when the mode it ran in differs from the last one.
func (h *hub) event(typ string, ev api.Event) {
	h.publish(api.StreamNotice{Type: typ, Event: &ev})
	if ev.SandboxMode == "" {
		return
	}
	h.mu.Lock()
	changed := h.mode != ev.SandboxMode
	h.mode = ev.SandboxMode
	h.mu.Unlock()
	if changed {
		h.publish(api.StreamNotice{Type: api.NoticeSandbox, Sandbox: &api.SandboxStatus{Mode: ev.SandboxMode}})
	}
}

// attendedBroker is the approvals broker, which knows whether a person
// follows its questions: a tray or a dashboard page on the live stream
// (pipeline.Attended).
type attendedBroker struct {
	*approvals.Broker
	hub *hub
}

func (b attendedBroker) Attended() bool { return b.hub.following() }
