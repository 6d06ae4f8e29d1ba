// Package termesc neutralises terminal control in text a person will read:
// command output delivered to an agent or a terminal, and every human view
// of the audit trail.
//
// What is escaped, and how (everything else passes through unchanged):
//
//	C0 controls U+0000–U+001F but tab and newline   \xNN
//	a carriage return not followed by a newline     \x0d
//	DEL U+007F                                      \x7f
//	a byte that is not part of valid UTF-8          \xNN
//	C1 controls U+0080–U+009F                       \u0080 … \u009f
//	format characters (Unicode category Cf: bidi     \uNNNN, or \UNNNNNNNN
//	embeddings, overrides and isolates U+202A–       above U+FFFF
//	U+202E and U+2066–U+2069, marks U+200E/U+200F
//	and U+061C, zero-width space and joiners
//	U+200B–U+200D, word joiner U+2060, the BOM
//	U+FEFF anywhere, soft hyphen, tag characters
//	U+E0000–U+E007F…)
//	line and paragraph separators U+2028, U+2029    \u2028, \u2029
//
// So an escape sequence (ESC [ 2 K, OSC 52 to write the clipboard, OSC 0 to
// set the title) is shown as text, "\x1b[2K", and cannot act; a bare CR
// cannot rewrite a line; bidi and invisible characters cannot hide or
// reorder what is shown. CRLF is kept as it is (Windows-style line ends are
// common and harmless). A backslash is not escaped: "\x1b" in the output
// may be those four characters or an escaped ESC, which is ambiguous to
// the eye but never acts on a terminal.
//
// Escaping is a pure function of the bytes: a Writer gives the same result
// however the input is split across writes.
package termesc

import (
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plain marks the bytes that pass through as they are wherever they
// stand: printable ASCII, tab and newline.
var plain = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = true
	}
	t['\t'], t['\n'] = true, true
	return t
}()

// needs reports whether the rune r (decoded from valid UTF-8) is escaped.
// CR is decided by the caller, which sees what follows it.
func needs(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r < 0x7f:
		return false
	case r <= 0x9f: // DEL and C1
		return true
	case r < 0xad:
		return false
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// appendByte appends \xNN.
func appendByte(dst []byte, b byte) []byte {
	return append(dst, '\\', 'x', hexDigits[b>>4], hexDigits[b&15])
}

// appendRune appends \uNNNN or \UNNNNNNNN.
func appendRune(dst []byte, r rune) []byte {
	if r < 0x80 {
		return appendByte(dst, byte(r))
	}
	n := 4
	dst = append(dst, '\\', 'u')
	if r > 0xffff {
		n = 8
		dst[len(dst)-1] = 'U'
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(r>>(4*uint(i)))&15])
	}
	return dst
}

