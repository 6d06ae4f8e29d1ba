package egress

// SOCKS5 (RFC 1928), the part a proxied client needs: no authentication,
// CONNECT to a domain name, an IPv4 or an IPv6 address. BIND and UDP
// ASSOCIATE are refused ("command not supported"), as is every other
// authentication method.

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"
)

const (
	socksVersion = 0x05

	socksNoAuth       = 0x00
	socksNoAcceptable = 0xff

	socksConnect = 0x01

	socksIPv4   = 0x01
	socksDomain = 0x03
	socksIPv6   = 0x04

	socksSucceeded          = 0x00
	socksGeneralFailure     = 0x01
	socksNotAllowed         = 0x02
	socksHostUnreachable    = 0x04
	socksConnRefused        = 0x05
	socksCmdNotSupported    = 0x07
	socksAddrTypeNotSupport = 0x08
)

func (p *Proxy) serveSOCKS(c net.Conn, br *bufio.Reader, start time.Time) {
	// Greeting: version, number of methods, methods.
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	if !contains1(methods, socksNoAuth) {
		c.Write([]byte{socksVersion, socksNoAcceptable})
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return
	}
	// Request: version, command, reserved, address type, address, port.
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return
	}
	if req[0] != socksVersion || req[2] != 0 {
		socksReply(c, socksGeneralFailure)
		return
	}
	t, err := readSOCKSAddr(br, req[3])
	if err != nil {
		if errors.Is(err, errAddrType) {
			socksReply(c, socksAddrTypeNotSupport)
		}
		return
	}
	if req[1] != socksConnect {
		r := refuse("socks_command", "SOCKS5 command %d is not supported; only CONNECT is", req[1])
		p.countDenied(t, r)
		socksReply(c, socksCmdNotSupported)
		return
	}
	up, r, err := p.open(c, t)
	switch {
	case r != nil:
		socksReply(c, socksNotAllowed)
		return
	case errors.As(err, new(errResolve)):
		socksReply(c, socksHostUnreachable)
		return
	case err != nil:
		socksReply(c, socksConnRefused)
		return
	}
	if socksReply(c, socksSucceeded) != nil {
		up.Close()
		p.removeConn(up)
		return
	}
	c.SetDeadline(time.Time{})
	p.relay(c, up, t, buffered(br), start)
}

var errAddrType = errors.New("unsupported SOCKS5 address type")

// readSOCKSAddr reads the address and port of a SOCKS5 request.
func readSOCKSAddr(br *bufio.Reader, atyp byte) (*target, error) {
	var t *target
	switch atyp {
	case socksIPv4:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, err
		}
		ip := netip.AddrFrom4(b)
		t = &target{host: ip.String(), ip: ip}
	case socksIPv6:
		var b [16]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, err
		}
		ip := netip.AddrFrom16(b)
		t = &target{host: ip.String(), ip: ip}
	case socksDomain:
		n, err := br.ReadByte()
		if err != nil {
			return nil, err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return nil, err
		}
		t = parseHost(string(name), false)
	default:
		return nil, errAddrType
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return nil, err
	}
	port := uint16(pb[0])<<8 | uint16(pb[1])
	t.raw += ":" + strconv.Itoa(int(port))
	if t.err == nil && port == 0 {
		t.err = errors.New("port 0 is not a port")
	}
	t.port = port
	return t, nil
}

func socksReply(c net.Conn, code byte) error {
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

func contains1(b []byte, x byte) bool {
	for _, c := range b {
		if c == x {
			return true
		}
	}
	return false
}
