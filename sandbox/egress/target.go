package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// A target is one requested destination, as parsed from a request. What is
// checked is exactly what is dialed: the canonical host below is what the
// allowlist sees and what is resolved (or, for a literal, dialed).
type target struct {
	host string     // lower-case name, or the IP address in canonical form
	ip   netip.Addr // set for an IP literal
	port uint16
	// raw is the destination as received (host:port), kept for the record
	// when it is invalid.
	raw string
	err error // why the destination is not valid; it is refused
}

// String is the destination as recorded in denied_hosts: host:port with
// IPv6 in brackets, or the quoted raw bytes of an invalid destination.
func (t *target) String() string {
	if t.err != nil {
		s := t.raw
		if len(s) > 80 {
			s = s[:80] + "..."
		}
		return strconv.QuoteToASCII(s)
	}
	h := t.host
	if t.ip.Is6() {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(int(t.port))
}

// invalid returns a target refused for err.
func invalid(raw string, err error) *target { return &target{raw: raw, err: err} }

// parseAuthority parses host:port as found in a CONNECT request or an
// absolute URI. IPv6 addresses are in brackets. When the port is missing,
// defPort is used, or the authority is refused if defPort is 0.
func parseAuthority(s string, defPort uint16) *target {
	raw := s
	var host, port string
	hasPort := false
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return invalid(raw, fmt.Errorf("unterminated IPv6 address"))
		}
		host = s[:end+1]
		switch rest := s[end+1:]; {
		case rest == "":
		case rest[0] == ':':
			port, hasPort = rest[1:], true
		default:
			return invalid(raw, fmt.Errorf("unexpected bytes after the IPv6 address"))
		}
	} else {
		var ok bool
		host, port, ok = strings.Cut(s, ":")
		hasPort = ok
	}
	t := parseHost(host, true)
	t.raw = raw
	if t.err != nil {
		return t
	}
	switch {
	case hasPort:
		p, ok := parsePort(port)
		if !ok {
			return invalid(raw, fmt.Errorf("port %q is not a port from 1 to 65535", port))
		}
		t.port = p
	case defPort != 0:
		t.port = defPort
	default:
		return invalid(raw, fmt.Errorf("no port"))
	}
	return t
}

// parseHost parses a host name or IP literal. With brackets set, IPv6
// literals must be bracketed (as in URLs); otherwise they must not be (as
// in a SOCKS5 domain name field).
func parseHost(h string, brackets bool) *target {
	raw := h
	for i := 0; i < len(h); i++ {
		if c := h[i]; c <= ' ' || c >= 0x7f {
			return invalid(raw, fmt.Errorf("the host contains %s", describeByte(c)))
		}
	}
	if brackets && strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return invalid(raw, fmt.Errorf("unterminated IPv6 address"))
		}
		ip, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return invalid(raw, fmt.Errorf("%s is not an IPv6 address", h))
		}
		return &target{host: ip.String(), ip: ip, raw: raw}
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Zone() != "" || brackets && ip.Is6() {
			return invalid(raw, fmt.Errorf("%s is not a valid host", h))
		}
		return &target{host: ip.String(), ip: ip, raw: raw}
	}
	lower := strings.ToLower(h)
	if err := checkName(lower); err != nil {
		return invalid(raw, fmt.Errorf("the host %v", err))
	}
	return &target{host: lower, raw: raw}
}
