package egress

// This file terminates TLS for masked credentials (Options.Masking). The
// command holds placeholders; the real values are for their credentials'
// hosts alone. So:
//
//   - a tunnel (CONNECT, SOCKS5) to a host a masked credential is bound
//     to, port included, is not a tunnel: the proxy answers the client's
//     TLS itself, with a certificate for that host signed by the
//     install's CA (which the sandbox trusts), and sends each request on
//     to the real host over TLS it verifies against the system roots and
//     the operator's upstream CAs (Masking.UpstreamRoots). HTTP/1.1 and
//     HTTP/2 on both sides, negotiated separately;
//   - in each request's headers — Authorization (Bearer, and Basic where
//     the placeholder is inside the base64), any other header — and in
//     its URL (query, and user information when a client sends it), the
//     placeholder of a credential bound to that host becomes the value.
//     The request body is never rewritten: what a command sends in a
//     body reaches the host as written, placeholder included;
//   - in each response, headers and body (streamed, a value split across
//     reads included), the value becomes the placeholder again, so that
//     a host echoing a credential hands back nothing new. Responses from
//     these hosts are asked for without compression (Accept-Encoding is
//     dropped), so that the scan sees the bytes the client gets; one
//     compressed regardless is decoded before the scan, or refused
//     (mask_encoding.go);
//   - every other destination is tunnelled as before: TLS untouched, the
//     placeholder goes out as written and is worth nothing there. Where
//     the proxy sees the bytes (plain http, and the clear-text bytes a
//     client sends through a tunnel), a placeholder is counted as an
//     attempt to carry the credential elsewhere.
//
// Requests carrying a placeholder to a bound host, and attempts
// elsewhere, are counted per credential (Stats.Placeholders).

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Masking configures the proxy's handling of masked credentials.
type Masking struct {
	// CA signs the certificates the proxy presents for bound hosts, with
	// CAKey. Both must be set.
	CA    *x509.Certificate
	CAKey crypto.Signer
	// UpstreamRoots verify the bound hosts' own certificates; nil means
	// the system roots.
	UpstreamRoots *x509.CertPool
	// Credentials are the masked credentials the execution holds.
	Credentials []MaskedCredential
}

// A MaskedCredential is one credential the command holds a placeholder
// of.
type MaskedCredential struct {
	ID string
	// Value is put on the wire in place of Placeholder; both have the
	// same length.
	Value, Placeholder string
	// Hosts are the destinations the value is for; an entry without a
	// port allows the proxy's allowlist ports.
	Hosts *Allowlist
}

// PlaceholderUse counts where one credential's placeholder went:
// requests that carried it to a bound host, and connections that tried
// to carry it elsewhere.
type PlaceholderUse struct {
	Bound, Elsewhere int
}

func (m *Masking) check() error {
	if m.CA == nil || m.CAKey == nil {
		return errors.New("masking needs a CA and its key")
	}
	for _, c := range m.Credentials {
		switch {
		case c.ID == "" || c.Hosts == nil || c.Hosts.Empty():
			return fmt.Errorf("masked credential %q has no hosts", c.ID)
		case len(c.Value) != len(c.Placeholder) || c.Value == c.Placeholder || len(c.Value) == 0:
			return fmt.Errorf("masked credential %q: the placeholder must differ from the value and have its length", c.ID)
		}
	}
	return nil
}

// bound returns the masked credentials bound to t (host and port).
func (p *Proxy) bound(t *target) []MaskedCredential {
	m := p.opts.Masking
	if m == nil || t.err != nil {
		return nil
	}
	var out []MaskedCredential
	for _, c := range m.Credentials {
		if e, _ := c.Hosts.match(t); e != nil {
			out = append(out, c)
		}
	}
	return out
}

func (p *Proxy) countPlaceholder(id string, bound bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stats.Placeholders == nil {
		p.stats.Placeholders = map[string]PlaceholderUse{}
	}
	u := p.stats.Placeholders[id]
	if bound {
		u.Bound++
	} else {
		u.Elsewhere++
	}
	p.stats.Placeholders[id] = u
}