// Append appends the escaped form of p to dst. When final is false it
// stops before a tail of p that the next bytes may change (an incomplete
// UTF-8 sequence, a CR that may start a CRLF) and returns how much of p it
// consumed; with final true it consumes all of p.
func Append(dst, p []byte, final bool) ([]byte, int) {
	i, start := 0, 0
	for i < len(p) {
		// Most output is printable ASCII and newlines: skip a run of it
		// in one loop.
		for i < len(p) && plain[p[i]] {
			i++
		}
		if i == len(p) {
			break
		}
		b := p[i]
		if b == '\r' {
			if i+1 == len(p) && !final {
				dst = append(dst, p[start:i]...)
				return dst, i
			}
			if i+1 < len(p) && p[i+1] == '\n' {
				i += 2
				continue
			}
			dst = appendByte(append(dst, p[start:i]...), b)
			i++
			start = i
			continue
		}
		if b < 0x80 { // other C0 controls and DEL
			dst = appendByte(append(dst, p[start:i]...), b)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 {
			if !final && !utf8.FullRune(p[i:]) {
				dst = append(dst, p[start:i]...)
				return dst, i
			}
			dst = appendByte(append(dst, p[start:i]...), b)
			i++
			start = i
			continue
		}
		if needs(r) {
			dst = appendRune(append(dst, p[start:i]...), r)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, p[start:]...), len(p)
}

// String returns s escaped.
func String(s string) string {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 && b != '\t' && b != '\n' || b >= 0x7f {
			out, _ := Append(make([]byte, 0, len(s)+16), []byte(s), true)
			return string(out)
		}
	}
	return s
}

// Line returns s escaped for a face that shows it on one line or in a
// heading — a menu label, a notification, the dashboard's question —
// where a tab, a newline or a carriage return cannot be shown either: as
// String, with those written \t, \n and \r. Every face's text drawn
// from a command goes through Line or String, never a copy of its own.
func Line(s string) string {
	s = String(s)
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return lineBreaks.Replace(s)
}

var lineBreaks = strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`)

// Markup returns s, a text already escaped, with the characters of
// markup written as entities (&amp; &lt; &gt;): for a receiver that reads
// its text as markup, such as a freedesktop notification server that
// advertises body-markup, so that a command's "<b>" or "<a href=…>" is
// shown as written and never acts.
func Markup(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return markup.Replace(s)
}

var markup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// A Writer escapes what is written to it and passes it on to W. It holds
// back at most three bytes between writes (an incomplete UTF-8 sequence, or
// a CR); Close passes those on. It does not close W. A Writer is safe for
// concurrent use.
type Writer struct {
	w io.Writer

	mu     sync.Mutex
	held   [4]byte
	nheld  int
	out    []byte
	err    error
	closed bool
}

// NewWriter returns a Writer that passes escaped text on to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p. Once W fails, Write consumes p and returns W's error.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, io.ErrClosedPipe
	}
	w.write(p, false)
	if w.err != nil {
		return len(p), w.err
	}
	return len(p), nil
}

// Close passes on what is held back. It is safe to call more than once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.write(nil, true)
		w.closed = true
	}
	return w.err
}

func (w *Writer) write(p []byte, final bool) {
	out := w.out[:0]
	if w.nheld > 0 {
		// Complete the held tail with as few bytes of p as it needs: at
		// most three more end a UTF-8 sequence, one ends a CR.
		var joined [8]byte
		n := copy(joined[:], w.held[:w.nheld])
		m := copy(joined[n:], p[:min(len(p), 4)])
		var used int
		out, used = Append(out, joined[:n+m], final && m == len(p))
		switch {
		case used < n:
			// Still incomplete (p was very short): hold it all.
			w.nheld = copy(w.held[:], joined[used:n+m])
			p = nil
		default:
			w.nheld = 0
			p = p[used-n:]
		}
	}
	if len(p) > 0 || final {
		var used int
		out, used = Append(out, p, final)
		w.nheld = copy(w.held[:], p[used:])
	}
	if w.err == nil && len(out) > 0 {
		_, w.err = w.w.Write(out)
	}
	if cap(out) <= 64<<10 {
		w.out = out[:0]
	} else {
		w.out = nil
	}
}

// JSON returns the JSON text js with every character String would escape
// written as a JSON \u escape (a surrogate pair above U+FFFF), so that it
// decodes to the same value yet prints nothing a terminal obeys. Outside
// strings JSON has only spaces, tabs, newlines and CRs, which are kept.
// Bytes that are not UTF-8 become U+FFFD, as encoding/json does.
func JSON(js []byte) []byte {
	var out []byte
	start := 0
	for i := 0; i < len(js); {
		b := js[i]
		if b < 0x7f && (b >= 0x20 || b == '\t' || b == '\n' || b == '\r') {
			i++
			continue
		}
		r, size := utf8.DecodeRune(js[i:])
		if r != utf8.RuneError && b >= 0x80 && !needs(r) {
			i += size
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(js)+32)
		}
		out = append(out, js[start:i]...)
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			out = appendJSONRune(appendJSONRune(out, r1), r2)
		} else {
			out = appendJSONRune(out, r)
		}
		i += size
		start = i
	}
	if out == nil {
		return js
	}
	return append(out, js[start:]...)
}

func appendJSONRune(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}
