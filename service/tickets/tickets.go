// Package tickets issues and redeems the single-use tickets of routed
// commands. A ticket stands for one decided execution: it is random (192
// bits), redeemable once, and expires. The relay finds its ticket's FIFOs
// by a name derived from the ticket, so the relay directory lists no
// ticket.
package tickets

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Prefix starts every ticket; it keeps a ticket from reading as a flag.
const Prefix = api.TicketPrefix

// rawBytes is the ticket's randomness: 192 bits.
const rawBytes = api.TicketRandomBytes

// encodedLen is the length of a ticket.
var encodedLen = len(Prefix) + base64.RawURLEncoding.EncodedLen(rawBytes)

// Errors of Redeem. The messages are the relay's one line on stderr.
var (
	ErrMalformed = api.ErrMalformedTicket
	ErrUnknown   = api.ErrUnknownTicket
	ErrUsed      = api.ErrUsedTicket
	ErrExpired   = api.ErrExpiredTicket
	ErrClosed    = errors.New("the Gatehouse service is shutting down")
	// ErrFull is Issue's error when as many tickets as its limit are
	// pending.
	ErrFull = errors.New("too many tickets are waiting for their relay")
)

// New returns a new random ticket.
func New() string {
	var b [rawBytes]byte
	rand.Read(b[:])
	return Prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Valid reports whether t has the form of a ticket (api.ValidTicket).
func Valid(t string) bool { return api.ValidTicket(t) }

// Name returns the base name of t's FIFOs in the relay directory
// (api.RelayName).
func Name(t string) string { return api.RelayName(t) }

// File names of one ticket's FIFOs and tombstone (api.RelayInName etc.).
func InName(name string) string   { return api.RelayInName(name) }
func OutName(name string) string  { return api.RelayOutName(name) }
func GoneName(name string) string { return api.RelayGoneName(name) }

// Tombstone contents: why a ticket's FIFOs are gone.
const (
	GoneUsed    = api.RelayGoneUsed
	GoneExpired = api.RelayGoneExpired
)

// How long a used or expired ticket is remembered, so that a replay is told
// "used" or "expired" rather than "unknown".
const remember = 10 * time.Minute

type state int

const (
	pending state = iota
	used
	expired
)

type entry[T any] struct {
	ticket string
	value  T
	state  state
	timer  *time.Timer
	until  time.Time // when a used or expired entry is forgotten
}

// A Store holds the tickets of one service. It is safe for concurrent use.
type Store[T any] struct {
	mu       sync.Mutex
	entries  map[string]*entry[T] // by Name
	pending  int                  // entries in state pending
	onExpire func(name string, v T)
	closed   bool
	now      func() time.Time
}

// NewStore returns a Store; onExpire is called (in its own goroutine) with
// each ticket's value when it expires unredeemed.
func NewStore[T any](onExpire func(name string, v T)) *Store[T] {
	return &Store[T]{entries: map[string]*entry[T]{}, onExpire: onExpire, now: time.Now}
}

// Issue returns a new ticket for v, its FIFO name, and its expiry. When
// max is positive and max tickets are already pending, it is ErrFull.
// prepare, when not nil, is called with the name before the ticket
// exists (so before it can be redeemed or expire); its error is Issue's,
// and no ticket is issued. It must not block: the store is locked.
func (s *Store[T]) Issue(v T, ttl time.Duration, max int, prepare func(name string) error) (ticket, name string, expires time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", "", time.Time{}, ErrClosed
	}
	if max > 0 && s.pending >= max {
		return "", "", time.Time{}, ErrFull
	}
	s.sweepLocked()
	ticket = New()
	name = Name(ticket)
	if prepare != nil {
		if err := prepare(name); err != nil {
			return "", "", time.Time{}, err
		}
	}
	e := &entry[T]{ticket: ticket, value: v}
	e.timer = time.AfterFunc(ttl, func() { s.expire(name, e) })
	s.entries[name] = e
	s.pending++
	return ticket, name, s.now().Add(ttl), nil
}

func (s *Store[T]) expire(name string, e *entry[T]) {
	s.mu.Lock()
	if e.state != pending || s.entries[name] != e {
		s.mu.Unlock()
		return
	}
	e.state, e.until = expired, s.now().Add(remember)
	s.pending--
	v := e.value
	s.mu.Unlock()
	if s.onExpire != nil {
		s.onExpire(name, v)
	}
}

// Redeem claims ticket t once and returns its value. The error is
// ErrMalformed, ErrUnknown, ErrUsed or ErrExpired.
func (s *Store[T]) Redeem(t string) (T, error) {
	var zero T
	if !Valid(t) {
		return zero, ErrMalformed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[Name(t)]
	if e == nil || subtle.ConstantTimeCompare([]byte(e.ticket), []byte(t)) != 1 {
		return zero, ErrUnknown
	}
	switch e.state {
	case used:
		return zero, ErrUsed
	case expired:
		return zero, ErrExpired
	}
	if s.closed {
		return zero, ErrClosed
	}
	e.timer.Stop()
	e.state, e.until = used, s.now().Add(remember)
	s.pending--
	v := e.value
	var z T
	e.value = z
	return v, nil
}

// Peek returns the value of ticket t while it is pending, without
// redeeming it. The error is Redeem's: ErrMalformed, ErrUnknown, ErrUsed,
// ErrExpired or ErrClosed. The value is the one Redeem will return: its
// holder must not change it.
func (s *Store[T]) Peek(t string) (T, error) {
	var zero T
	if !Valid(t) {
		return zero, ErrMalformed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[Name(t)]
	if e == nil || subtle.ConstantTimeCompare([]byte(e.ticket), []byte(t)) != 1 {
		return zero, ErrUnknown
	}
	switch {
	case e.state == used:
		return zero, ErrUsed
	case e.state == expired:
		return zero, ErrExpired
	case s.closed:
		return zero, ErrClosed
	}
	return e.value, nil
}

// Pending returns the number of tickets waiting for their relay.
func (s *Store[T]) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// Close expires no more tickets and redeems none; it returns the values
// of the tickets still pending, which will never run.
func (s *Store[T]) Close() map[string]T {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := map[string]T{}
	for name, e := range s.entries {
		if e.state == pending {
			e.timer.Stop()
			e.state = expired
			out[name] = e.value
		}
	}
	s.pending = 0
	return out
}

// sweepLocked forgets used and expired tickets after a while.
func (s *Store[T]) sweepLocked() {
	now := s.now()
	for name, e := range s.entries {
		if e.state != pending && now.After(e.until) {
			delete(s.entries, name)
		}
	}
}
