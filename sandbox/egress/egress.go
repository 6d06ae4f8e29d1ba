// Package egress is the per-execution proxy that is a sandboxed command's
// only way out: a host:port allowlist with attribution.
//
// One Proxy lives for one execution. It listens on a unix socket that is
// bound into the sandbox, where Gatehouse's init accepts TCP connections
// made to 127.0.0.1 and hands each one over to it, the socket itself
// passed with SCM_RIGHTS (the bridge, in package sandboxinit): the bytes
// then flow between the client and the proxy directly. Ordinary clients
// may connect to the unix socket too. On each connection it speaks
// whichever protocol the client does, told apart by the first byte:
//
//   - HTTP/1.x: CONNECT host:port (tunnels, HTTPS among them) and
//     absolute-form requests for plain http (GET http://host/path);
//   - SOCKS5: CONNECT to a domain name, an IPv4 or an IPv6 address, without
//     authentication. BIND and UDP ASSOCIATE are refused.
//
// Every destination goes through the same decision (decide.go): the
// allowlist, then, for names, one resolution on the host whose addresses
// are checked and are the only ones dialed. A refused request gets HTTP 403
// with a one-line reason naming the rule, or the SOCKS5 reply "connection
// not allowed by ruleset" (0x02). Bodies are not inspected, and TLS is
// terminated only for the hosts of masked credentials (mask.go).
//
// The Proxy counts allowed and refused connections and keeps the first 16
// distinct refused destinations (Stats) for the execution's audit event.
package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/handoff"
)

// BridgeHandoff is the byte a bridge sends with each connection it hands
// over, the connection's socket attached (SCM_RIGHTS). No HTTP or SOCKS5
// request starts with it. It is defined in sandbox/handoff, which the
// sandbox init shares without linking this package.
const BridgeHandoff = handoff.Marker

// A Resolver looks up the addresses of a host name. *net.Resolver is one.
// The name is absolute: no search domain may be applied to it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Proxy.
type Options struct {
	// Allowlist decides the destinations; nil allows nothing.
	Allowlist *Allowlist
	// AllowlistField names the configuration field the allowlist came
	// from in refusals (default policy.egress_allowlist).
	AllowlistField string
	// DeniedCIDRs are never dialed, whatever the allowlist says.
	DeniedCIDRs []netip.Prefix
	// Denylist are destinations refused whatever the allowlist says: an
	// entry without a port matches every port, and "*" every destination.
	// DenylistField names where they came from in refusals.
	Denylist      []Entry
	DenylistField string
	// DenylistFields, when set, names the field of each Denylist entry
	// (one per entry; "" for DenylistField).
	DenylistFields []string
	// Ask, when set, is asked about a destination that no allowlist entry
	// covers (ask.go): the connection waits for its verdict, and an
	// allowed one is then resolved and checked as an allowlisted one is.
	// ctx ends with Close. Nil refuses such a destination.
	Ask func(ctx context.Context, d Destination) Verdict

	// IdleTimeout closes a connection that moved no byte in either
	// direction for that long (default 5 minutes). MaxLifetime closes any
	// connection that old (default 1 hour). HandshakeTimeout bounds the
	// reading of a request (default 10 seconds), DialTimeout a connection
	// to the destination (default 10 seconds), ResolveTimeout a name's
	// resolution (default 5 seconds).
	IdleTimeout, MaxLifetime, HandshakeTimeout, DialTimeout, ResolveTimeout time.Duration
	// MaxConns bounds the connections open at once (default 128); further
	// clients wait to be accepted.
	MaxConns int

	Logger *slog.Logger

	// Resolver resolves names; nil means the host's resolver. Only tests
	// set it.
	Resolver Resolver
	// Masking, when set, terminates TLS for the hosts of the masked
	// credentials the execution holds (mask.go).
	Masking *Masking

	// TestLoopbackNames are names whose loopback addresses may be dialed.
	// It exists so that tests can reach the servers they start on
	// loopback by name; production never sets it.
	TestLoopbackNames []string
}

