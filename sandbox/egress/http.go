package egress

// This file speaks the proxy side of HTTP/1.x. Request heads are parsed
// strictly and by hand, so that the destination checked is byte for byte
// the one received: no percent-decoding, no folding, no normalisation
// beyond lower-casing a name.
//
//	CONNECT host:port HTTP/1.1         a tunnel; the port is required
//	GET http://host[:port]/path HTTP/1.1
//	                                   plain http: forwarded in origin form
//	                                   with Connection: close, then the
//	                                   connection is a tunnel to that host
//
// A Host header must name the request's destination (plain http) and is
// ignored for CONNECT: it never widens what the request line asked for.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	maxHeadBytes = 64 << 10
	maxHeaders   = 100
)

// A request is one parsed HTTP request head.
type request struct {
	method, target, version string
	headers                 []header
}

type header struct{ name, value string }

var errHeadTooLarge = errors.New("request head too large")

// readHead reads an HTTP request head (through the empty line) and parses
// it strictly.
func readHead(br *bufio.Reader) (*request, error) {
	budget := maxHeadBytes
	readLine := func() (string, error) {
		var line []byte
		for {
			frag, err := br.ReadSlice('\n')
			if len(frag) > budget {
				return "", errHeadTooLarge
			}
			budget -= len(frag)
			line = append(line, frag...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				return "", err
			}
			break
		}
		s := strings.TrimSuffix(string(line[:len(line)-1]), "\r")
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
				return "", fmt.Errorf("the request head contains %s", describeByte(c))
			}
		}
		return s, nil
	}
	first, err := readLine()
	if err != nil {
		return nil, err
	}
	parts := strings.Split(first, " ")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return nil, errors.New("malformed request line")
	}
	r := &request{method: parts[0], target: parts[1], version: parts[2]}
	if !isToken(r.method) {
		return nil, errors.New("malformed method")
	}
	if r.version != "HTTP/1.1" && r.version != "HTTP/1.0" {
		return nil, fmt.Errorf("unsupported protocol version %q", r.version)
	}
	for {
		line, err := readLine()
		if err != nil {
			return nil, err
		}
		if line == "" {
			return r, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, errors.New("folded header lines are not accepted")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			return nil, errors.New("malformed header line")
		}
		if len(r.headers) == maxHeaders {
			return nil, errHeadTooLarge
		}
		r.headers = append(r.headers, header{name, strings.Trim(value, " \t")})
	}
}