// relay carries a connection the proxy allowed to t: a tunnel, or, for a
// host a masked credential is bound to, the proxy's own TLS.
// Only a client that opens with TLS is answered with TLS: anything else
// (plain http to port 80 of a bound host, a protocol whose server speaks
// first) is tunnelled, placeholders as written.
func (p *Proxy) relay(client, up net.Conn, t *target, pending []byte, start time.Time) {
	if creds := p.bound(t); len(creds) > 0 {
		if len(pending) == 0 {
			client.SetReadDeadline(time.Now().Add(p.opts.HandshakeTimeout))
			b := make([]byte, 1)
			n, err := client.Read(b)
			client.SetReadDeadline(time.Time{})
			var ne net.Error
			if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
				up.Close()
				p.removeConn(up)
				return
			}
			pending = b[:n]
		}
		if len(pending) > 0 && pending[0] == tlsHandshake {
			p.intercept(client, up, t, creds, pending, start)
			return
		}
	}
	p.tunnel(client, up, pending, start)
}

// tlsHandshake is the first byte of a TLS connection (a handshake
// record).
const tlsHandshake = 0x16

// seenPlaceholders counts, once per connection, each placeholder found in
// bytes a client sends to a destination none of them is bound to.
type seenPlaceholders struct {
	p    *Proxy
	tail []byte
	seen map[string]bool
}

func (p *Proxy) newSeen() *seenPlaceholders {
	if p.opts.Masking == nil || len(p.opts.Masking.Credentials) == 0 {
		return nil
	}
	return &seenPlaceholders{p: p, seen: map[string]bool{}}
}

// scan looks for the placeholders in b, and across the end of the
// previous bytes and the start of b (a placeholder split across reads is
// found).
func (s *seenPlaceholders) scan(b []byte) {
	if s == nil || len(s.seen) == len(s.p.opts.Masking.Credentials) {
		return
	}
	keep := 0
	for _, c := range s.p.opts.Masking.Credentials {
		keep = maxInt(keep, len(c.Placeholder)-1)
	}
	joint := append(s.tail, b[:min(len(b), keep)]...)
	for _, c := range s.p.opts.Masking.Credentials {
		ph := []byte(c.Placeholder)
		if !s.seen[c.ID] && (bytes.Contains(joint, ph) || bytes.Contains(b, ph)) {
			s.seen[c.ID] = true
			s.p.countPlaceholder(c.ID, false)
		}
	}
	if len(b) >= keep {
		s.tail = append(joint[:0], b[len(b)-keep:]...)
		return
	}
	if len(joint) > keep {
		joint = joint[len(joint)-keep:]
	}
	s.tail = append(s.tail[:0], joint...)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// intercept serves the client's TLS for t itself and sends its requests
// on to t: up, already dialed, carries the first; more are dialed through
// the same decision when the client sends requests at once over HTTP/1.1.
func (p *Proxy) intercept(client, up net.Conn, t *target, creds []MaskedCredential, pending []byte, start time.Time) {
	m := p.opts.Masking
	cert, err := leafFor(m, t.host)
	if err != nil {
		p.log.Error("egress: making a certificate", "dest", t.String(), "err", err)
		up.Close()
		p.removeConn(up)
		return
	}
	tuneLoopback(client)
	var cc net.Conn = client
	if len(pending) > 0 {
		cc = &prefixConn{Conn: client, r: io.MultiReader(bytes.NewReader(pending), client)}
	}
	tc := tls.Server(cc, &tls.Config{
		Certificates: []tls.Certificate{*cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	})

	var once sync.Once
	first := up
	upstreams := &connSet{}
	defer upstreams.closeAll(p)
	tr := &http.Transport{
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var raw net.Conn
			once.Do(func() { raw, first = first, nil })
			if raw == nil {
				c, r, err := p.open(nil, t)
				if r != nil {
					return nil, fmt.Errorf("refused: %s", r.Reason)
				}
				if err != nil {
					return nil, cause(err)
				}
				raw = c
			}
			upstreams.add(raw)
			tuneLoopback(raw)
			u := tls.Client(raw, &tls.Config{
				ServerName: t.host,
				RootCAs:    m.UpstreamRoots,
				NextProtos: []string{"h2", "http/1.1"},
				MinVersion: tls.VersionTLS12,
			})
			hctx, cancel := context.WithTimeout(ctx, p.opts.HandshakeTimeout)
			defer cancel()
			if err := u.HandshakeContext(hctx); err != nil {
				raw.Close()
				return nil, err
			}
			return u, nil
		},
		ForceAttemptHTTP2:     true,
		DisableCompression:    true,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       p.opts.IdleTimeout,
		ResponseHeaderTimeout: p.opts.IdleTimeout,
	}
	defer func() {
		tr.CloseIdleConnections()
		once.Do(func() {
			if first != nil {
				first.Close()
				p.removeConn(first)
			}
		})
	}()

	h := &swapHandler{p: p, t: t, creds: creds, tr: tr}
	ln := &oneConnListener{c: tc, done: make(chan struct{})}
	srv := &http.Server{
		Handler:           h,
		IdleTimeout:       p.opts.IdleTimeout,
		ReadHeaderTimeout: p.opts.IdleTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed || s == http.StateHijacked {
				ln.Close()
			}
		},
	}
	client.SetDeadline(time.Time{})
	lifetime := time.AfterFunc(time.Until(start.Add(p.opts.MaxLifetime)), func() { srv.Close() })
	defer lifetime.Stop()
	stop := context.AfterFunc(p.ctx, func() { srv.Close() })
	defer stop()
	srv.Serve(ln)
	<-ln.done
	srv.Close()
}

