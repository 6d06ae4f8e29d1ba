package egress

// This file holds the allowlist's rules (DESIGN §7):
//
//	*                 every public name; never an IP literal or localhost
//	*.example.com     any subdomain of example.com, and example.com itself
//	example.com       exactly that name
//	192.0.2.7, [2001:db8::7], localhost
//	                  that literal exactly: the only way to reach an IP
//	                  address (loopback included) or localhost
//
// Any entry may end in ":port"; without one it allows the configured
// default ports (exec.egress.allowed_ports). Names are compared in lower
// case, are absolute (no search domain ever applies) and are plain ASCII
// host names: letters, digits and hyphens in dot-separated labels.

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// An Entry is one parsed allowlist entry.
type Entry struct {
	// Host is the entry's host in canonical form: "*", "*.example.com",
	// "example.com", "localhost", or an IP address (without brackets).
	Host string
	// Port is the entry's own port; 0 means the default ports.
	Port uint16
	// IP is set when Host is an IP literal.
	IP netip.Addr
}

// Any reports whether e is "*" (with or without a port).
func (e Entry) Any() bool { return e.Host == "*" }

// Wildcard reports whether e is "*.domain"; it returns the domain.
func (e Entry) Wildcard() (domain string, ok bool) {
	return strings.CutPrefix(e.Host, "*.")
}

// String formats e as it would be written in the configuration.
func (e Entry) String() string {
	h := e.Host
	if e.IP.Is6() {
		if e.Port == 0 {
			return h
		}
		h = "[" + h + "]"
	}
	if e.Port != 0 {
		return h + ":" + strconv.Itoa(int(e.Port))
	}
	return h
}

// metadataAddrs are the cloud metadata endpoints: never dialed, whatever
// the allowlist says.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack...
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// ParseEntry parses one allowlist entry. The error says what is wrong with
// it and what is wanted, as a phrase that follows the quoted entry: the
// caller names the entry (`"*.com" is too broad: ...`).
func ParseEntry(s string) (Entry, error) {
	if s == "" {
		return Entry{}, errors.New(`is empty; want a name like "example.com", "*.example.com" or "*"`)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return Entry{}, fmt.Errorf("contains %s; want a plain ASCII name like \"example.com\"", describeByte(c))
		}
	}
	host, portStr, hasPort, err := splitEntry(s)
	if err != nil {
		return Entry{}, err
	}
	var e Entry
	if hasPort {
		p, ok := parsePort(portStr)
		if !ok {
			return Entry{}, fmt.Errorf("has port %q, which is not a port; want 1 to 65535", portStr)
		}
		e.Port = p
	}
	lower := strings.ToLower(host)
	switch {
	case lower == "*":
		e.Host = "*"
		return e, nil
	case strings.HasPrefix(lower, "*."):
		domain := lower[2:]
		if strings.Contains(domain, "*") {
			return Entry{}, errors.New(`has "*" in the wrong place; "*" may only stand alone or as the first label ("*.example.com")`)
		}
		if err := checkName(domain); err != nil {
			return Entry{}, err
		}
		if !strings.Contains(domain, ".") {
			return Entry{}, fmt.Errorf("is too broad: it matches every name under the top-level domain %q; want a pattern like \"*.example.%s\"", domain, domain)
		}
		if ps, icann := publicsuffix.PublicSuffix(domain); icann && ps == domain {
			return Entry{}, fmt.Errorf("is too broad: %q is a public suffix shared by unrelated owners; want a pattern like \"*.example.%s\"", domain, domain)
		}
		e.Host = "*." + domain
		return e, nil
	case strings.Contains(lower, "*"):
		return Entry{}, errors.New(`has "*" in the wrong place; "*" may only stand alone or as the first label ("*.example.com")`)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := checkLiteralEntry(ip); err != nil {
			return Entry{}, err
		}
		e.Host, e.IP = ip.String(), ip
		return e, nil
	}
	if err := checkName(lower); err != nil {
		return Entry{}, err
	}
	e.Host = lower
	return e, nil
}

// MaxWildcards is how many entries Wildcards offers at most.
const MaxWildcards = 3

// Wildcards returns the *.domain entries a person may pick to allow (or
// deny) host, a name, at port instead of the exact host:port, narrowest
// first and widest last: one for each domain host lies in, from its parent
// up to its registrable domain (the one under its public suffix, ICANN or
// private: never *.co.uk, *.github.io or *.s3.amazonaws.com), or the
// registrable domain itself when host is one, each with port. Deep names
// keep the MaxWildcards widest. None for an IP address, localhost or a name
// with no registrable domain. Every entry parses, and covers host:port.
func Wildcards(host string, port uint16) []string {
	host = strings.ToLower(host)
	if _, err := netip.ParseAddr(host); err == nil || host == "localhost" || checkName(host) != nil {
		return nil
	}
	top, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return nil
	}
	var out []string
	for d := host; ; {
		if d != host || d == top {
			e := "*." + d + ":" + strconv.Itoa(int(port))
			if _, err := ParseEntry(e); err == nil {
				out = append(out, e)
			}
		}
		if d == top {
			break
		}
		_, d, _ = strings.Cut(d, ".")
	}
	if len(out) > MaxWildcards {
		out = out[len(out)-MaxWildcards:]
	}
	return out
}

