package egress

// This file keeps a bound host's compressed response from carrying a
// value past the swap (mask.go). The proxy asks bound hosts for no
// Content-Encoding (it drops the client's Accept-Encoding, and its own
// transport adds none), so that the scan sees the bytes the client gets.
// A host may compress regardless. The scan cannot see a value inside
// compressed bytes, so a response with a coding the proxy did not ask
// for is decoded before the scan where the standard library decodes it
// (gzip, x-gzip, deflate; stacked codings too) and goes to the client
// decoded, without Content-Encoding or Content-Length; with any other
// coding (br, zstd, compress, one it does not know) it is refused with a
// 502 naming the coding, and nothing of its body reaches the client.

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ruleUnrequestedEncoding is the X-Gatehouse-Egress-Rule of a response
// refused for a Content-Encoding the proxy cannot decode.
const ruleUnrequestedEncoding = "unrequested_encoding"

// An encodingError says why a response's body cannot be scanned.
type encodingError struct {
	coding string // the coding, as the host named it
	err    error  // a decoder's error; nil for a coding not decoded at all
}

func (e *encodingError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("its body, Content-Encoding %q (which the proxy did not ask for), does not decode: %v", e.coding, e.err)
	}
	return fmt.Sprintf("it arrived with Content-Encoding %q, which the proxy did not ask for and cannot decode, so a credential's value in it could not be swapped for its placeholder", e.coding)
}

// codings returns the codings h names, in the order they were applied,
// identity left out, lower-cased.
func codings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

// hasBody reports whether resp, the answer to method, can carry body
// bytes.
func hasBody(method string, resp *http.Response) bool {
	return method != http.MethodHead && resp.StatusCode >= 200 &&
		resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified &&
		resp.ContentLength != 0
}

// decodeBody returns resp's body as the scan and the client are to see
// it: as it came when it names no coding (or cannot carry a body), and
// otherwise decoded, with the headers that described the coded bytes
// removed from resp. decoded says whether it was; an *encodingError when
// a coding is not one the standard library decodes, or the body's first
// bytes do not decode. The returned body's Close closes resp.Body.
func decodeBody(method string, resp *http.Response) (body io.ReadCloser, decoded bool, err error) {
	cs := codings(resp.Header)
	if len(cs) == 0 || !hasBody(method, resp) {
		return resp.Body, false, nil
	}
	for _, c := range cs {
		if c != "gzip" && c != "x-gzip" && c != "deflate" {
			return nil, false, &encodingError{coding: c}
		}
	}
	var r io.Reader = resp.Body
	// The last coding applied is the first undone.
	for i := len(cs) - 1; i >= 0; i-- {
		var err error
		if r, err = decoder(cs[i], r); err != nil {
			return nil, false, &encodingError{coding: cs[i], err: err}
		}
	}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	return readCloser{r, resp.Body}, true, nil
}

// decoder undoes coding c, one of those decodeBody accepts, on r.
func decoder(c string, r io.Reader) (io.Reader, error) {
	if c == "deflate" {
		// deflate is the zlib format (RFC 9110), but some servers send
		// raw DEFLATE: a zlib header says which.
		br := bufio.NewReader(r)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	}
	return gzip.NewReader(r)
}

// readCloser reads from a decoder and closes the body under it.
type readCloser struct {
	io.Reader
	io.Closer
}