// swapHandler sends each request on to the bound host, placeholders
// swapped for values, and the response back, values swapped for
// placeholders.
type swapHandler struct {
	p     *Proxy
	t     *target
	creds []MaskedCredential
	tr    *http.Transport
}

func (h *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		http.Error(w, "gatehouse egress: CONNECT inside a tunnel is not proxied", http.StatusMethodNotAllowed)
		return
	}
	// The Host a request names must be the destination decided: the value
	// goes nowhere else.
	if ht := parseAuthority(r.Host, h.t.port); ht.err != nil || ht.host != h.t.host || ht.port != h.t.port {
		w.Header().Set("X-Gatehouse-Egress-Rule", "host_mismatch")
		http.Error(w, fmt.Sprintf("gatehouse egress: refused %s: the Host header (%s) names another destination than the connection (%s)", h.t, r.Host, h.t), http.StatusForbidden)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme = "https"
	out.URL.Host = r.Host
	out.Header.Del("Accept-Encoding")
	for _, tok := range out.Header.Values("Connection") {
		for _, k := range strings.Split(tok, ",") {
			if k = strings.TrimSpace(k); k != "" {
				out.Header.Del(k)
			}
		}
	}
	for _, k := range []string{"Connection", "Proxy-Authorization", "Proxy-Connection", "Keep-Alive", "Upgrade", "Te", "Transfer-Encoding"} {
		out.Header.Del(k)
	}
	if r.ContentLength == 0 && r.Body != nil {
		out.Body = nil
	}
	used := map[string]bool{}
	swapHeader(out.Header, h.creds, used)
	if q := out.URL.RawQuery; q != "" {
		out.URL.RawQuery = swapQuery(q, h.creds, used)
	}
	if u := out.URL.User; u != nil {
		name := swapString(u.Username(), h.creds, used)
		if pw, hasPW := u.Password(); hasPW {
			out.URL.User = url.UserPassword(name, swapString(pw, h.creds, used))
		} else {
			out.URL.User = url.User(name)
		}
	}
	for _, c := range h.creds {
		if used[c.ID] {
			h.p.countPlaceholder(c.ID, true)
		}
	}
	h.countElsewhere(r)

	resp, err := h.tr.RoundTrip(out)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		msg := err.Error()
		var ue x509.UnknownAuthorityError
		var he x509.HostnameError
		var ie x509.CertificateInvalidError
		if errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ie) {
			msg = fmt.Sprintf("%s presented a certificate the proxy does not trust (%v); a host a masked credential is bound to must present one the system roots or exec.egress.upstream_ca_files trust", h.t, err)
		}
		h.p.log.Info("egress: bound host failed", "dest", h.t.String(), "err", err)
		w.Header().Set("X-Gatehouse-Egress-Rule", "upstream_failed")
		http.Error(w, "gatehouse egress: "+msg, http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, decoded, err := decodeBody(r.Method, resp)
	if err != nil {
		h.p.log.Info("egress: bound host's response refused", "dest", h.t.String(), "err", err)
		w.Header().Set("X-Gatehouse-Egress-Rule", ruleUnrequestedEncoding)
		http.Error(w, fmt.Sprintf("gatehouse egress: refused the response of %s: %v", h.t, err), http.StatusBadGateway)
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, unswapString(v, h.creds))
		}
	}
	for k := range resp.Trailer {
		w.Header().Add("Trailer", k)
	}
	w.WriteHeader(resp.StatusCode)
	fl := &flusher{w: w, rc: http.NewResponseController(w)}
	defer fl.stop()
	sw := &unswapWriter{w: fl, creds: h.creds}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if sw.writeOwned(buf[:n]) != nil {
				return
			}
			// A full record is most likely followed by more: its bytes go
			// out with the next ones, or after flushDelay at the latest. A
			// shorter read (an event of a stream, the end) goes out now.
			fl.flush(n >= fullRecord)
		}
		if err != nil {
			if decoded && err != io.EOF {
				// A body that stops decoding is cut off, not ended as if
				// whole: the client sees the response fail.
				h.p.log.Info("egress: bound host's response does not decode", "dest", h.t.String(), "err", err)
				panic(http.ErrAbortHandler)
			}
			break
		}
	}
	sw.Close()
	fl.flush(false)
	for k, vs := range resp.Trailer {
		for _, v := range vs {
			w.Header().Add(k, unswapString(v, h.creds))
		}
	}
}

