package service

import (
	"sync"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// ring keeps the most recent events in memory for the events endpoint.
// It is safe for concurrent use.
type ring struct {
	// added, when set, is told of each event added, outside the lock.
	added func(api.Event)

	mu   sync.Mutex
	buf  []api.Event
	next int
	full bool
}

func newRing(n int, added func(api.Event)) *ring {
	return &ring{buf: make([]api.Event, n), added: added}
}

func (r *ring) add(ev api.Event) {
	r.mu.Lock()
	r.buf[r.next] = ev
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
	r.mu.Unlock()
	if r.added != nil {
		r.added(ev)
	}
}

// list returns up to limit events, newest first; limit ≤ 0 means all.
func (r *ring) list(limit int) []api.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.buf)
	}
	if limit <= 0 || limit > n {
		limit = n
	}
	out := make([]api.Event, 0, limit)
	for i := 1; i <= limit; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}