// splitEntry splits an entry into host and port: "h", "h:p", "[v6]",
// "[v6]:p", or a bare IPv6 address "v6".
func splitEntry(s string) (host, port string, hasPort bool, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false, errors.New(`has no closing "]"`)
		}
		host, rest := s[1:end], s[end+1:]
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", "", false, fmt.Errorf("has brackets around %q, which is not an IPv6 address; brackets are for IPv6 addresses (without a zone) only", host)
		}
		if rest == "" {
			return host, "", false, nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", "", false, errors.New(`has bytes after "]"; want [address] or [address]:port`)
		}
		return host, rest[1:], true, nil
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, "", false, nil
	case 1:
		h, p, _ := strings.Cut(s, ":")
		return h, p, true, nil
	}
	// A bare IPv6 address, without a port.
	if _, err := netip.ParseAddr(s); err != nil {
		return "", "", false, errors.New("is neither a name nor an IP address; write an IPv6 address with a port as [address]:port")
	}
	return s, "", false, nil
}

// checkLiteralEntry refuses IP literals that can never be meaningful
// destinations, so that the configuration does not promise them.
func checkLiteralEntry(ip netip.Addr) error {
	switch {
	case ip.Zone() != "":
		return errors.New("carries a zone; IPv6 zones are not supported")
	case slices.Contains(metadataAddrs, ip.Unmap()):
		return errors.New("is a cloud metadata endpoint, which is never reachable")
	case ip.Unmap().IsUnspecified() || ip.Unmap().Is4() && ip.Unmap().As4()[0] == 0:
		return errors.New("is not a destination address")
	case ip.IsMulticast() || ip.Unmap() == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return errors.New("is a multicast or broadcast address; only TCP destinations can be allowed")
	}
	return nil
}

// checkName reports whether s (already lower case) is a valid absolute host
// name: dot-separated labels of letters, digits and hyphens, each 1 to 63
// long and not starting or ending with a hyphen, 253 bytes at most, no
// trailing dot, and not something a resolver could read as a number
// (2130706433, 0x7f.1, 127.1).
func checkName(s string) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case len(s) > 253:
		return errors.New("is longer than 253 bytes")
	case strings.HasSuffix(s, "."):
		return errors.New("ends in a dot; write the name without it")
	}
	labels := strings.Split(s, ".")
	numeric := 0
	for _, l := range labels {
		switch {
		case l == "":
			return errors.New("has an empty label")
		case len(l) > 63:
			return errors.New("has a label longer than 63 bytes")
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Errorf("has a label starting or ending with a hyphen (%q)", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("contains %s; a host name has letters, digits, hyphens and dots only", describeByte(c))
			}
		}
		if numberLike(l) {
			numeric++
		}
	}
	if numeric == len(labels) || isDigits(labels[len(labels)-1]) {
		return errors.New("is a number or an IP address in a non-standard form; write IP addresses as 192.0.2.7 or [2001:db8::7]")
	}
	return nil
}

// numberLike reports whether a label is a number as inet_aton reads one:
// decimal, octal (leading 0) or hexadecimal (0x).
func numberLike(l string) bool {
	if h, ok := strings.CutPrefix(l, "0x"); ok {
		for i := 0; i < len(h); i++ {
			c := h[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	return isDigits(l)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parsePort parses a decimal port, 1 to 65535, without sign or leading
// zeros.
func parsePort(s string) (uint16, bool) {
	if s == "" || len(s) > 5 || s[0] == '0' || !isDigits(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

func describeByte(c byte) string {
	switch {
	case c == 0:
		return "a NUL byte"
	case c == ' ':
		return "a space"
	case c < ' ' || c == 0x7f:
		return fmt.Sprintf("a control character (0x%02x)", c)
	case c >= 0x80:
		return "a non-ASCII byte (write internationalised names in their xn-- form)"
	}
	return fmt.Sprintf("%q", string(c))
}

// An Allowlist decides which destinations may be reached. It is immutable
// and safe for concurrent use.
type Allowlist struct {
	entries []Entry
	ports   []uint16
}

// DefaultPorts are the ports an entry without ":port" allows when the
// configuration names none.
var DefaultPorts = []int{443, 80}

// ParseAllowlist parses entries; ports are the ports an entry without its
// own allows (nil means DefaultPorts). An empty list allows nothing. The
// error names each bad entry by its index.
func ParseAllowlist(entries []string, ports []int) (*Allowlist, error) {
	if ports == nil {
		ports = DefaultPorts
	}
	a := &Allowlist{}
	var errs []error
	for i, s := range entries {
		e, err := ParseEntry(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %d: %q %w", i, s, err))
			continue
		}
		a.entries = append(a.entries, e)
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("%d is not a port", p))
			continue
		}
		a.ports = append(a.ports, uint16(p))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return a, nil
}

// Empty reports whether a allows nothing.
func (a *Allowlist) Empty() bool { return len(a.entries) == 0 }

// Entries returns a copy of the parsed entries.
func (a *Allowlist) Entries() []Entry { return slices.Clone(a.entries) }

func (a *Allowlist) portOK(e Entry, port uint16) bool {
	if e.Port != 0 {
		return e.Port == port
	}
	return slices.Contains(a.ports, port)
}

// hostMatch reports whether entry e covers the target host t, regardless
// of port.
func hostMatch(e Entry, t *target) bool {
	switch {
	case t.ip.IsValid():
		return e.IP.IsValid() && e.IP == t.ip
	case t.host == "localhost":
		return e.Host == "localhost"
	case e.Any():
		return true
	}
	if d, ok := e.Wildcard(); ok {
		return t.host == d || strings.HasSuffix(t.host, "."+d)
	}
	return !e.IP.IsValid() && e.Host == t.host
}

// match finds the entry allowing t. When none does, hostOnly is an entry
// that covers the host but not the port (for the message), if any.
func (a *Allowlist) match(t *target) (allowed, hostOnly *Entry) {
	for i := range a.entries {
		e := &a.entries[i]
		if !hostMatch(*e, t) {
			continue
		}
		if a.portOK(*e, t.port) {
			return e, nil
		}
		if hostOnly == nil {
			hostOnly = e
		}
	}
	return nil, hostOnly
}
