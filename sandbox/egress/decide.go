package egress

// This file decides whether a destination may be dialed, and at which
// addresses. The rules, in order:
//
//  1. an invalid destination is refused;
//  2. a destination on the denylist is refused, an empty allowlist
//     refuses everything;
//  3. the destination must match an entry, port included (IP literals and
//     localhost only through an entry that is that literal);
//  4. a name is resolved once, here; every address it resolves to is
//     checked, and only checked addresses are dialed. Refused: cloud
//     metadata endpoints, loopback, unspecified, link-local, multicast and
//     broadcast addresses, the host's own addresses, and the operator's
//     denied CIDRs. IPv4 inside IPv6 (::ffff:a.b.c.d, 64:ff9b::a.b.c.d) is
//     checked as the IPv4 address it carries;
//  5. a literal entry is dialed as written, except a metadata endpoint or
//     an address in a denied CIDR, which nothing allows.
//
// A destination a person approved (ask.go) skips rule 3 only: a name is
// resolved and checked by rule 4, and a literal is checked as a resolved
// address is, except that a literal on the host's loopback the person
// confirmed as a service on this machine is dialed.

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// A refusal says why a destination was refused: Rule is a short code,
// Reason one line naming the rule.
type refusal struct {
	Rule   string
	Reason string
}

// ruleLoopback refuses the host's loopback: a name that resolves there,
// or a literal nobody confirmed as a service on this machine.
const ruleLoopback = "loopback"

func refuse(rule, format string, args ...any) *refusal {
	return &refusal{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

// errResolve marks a name that could not be resolved: not a refusal, but
// nothing to dial.
type errResolve struct{ err error }

func (e errResolve) Error() string { return e.err.Error() }

var (
	nat64    = netip.MustParsePrefix("64:ff9b::/96")
	thisNet  = netip.MustParsePrefix("0.0.0.0/8")
	bcast    = netip.AddrFrom4([4]byte{255, 255, 255, 255})
	loopback = netip.AddrFrom4([4]byte{127, 0, 0, 1})
)

// decide returns the addresses t may be dialed at, a refusal, or an
// errResolve. approved says a person let t through though no entry
// covers it; local that they confirmed t, an IP literal or localhost on
// the host's loopback, is a service on this machine.
func (p *Proxy) decide(ctx context.Context, t *target, approved, local bool) ([]netip.AddrPort, *refusal, error) {
	if t.err != nil {
		return nil, refuse("invalid_destination", "%v", t.err), nil
	}
	if r := p.denylisted(t); r != nil {
		return nil, r, nil
	}
	if approved {
		if t.ip.IsValid() || t.host == "localhost" {
			ip := t.ip
			if !ip.IsValid() {
				ip = loopback
			}
			if r := p.check(t.host, ip); r != nil && !(local && r.Rule == ruleLoopback) {
				return nil, r, nil
			}
			return []netip.AddrPort{netip.AddrPortFrom(ip, t.port)}, nil, nil
		}
		return p.resolve(ctx, t)
	}
	field := p.opts.AllowlistField
	if p.allow.Empty() {
		return nil, refuse("no_egress", "%s is empty: no egress", field), nil
	}
	e, hostOnly := p.allow.match(t)
	if e == nil {
		switch {
		case hostOnly != nil:
			return nil, refuse("port_not_allowed", "port %d is not allowed for %s by %s entry %q (%s)",
				t.port, t.host, field, hostOnly.String(), p.portsNote(*hostOnly)), nil
		case t.ip.IsValid():
			return nil, refuse("ip_literal", "the IP address %s is not itself an entry of %s", t.host, field), nil
		case t.host == "localhost":
			return nil, refuse("ip_literal", "localhost is not itself an entry of %s", field), nil
		}
		return nil, refuse("not_allowlisted", "%s is not on %s", t.host, field), nil
	}
	if t.ip.IsValid() || t.host == "localhost" {
		ip := t.ip
		if !ip.IsValid() {
			ip = loopback
		}
		if rule, what := p.alwaysRefused(ip); rule != "" {
			return nil, refuse(rule, "%s is %s", ip, what), nil
		}
		return []netip.AddrPort{netip.AddrPortFrom(ip, t.port)}, nil, nil
	}
	return p.resolve(ctx, t)
}

// resolve resolves t's name once and returns the addresses that pass
// check, or the first refusal.
func (p *Proxy) resolve(ctx context.Context, t *target) ([]netip.AddrPort, *refusal, error) {
	rctx, cancel := context.WithTimeout(ctx, p.opts.ResolveTimeout)
	defer cancel()
	addrs, err := p.resolver.LookupNetIP(rctx, "ip", t.host)
	if err != nil {
		return nil, nil, errResolve{fmt.Errorf("resolving %s: %w", t.host, err)}
	}
	if len(addrs) == 0 {
		return nil, nil, errResolve{fmt.Errorf("%s has no addresses", t.host)}
	}
	var out []netip.AddrPort
	var first *refusal
	for _, a := range addrs {
		r := p.check(t.host, a)
		if r == nil {
			out = append(out, netip.AddrPortFrom(a, t.port))
		} else if first == nil {
			first = r
		}
	}
	if len(out) == 0 {
		return nil, first, nil
	}
	return out, nil, nil
}

// portsNote describes the ports entry e allows.
func (p *Proxy) portsNote(e Entry) string {
	if e.Port != 0 {
		return "it allows port " + strconv.Itoa(int(e.Port)) + " only"
	}
	ps := make([]string, len(p.allow.ports))
	for i, x := range p.allow.ports {
		ps[i] = strconv.Itoa(int(x))
	}
	return "without a port it allows exec.egress.allowed_ports: " + strings.Join(ps, ", ")
}

// embedded returns the IPv4 address a carries, if any, or a itself.
func embedded(a netip.Addr) netip.Addr {
	a = a.WithZone("").Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	return a
}

// alwaysRefused checks what no entry allows: metadata endpoints and the
// operator's denied CIDRs. It returns the rule and a phrase describing a.
func (p *Proxy) alwaysRefused(a netip.Addr) (rule, what string) {
	for _, x := range []netip.Addr{a, embedded(a)} {
		if slices.Contains(metadataAddrs, x) {
			return "metadata", "a cloud metadata endpoint, never reachable"
		}
		for _, c := range p.opts.DeniedCIDRs {
			if c.Contains(x) {
				return "denied_cidr", "in exec.egress.denied_cidrs (" + c.String() + ")"
			}
		}
	}
	return "", ""
}

// check judges one address a name resolved to.
func (p *Proxy) check(name string, a netip.Addr) *refusal {
	rule, what := p.alwaysRefused(a)
	x := embedded(a)
	switch {
	case rule != "":
	case x.IsLoopback():
		if slices.Contains(p.opts.TestLoopbackNames, name) {
			return nil
		}
		rule, what = ruleLoopback, "a loopback address"
	case x.IsUnspecified() || x.Is4() && thisNet.Contains(x):
		rule, what = "unspecified", "an unspecified address"
	case x.IsLinkLocalUnicast():
		rule, what = "link_local", "a link-local address"
	case x.IsMulticast() || x == bcast:
		rule, what = "multicast", "a multicast or broadcast address"
	case slices.Contains(p.hostAddrs, x):
		rule, what = "host_address", "an address of this machine"
	default:
		return nil
	}
	return refuse(rule, "%s resolves to %s, which is %s", name, a, what)
}