// Stats describe the connections of one Proxy.
type Stats struct {
	Allowed, Denied int
	// DeniedHosts are the first MaxDeniedHosts distinct refused
	// destinations, as host:port, in the order they were refused.
	DeniedHosts []string
	// AllowedHosts are the first MaxDeniedHosts distinct destinations
	// let through, as host:port, in the order they were first allowed:
	// what the command reached (an ssh tunnel among them).
	AllowedHosts []string
	// Placeholders counts where each masked credential's placeholder
	// went, by id (mask.go); nil when none was seen.
	Placeholders map[string]PlaceholderUse
}

// MaxDeniedHosts is how many distinct refused destinations Stats keeps.
const MaxDeniedHosts = 16

// A Proxy serves one execution. Its methods are safe for concurrent use.
type Proxy struct {
	opts      Options
	allow     *Allowlist
	resolver  Resolver
	hostAddrs []netip.Addr
	log       *slog.Logger
	sem       chan struct{}
	// ctx ends with Close: resolutions and dials in progress stop then.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	stats  Stats
	seen   map[string]bool
	asked  map[string]*asked
	conns  map[net.Conn]struct{}
	lns    []net.Listener
	closed bool
	wg     sync.WaitGroup
}

// New returns a Proxy; it listens nowhere until Serve.
func New(opts Options) (*Proxy, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.IdleTimeout, 5*time.Minute)
	def(&opts.MaxLifetime, time.Hour)
	def(&opts.HandshakeTimeout, 10*time.Second)
	def(&opts.DialTimeout, 10*time.Second)
	def(&opts.ResolveTimeout, 5*time.Second)
	if opts.MaxConns <= 0 {
		opts.MaxConns = 128
	}
	if opts.AllowlistField == "" {
		opts.AllowlistField = "policy.egress_allowlist"
	}
	if opts.Masking != nil {
		if err := opts.Masking.check(); err != nil {
			return nil, err
		}
	}
	p := &Proxy{
		opts:     opts,
		allow:    opts.Allowlist,
		resolver: opts.Resolver,
		log:      opts.Logger,
		sem:      make(chan struct{}, opts.MaxConns),
		seen:     map[string]bool{},
		asked:    map[string]*asked{},
		conns:    map[net.Conn]struct{}{},
	}
	p.stats.DeniedHosts = []string{}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if p.allow == nil {
		p.allow = &Allowlist{}
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.resolver == nil {
		p.resolver = absolute{net.DefaultResolver}
	}
	addrs, err := hostAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing this machine's addresses: %w", err)
	}
	p.hostAddrs = addrs
	return p, nil
}

// absolute resolves names as absolute (a trailing dot), so that the name
// resolved is exactly the name checked, never one with a search domain.
type absolute struct{ r *net.Resolver }

func (a absolute) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return a.r.LookupNetIP(ctx, network, host+".")
}

// hostAddrs lists the addresses of this machine's interfaces.
func hostAddrs() ([]netip.Addr, error) {
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, ifa := range ifas {
		if n, ok := ifa.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, a.Unmap())
			}
		}
	}
	return out, nil
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("egress proxy closed")