// isToken reports whether s is an HTTP token (RFC 9110 tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// absoluteTarget splits an absolute-form http request target into its
// authority and the origin-form target to forward.
func absoluteTarget(t string) (authority, path string, err error) {
	const scheme = "http://"
	if len(t) < len(scheme) || !strings.EqualFold(t[:len(scheme)], scheme) {
		switch {
		case strings.HasPrefix(t, "/"):
			return "", "", errors.New("not a proxy request: the target must be an absolute http:// URL")
		case len(t) >= 8 && strings.EqualFold(t[:8], "https://"):
			return "", "", errors.New("https:// is proxied with CONNECT, not as a plain request")
		}
		return "", "", errors.New("only http:// URLs are proxied as plain requests")
	}
	rest := t[len(scheme):]
	if strings.IndexByte(rest, '#') >= 0 {
		return "", "", errors.New("the target has a fragment")
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, path = rest[:end], rest[end:]
	switch {
	case authority == "":
		return "", "", errors.New("the URL names no host")
	case strings.IndexByte(authority, '@') >= 0:
		return "", "", errors.New("user information in the URL is not accepted")
	case path == "":
		path = "/"
	case path[0] == '?':
		path = "/" + path
	}
	return authority, path, nil
}

// hopByHop are the headers that concern the proxy connection only; they
// are not forwarded.
var hopByHop = []string{"connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "upgrade"}

// keepAlways are headers a Connection header cannot make the proxy drop:
// they frame the message or name its destination.
var keepAlways = []string{"host", "content-length", "transfer-encoding"}

func (p *Proxy) serveHTTP(c net.Conn, br *bufio.Reader, start time.Time) {
	req, err := readHead(br)
	if err != nil {
		if errors.Is(err, errHeadTooLarge) {
			httpError(c, 431, "Request Header Fields Too Large", err.Error())
			return
		}
		if !isClosed(err) {
			httpError(c, 400, "Bad Request", err.Error())
		}
		return
	}
	if req.method == "CONNECT" {
		t := parseAuthority(req.target, 0)
		up, r, err := p.open(c, t)
		if r != nil {
			httpRefusal(c, t, r)
			return
		}
		if err != nil {
			httpError(c, 502, "Bad Gateway", fmt.Sprintf("%s: %v", t, cause(err)))
			return
		}
		if _, err := c.Write([]byte(req.version + " 200 Connection established\r\n\r\n")); err != nil {
			up.Close()
			p.removeConn(up)
			return
		}
		c.SetDeadline(time.Time{})
		p.relay(c, up, t, buffered(br), start)
		return
	}

	authority, path, err := absoluteTarget(req.target)
	if err != nil {
		httpError(c, 400, "Bad Request", err.Error())
		return
	}
	t := parseAuthority(authority, 80)
	var hosts []string
	for _, h := range req.headers {
		if strings.EqualFold(h.name, "host") {
			hosts = append(hosts, h.value)
		}
	}
	if len(hosts) > 1 {
		httpError(c, 400, "Bad Request", "more than one Host header")
		return
	}
	if len(hosts) == 1 && t.err == nil {
		ht := parseAuthority(hosts[0], 80)
		if ht.err != nil || ht.host != t.host || ht.port != t.port {
			r := refuse("host_mismatch", "the Host header (%s) names another destination than the request (%s)", ht, t)
			p.countDenied(ht, r)
			httpRefusal(c, ht, r)
			return
		}
	}
	up, r, err := p.open(c, t)
	if r != nil {
		httpRefusal(c, t, r)
		return
	}
	if err != nil {
		httpError(c, 502, "Bad Gateway", fmt.Sprintf("%s: %v", t, cause(err)))
		return
	}
	// The request goes on in origin form, asking the server to close the
	// connection after its response: one request per connection, so that
	// each destination is decided.
	var b strings.Builder
	b.WriteString(req.method + " " + path + " " + req.version + "\r\n")
	var drop []string
	for _, h := range req.headers {
		if strings.EqualFold(h.name, "connection") || strings.EqualFold(h.name, "proxy-connection") {
			for _, tok := range strings.Split(h.value, ",") {
				drop = append(drop, strings.ToLower(strings.TrimSpace(tok)))
			}
		}
	}
	if len(hosts) == 0 {
		b.WriteString("Host: " + authority + "\r\n")
	}
	for _, h := range req.headers {
		n := strings.ToLower(h.name)
		if contains(hopByHop, n) || contains(drop, n) && !contains(keepAlways, n) {
			continue
		}
		b.WriteString(h.name + ": " + h.value + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	c.SetDeadline(time.Time{})
	p.tunnel(c, up, append([]byte(b.String()), buffered(br)...), start)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// buffered returns the bytes br read past the request head.
func buffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return append([]byte(nil), b...)
}

// httpRefusal answers 403 with one line naming the rule.
func httpRefusal(c net.Conn, t *target, r *refusal) {
	writeHTTP(c, 403, "Forbidden", r.Rule, fmt.Sprintf("gatehouse egress: refused %s: %s", t, r.Reason))
}

func httpError(c net.Conn, code int, status, msg string) {
	writeHTTP(c, code, status, "", "gatehouse egress: "+msg)
}

func writeHTTP(c net.Conn, code int, status, rule, line string) {
	line = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, line) + "\n"
	var b strings.Builder
	b.WriteString("HTTP/1.1 " + strconv.Itoa(code) + " " + status + "\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	if rule != "" {
		b.WriteString("X-Gatehouse-Egress-Rule: " + rule + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(len(line)) + "\r\n")
	b.WriteString("Connection: close\r\n\r\n")
	b.WriteString(line)
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte(b.String()))
}

// cause returns the innermost useful part of a dial error.
func cause(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// isClosed reports whether err means the client went away or was too slow,
// when there is no one to answer.
func isClosed(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ECONNRESET)
}
