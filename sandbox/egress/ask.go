package egress

// This file holds a destination no allowlist entry covers until someone
// answers (Options.Ask): policy.egress_unknown: ask. Nothing is resolved
// before the answer, and an approved destination then goes through every
// check decide.go makes of an allowed one: an answer never reaches
// loopback, link-local, metadata, multicast or this machine's addresses,
// nor a denied CIDR. Those, when the destination is an IP literal (or
// localhost), are refused before anyone is asked; a name's addresses are
// known only once it is resolved, after the answer. The denylist and an
// invalid destination are refused before asking too.
//
// One exception is asked about: an IP literal on the host's loopback
// (127.0.0.0/8, ::1, or localhost) with no other problem — a service on
// this machine, outside the sandbox. It is asked with HostLoopback set,
// and reached only when the verdict says the person confirmed it is a
// local service (Verdict.LocalService). A name that resolves to loopback
// stays refused, whatever the answer.
//
// Connections to a destination already asked about wait for the same
// answer, and the answer holds for the rest of the Proxy's life (one
// execution): a refused destination is not asked about again.

import (
	"net"
	"strconv"
)

// A Destination is what Ask is asked about.
type Destination struct {
	// Host is a lower-case name or an IP address in canonical form.
	Host string
	Port uint16
	// Literal says Host is an IP address.
	Literal bool
	// HostLoopback says Host is the host's own loopback (an IP literal or
	// localhost): an answer reaches a service on this machine, outside
	// the sandbox.
	HostLoopback bool
}

// String is host:port, an IPv6 address in brackets.
func (d Destination) String() string {
	return net.JoinHostPort(d.Host, strconv.Itoa(int(d.Port)))
}

// A Verdict is Ask's answer. A refusal has Rule, a short code
// (approval_denied, approval_timeout, managed_bound...), and Reason, one
// line saying why.
type Verdict struct {
	Allow bool
	// LocalService says the person confirmed that a HostLoopback
	// destination is a service on this machine: without it an Allow does
	// not reach the host's loopback.
	LocalService bool
	Rule, Reason string
}

// An asked destination: done closes once v is set.
type asked struct {
	done chan struct{}
	v    Verdict
}

// consult asks about t when it is to be asked about: Ask is set, t is
// valid, on no denylist, and no allowlist entry covers it. It returns
// whether t was approved (and, for the host's loopback, confirmed a local
// service), or the refusal; neither when t is not to be asked about
// (decide judges it as without Ask). held is called before the wait
// starts.
func (p *Proxy) consult(t *target, held func()) (approved, local bool, r *refusal) {
	if p.opts.Ask == nil || t.err != nil || p.denylisted(t) != nil {
		return false, false, nil
	}
	if e, _ := p.allow.match(t); e != nil {
		return false, false, nil
	}
	hostLoop := false
	if t.ip.IsValid() || t.host == "localhost" {
		ip := t.ip
		if !ip.IsValid() {
			ip = loopback
		}
		if r := p.check(t.host, ip); r != nil {
			if r.Rule != ruleLoopback {
				return false, false, r // never asked about
			}
			hostLoop = true // asked, with the warning
		}
	}
	key := t.String()
	p.mu.Lock()
	a, ok := p.asked[key]
	if !ok {
		a = &asked{done: make(chan struct{})}
		p.asked[key] = a
	}
	p.mu.Unlock()
	if held != nil {
		held()
	}
	if !ok {
		a.v = p.opts.Ask(p.ctx, Destination{Host: t.host, Port: t.port, Literal: t.ip.IsValid(), HostLoopback: hostLoop})
		close(a.done)
	}
	select {
	case <-a.done:
	case <-p.ctx.Done():
		return false, false, refuse("approval_cancelled", "the command ended while %s waited for a person's answer", key)
	}
	if !a.v.Allow {
		rule := a.v.Rule
		if rule == "" {
			rule = "approval_denied"
		}
		return false, false, refuse(rule, "%s", a.v.Reason)
	}
	if hostLoop && !a.v.LocalService {
		return false, false, refuse(ruleLoopback, "%s is on this machine's loopback, and the answer did not confirm it is a service on this machine", key)
	}
	return true, hostLoop, nil
}

// denylisted returns the refusal of a destination on the denylist, or nil.
func (p *Proxy) denylisted(t *target) *refusal {
	for i, d := range p.opts.Denylist {
		if (d.Any() || hostMatch(d, t)) && (d.Port == 0 || d.Port == t.port) {
			field := p.opts.DenylistField
			if i < len(p.opts.DenylistFields) && p.opts.DenylistFields[i] != "" {
				field = p.opts.DenylistFields[i]
			}
			return refuse("denylisted", "%s is denied by %s entry %q", t.host, field, d.String())
		}
	}
	return nil
}