// Serve accepts connections on ln until Close, and returns ErrClosed then.
func (p *Proxy) Serve(ln net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	p.lns = append(p.lns, ln)
	p.mu.Unlock()
	for {
		// The bound on connections: wait for a slot before accepting, so
		// that further clients queue in the listen backlog.
		p.sem <- struct{}{}
		c, err := ln.Accept()
		if err != nil {
			<-p.sem
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		if !p.track(c) {
			<-p.sem
			c.Close()
			return ErrClosed
		}
		go func() {
			defer p.wg.Done()
			released := false
			release := func() {
				if !released {
					released = true
					<-p.sem
				}
			}
			defer release()
			defer p.untrack(c)
			p.serveConn(c, release)
		}()
	}
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// addConn registers an upstream connection so that Close ends it too; it
// reports false when the proxy is closing.
func (p *Proxy) addConn(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) removeConn(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// Close stops the listeners, ends every connection and waits for their
// handlers. It is safe to call more than once.
func (p *Proxy) Close() error {
	p.cancel()
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for _, ln := range p.lns {
			ln.Close()
		}
		for c := range p.conns {
			c.Close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.DeniedHosts = append([]string{}, s.DeniedHosts...)
	s.AllowedHosts = slices.Clone(s.AllowedHosts)
	s.Placeholders = maps.Clone(s.Placeholders)
	return s
}

func (p *Proxy) countAllowed(t *target) {
	dest := t.String()
	p.mu.Lock()
	p.stats.Allowed++
	if !slices.Contains(p.stats.AllowedHosts, dest) && len(p.stats.AllowedHosts) < MaxDeniedHosts {
		p.stats.AllowedHosts = append(p.stats.AllowedHosts, dest)
	}
	p.mu.Unlock()
	p.log.Debug("egress allowed", "dest", dest)
}

func (p *Proxy) countDenied(t *target, r *refusal) {
	dest := t.String()
	p.mu.Lock()
	p.stats.Denied++
	if !p.seen[dest] && len(p.stats.DeniedHosts) < MaxDeniedHosts {
		p.seen[dest] = true
		p.stats.DeniedHosts = append(p.stats.DeniedHosts, dest)
	}
	p.mu.Unlock()
	p.log.Info("egress refused", "dest", dest, "rule", r.Rule, "reason", r.Reason)
}

// serveConn handles one connection: a client, or a bridge handing clients
// over (which calls release, since it is no client itself).
func (p *Proxy) serveConn(c net.Conn, release func()) {
	start := time.Now()
	c.SetDeadline(start.Add(p.opts.HandshakeTimeout))
	var r io.Reader = c
	if uc, ok := c.(*net.UnixConn); ok {
		// The first byte is read alone, with room for a socket attached
		// to it: a bridge's first handover.
		b, fds, err := readFirst(uc)
		if err != nil {
			return
		}
		if b == BridgeHandoff && len(fds) > 0 {
			release()
			p.serveBridge(uc, fds)
			return
		}
		closeFDs(fds)
		r = io.MultiReader(bytes.NewReader([]byte{b}), c)
	}
	br := bufio.NewReaderSize(r, 4096)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		p.serveSOCKS(c, br, start)
		return
	}
	p.serveHTTP(c, br, start)
}

// open decides t and dials it, for the client c. It counts the
// connection: allowed when a dial was attempted, denied when refused. On
// failure it returns the refusal, or an error when the destination was
// allowed but could not be reached. While t waits for an answer (ask.go),
// c's handshake deadline is lifted: the wait has its own bound.
func (p *Proxy) open(c net.Conn, t *target) (net.Conn, *refusal, error) {
	approved, local, r := p.consult(t, func() {
		if c != nil {
			c.SetDeadline(time.Time{})
		}
	})
	if r != nil {
		p.countDenied(t, r)
		return nil, r, nil
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.opts.ResolveTimeout+p.opts.DialTimeout)
	defer cancel()
	addrs, r, err := p.decide(ctx, t, approved, local)
	if r != nil {
		p.countDenied(t, r)
		return nil, r, nil
	}
	if err != nil {
		return nil, nil, err
	}
	p.countAllowed(t)
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	for _, a := range addrs {
		var c net.Conn
		// The address is dialed as checked: an IP literal, never resolved.
		c, err = d.DialContext(ctx, "tcp", a.String())
		if err == nil {
			if !p.addConn(c) {
				c.Close()
				return nil, nil, ErrClosed
			}
			return c, nil, nil
		}
	}
	return nil, nil, err
}
