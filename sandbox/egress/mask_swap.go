package egress

// This file is the swapping half of masking (mask.go): a placeholder bound
// to the request's host becomes the value in the request's head (headers,
// Basic credentials, query), the value becomes the placeholder again in
// the response (headers, and the streamed body through unswapWriter), and
// placeholders sent where they are not bound are counted.

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// countElsewhere counts the placeholders of credentials not bound to this
// host that the request carries in its head: sent as they are.
func (h *swapHandler) countElsewhere(r *http.Request) {
	m := h.p.opts.Masking
	var head strings.Builder
	head.WriteString(r.URL.String())
	for k, vs := range r.Header {
		head.WriteString(k + ": " + strings.Join(vs, ", ") + "\n")
		for _, v := range vs {
			if d := decodeBasic(v); d != "" {
				head.WriteString(d + "\n")
			}
		}
	}
	s := head.String()
	for _, c := range m.Credentials {
		if boundHere(c, h.creds) {
			continue
		}
		if strings.Contains(s, c.Placeholder) || strings.Contains(s, url.QueryEscape(c.Placeholder)) {
			h.p.countPlaceholder(c.ID, false)
		}
	}
}

func boundHere(c MaskedCredential, creds []MaskedCredential) bool {
	for _, b := range creds {
		if b.ID == c.ID {
			return true
		}
	}
	return false
}

// swapString replaces each credential's placeholder in s with its value,
// recording the credentials it used.
func swapString(s string, creds []MaskedCredential, used map[string]bool) string {
	for _, c := range creds {
		if strings.Contains(s, c.Placeholder) {
			s = strings.ReplaceAll(s, c.Placeholder, c.Value)
			used[c.ID] = true
		}
	}
	return s
}

// unswapString replaces each value in s with its placeholder.
func unswapString(s string, creds []MaskedCredential) string {
	for _, c := range creds {
		s = strings.ReplaceAll(s, c.Value, c.Placeholder)
	}
	return s
}

// swapHeader swaps placeholders in every header value, and inside the
// base64 of Basic credentials.
func swapHeader(hd http.Header, creds []MaskedCredential, used map[string]bool) {
	for k, vs := range hd {
		for i, v := range vs {
			v = swapString(v, creds, used)
			if d := decodeBasic(v); d != "" {
				if s := swapString(d, creds, used); s != d {
					scheme, _, _ := strings.Cut(v, " ")
					v = scheme + " " + base64.StdEncoding.EncodeToString([]byte(s))
				}
			}
			vs[i] = v
		}
		hd[k] = vs
	}
}

// decodeBasic returns the decoded credentials of a "Basic ..." header
// value, or "".
func decodeBasic(v string) string {
	scheme, rest, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return ""
	}
	return string(b)
}

// swapQuery swaps placeholders in a raw query, as written and
// percent-encoded.
func swapQuery(q string, creds []MaskedCredential, used map[string]bool) string {
	q = swapString(q, creds, used)
	for _, c := range creds {
		if e := url.QueryEscape(c.Placeholder); e != c.Placeholder && strings.Contains(q, e) {
			q = strings.ReplaceAll(q, e, url.QueryEscape(c.Value))
			used[c.ID] = true
		}
	}
	return q
}

// unswapWriter replaces values with placeholders in a stream. Values and
// placeholders have the same length, so it replaces in place; it holds
// back only the end of a write that may begin a value, until the next
// write or Close shows whether it does.
type unswapWriter struct {
	w     io.Writer
	creds []MaskedCredential
	held  []byte
}

// Write copies b (an io.Writer must leave it as it is) and passes it on.
func (u *unswapWriter) Write(b []byte) (int, error) {
	if err := u.writeOwned(append([]byte(nil), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// writeOwned passes b on, replacing values in it in place: the caller
// gives b up.
func (u *unswapWriter) writeOwned(b []byte) error {
	if len(u.held) > 0 {
		// A value may begin in what was held and end in b. This is rare
		// (the last read ended with the start of a value): join them.
		b = append(u.held, b...)
		u.held = nil
	}
	u.replace(b)
	// Hold back the longest end that may begin a value.
	keep := u.heldSuffix(b)
	if _, err := u.w.Write(b[:len(b)-keep]); err != nil {
		return err
	}
	u.held = append(u.held[:0], b[len(b)-keep:]...)
	return nil
}

// replace replaces every value in b with its placeholder, in place.
func (u *unswapWriter) replace(b []byte) {
	for _, c := range u.creds {
		v := c.Value
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte(v))
			if j < 0 {
				break
			}
			copy(b[i+j:], c.Placeholder)
			i += j + len(v)
		}
	}
}

func (u *unswapWriter) maxLen() int {
	n := 0
	for _, c := range u.creds {
		n = maxInt(n, len(c.Value))
	}
	return n
}

// heldSuffix returns the length of the longest suffix of buf that is a
// proper prefix of a value.
func (u *unswapWriter) heldSuffix(buf []byte) int {
	for k := min(len(buf), u.maxLen()-1); k > 0; k-- {
		tail := buf[len(buf)-k:]
		for _, c := range u.creds {
			if k < len(c.Value) && bytes.HasPrefix([]byte(c.Value), tail) {
				return k
			}
		}
	}
	return 0
}

// Close writes what was held back.
func (u *unswapWriter) Close() error {
	if len(u.held) == 0 {
		return nil
	}
	_, err := u.w.Write(u.held)
	u.held = nil
	return err
}