// fullRecord is the plaintext of a full TLS record or HTTP/2 frame: the
// most one read of a response body returns.
const fullRecord = 16 << 10

// flushDelay bounds how long response bytes wait for more before they are
// flushed to the client.
const flushDelay = 2 * time.Millisecond

// flusher writes to a ResponseWriter and flushes it, at once or within
// flushDelay. Its timer and the handler never use the writer at the same
// time; stop ends the timer before the handler returns.
type flusher struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	mu      sync.Mutex
	pending bool // bytes written since the last flush
	armed   bool // the timer will flush them
	timer   *time.Timer
	done    bool
}

func (f *flusher) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = true
	return f.w.Write(b)
}

// flush flushes now, or, when later, within flushDelay.
func (f *flusher) flush(later bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.pending {
		return
	}
	if !later {
		f.rc.Flush()
		f.pending = false
		return
	}
	// The flush of a delay armed earlier covers these bytes too.
	switch {
	case f.armed:
	case f.timer == nil:
		f.timer = time.AfterFunc(flushDelay, f.timed)
	default:
		f.timer.Reset(flushDelay)
	}
	f.armed = true
}

func (f *flusher) timed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
	if f.pending && !f.done {
		f.rc.Flush()
		f.pending = false
	}
}

// stop ends the timer; the writer is not used after it returns.
func (f *flusher) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	if f.timer != nil {
		f.timer.Stop()
	}
}

// connSet closes the upstream connections of one intercepted client.
type connSet struct {
	mu sync.Mutex
	cs []net.Conn
}

func (s *connSet) add(c net.Conn) {
	s.mu.Lock()
	s.cs = append(s.cs, c)
	s.mu.Unlock()
}

func (s *connSet) closeAll(p *Proxy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cs {
		c.Close()
		p.removeConn(c)
	}
}

// prefixConn reads bytes already read from the client before the rest.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// oneConnListener hands out one connection, then blocks until closed.
type oneConnListener struct {
	mu   sync.Mutex
	c    net.Conn
	done chan struct{}
	shut bool
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if c := l.c; c != nil {
		l.c = nil
		l.mu.Unlock()
		return c, nil
	}
	l.mu.Unlock()
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.shut {
		l.shut = true
		close(l.done)
	}
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return dummyAddr{} }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "tcp" }
func (dummyAddr) String() string  { return "gatehouse-egress" }

// leaves caches the certificates presented for bound hosts, per CA and
// host, across executions.
var leaves sync.Map // leafKey → *tls.Certificate

type leafKey struct {
	ca   [32]byte
	host string
}

// leafValidity is how long a host's certificate is valid (and cached).
const leafValidity = 7 * 24 * time.Hour

// leafFor returns a certificate for host signed by m's CA.
func leafFor(m *Masking, host string) (*tls.Certificate, error) {
	key := leafKey{sha256.Sum256(m.CA.Raw), host}
	now := time.Now()
	if v, ok := leaves.Load(key); ok {
		c := v.(*tls.Certificate)
		if now.Add(time.Hour).Before(c.Leaf.NotAfter) {
			return c, nil
		}
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(leafValidity)
	if m.CA.NotAfter.Before(notAfter) {
		notAfter = m.CA.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, m.CA, &priv.PublicKey, m.CAKey)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, m.CA.Raw}, PrivateKey: priv, Leaf: leaf}
	leaves.Store(key, c)
	return c, nil
}
