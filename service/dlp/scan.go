package dlp

// This file is the matching engine. Every pattern has one or more anchors:
// four bytes that begin it in some representation. A scan rules out most
// positions a block at a time, by looking up pairs of bytes in a table of
// where they occur in anchors; at each position left it checks the four
// bytes against a 64 Kibit filter of the anchors' hashes, and only on a
// hit looks the anchor up and verifies the patterns it begins. Three kinds
// of verification:
//
//   - raw: a value, each byte literal or escaped (%XX, "+", \", \uXXXX);
//   - units: an encoding made of fixed-width units (a base64 character, a
//     hex byte, an od word), with whitespace and line offsets allowed
//     between units;
//   - regex: a regular expression anchored at the position, over a window
//     of at most the pattern's longest match.
//
// Encodings that wrap may break an anchor with a newline; a second, small
// table of the anchors with whitespace removed is checked at the three
// positions before each newline.
//
// A scan that is not final also says where it must stop deciding (hold):
// at a pattern whose verification ran out of input, or at trailing bytes
// that begin an anchor.

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"slices"
)

type kind uint8

const (
	kindRaw kind = iota
	kindUnits
	kindRegex
)

// status is the outcome of one verification.
type status uint8

const (
	fail status = iota
	match
	more // ran out of input while still matching
)

type pat struct {
	kind  kind
	label []byte

	// raw
	raw []byte

	// units
	text   []byte
	unit   int
	fold   bool       // compare ASCII case-insensitively (text is lower case)
	extend *[256]bool // the encoding's alphabet: one unit more on each side, then '=' padding
	pad    bool

	// regex
	re       func() *regexp.Regexp // compiled on first use
	maxLen   int
	boundary bool // the match may not follow a letter, digit or '_'
	valid    func([]byte) bool
}

// A span is a finding: buf[start:end] is replaced by pats[pat].label.
// from is where it was found (the anchor), at or before start.
type span struct {
	start, end, from int
	pat              int32
}

// fullPat is a custom pattern without an anchor: it is searched for
// everywhere.
type fullPat struct {
	re  *regexp.Regexp
	pat int32
}

type table struct {
	pats  []pat
	main  anchorTable
	wrap  anchorTable // units anchors with whitespace removed
	pre   prefixSet   // prefixes of main anchors
	wpre  prefixSet   // prefixes of wrap anchors
	hasWr bool
	ctx   int // context a match may take before its start
	full  []fullPat
}

// isGap reports whether c may separate units of an encoding.
func isGap(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// maxGap bounds the whitespace skipped between two units.
const maxGap = 16

// scan finds what to redact in buf. prev is the byte before buf (0 at the
// start of the stream). When final is false more input may follow: hold is
// the first position whose fate depends on it. Spans are appended to
// spans, unordered; only spans starting before hold count.
func (t *table) scan(buf []byte, prev byte, final bool, spans []span) ([]span, int) {
	n := len(buf)
	hold := n
	if len(t.main.m) > 0 {
		// A pattern's anchors inside a pattern's match are not tried again:
		// text built of overlapping anchors costs one window, not one per
		// anchor.
		regexEnd := 0
		for i := t.main.next(buf, 0); i >= 0 && i-t.ctx < hold; i = t.main.next(buf, i+1) {
			k := binary.LittleEndian.Uint32(buf[i : i+4])
			for _, id := range t.main.m[k] {
				regex := t.pats[id].kind == kindRegex
				if regex && i < regexEnd {
					continue
				}
				s, e, st := t.verify(id, buf, i, prev, final)
				if regex && st == match {
					regexEnd = max(regexEnd, e)
				}
				switch st {
				case match:
					spans = append(spans, span{s, e, min(s, i), id})
				case more:
					hold = t.holdAt(hold, i)
				}
			}
		}
		if !final {
			hold = min(hold, t.tail(buf))
			for i := max(0, n-3); i < n && i-t.ctx < hold; i++ {
				if t.pre.has(buf[i:]) {
					hold = t.holdAt(hold, i)
					break
				}
			}
		}
	}
	if t.hasWr {
		spans, hold = t.scanWraps(buf, prev, final, spans, hold)
	}
	for _, f := range t.full {
		for _, loc := range f.re.FindAllSubmatchIndex(buf, -1) {
			s, e := loc[0], loc[1]
			if len(loc) >= 4 && loc[2] >= 0 {
				s, e = loc[2], loc[3]
			}
			if !final && loc[1] == n {
				hold = t.holdAt(hold, loc[0])
				continue
			}
			if e > s {
				spans = append(spans, span{s, e, loc[0], f.pat})
			}
		}
		if !final {
			hold = t.holdAt(hold, max(0, n-CustomMaxLen))
		}
	}
	return spans, hold
}

// holdAt returns the hold for a possible start at i. Context is kept
// before it: a match of an encoding takes the unit before it too.
func (t *table) holdAt(hold, i int) int {
	return min(hold, max(0, i-t.ctx))
}

// tail returns where the context a match starting after buf would need
// begins: the trailing blanks and characters that may be the unit before
// it.
func (t *table) tail(buf []byte) int {
	i := len(buf)
	for i > 0 && len(buf)-i < t.ctx {
		c := buf[i-1]
		if !unitChar[c] && c != ' ' && c != '\t' {
			break
		}
		i--
	}
	return i
}

// scanWraps checks the positions whose four bytes hold a newline: an
// encoding wrapped there has its anchor broken by it.
func (t *table) scanWraps(buf []byte, prev byte, final bool, spans []span, hold int) ([]span, int) {
	n := len(buf)
	var key [4]byte
	for off := 0; off < n; {
		j := bytes.IndexByte(buf[off:], '\n')
		if j < 0 {
			break
		}
		j += off
		off = j + 1
		for i := max(0, j-3); i < j && i-t.ctx < hold; i++ {
			if !t.wpre.p1[buf[i]] {
				continue
			}
			// The next four bytes that are not whitespace.
			got, skipped := 0, 0
			p := i
			for ; p < n && got < 4 && skipped <= maxGap; p++ {
				if isGap(buf[p]) {
					skipped++
					continue
				}
				key[got] = buf[p]
				got++
			}
			if got < 4 {
				if !final && p == n && t.wpre.has(key[:got]) {
					hold = t.holdAt(hold, i)
				}
				continue
			}
			k := binary.LittleEndian.Uint32(key[:])
			if !t.wrap.hit(k) {
				continue
			}
			for _, id := range t.wrap.m[k] {
				s, e, st := t.verify(id, buf, i, prev, final)
				switch st {
				case match:
					spans = append(spans, span{s, e, min(s, i), id})
				case more:
					hold = t.holdAt(hold, i)
				}
			}
		}
	}
	return spans, hold
}

// verify checks pattern id at buf[i:] and returns the span to redact.
func (t *table) verify(id int32, buf []byte, i int, prev byte, final bool) (s, e int, st status) {
	p := &t.pats[id]
	switch p.kind {
	case kindRaw:
		budget := 64
		e, st = matchRaw(p.raw, buf, i, &budget)
		if st == more && final {
			st = partial(e-i, len(p.raw))
		}
		return i, e, st
	case kindUnits:
		return p.matchUnits(buf, i, final)
	default:
		return p.matchRegex(buf, i, prev, final)
	}
}

// partial decides a match cut short by the end of the stream: a long
// enough beginning of a value is redacted too.
func partial(got, want int) status {
	if got >= min(want, 2*MinSecretLen) {
		return match
	}
	return fail
}

// merge sorts spans and joins the overlapping ones; the earliest (then
// longest) names the joined span.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.start < last.end {
			last.end = max(last.end, s.end)
			last.from = min(last.from, s.from)
			continue
		}
		out = append(out, s)
	}
	return out
}

// render appends buf[:limit] to out with the spans that lie inside it
// replaced, and returns it with the number of spans replaced. Spans must
// be merged, and none may cross limit.
func (t *table) render(out, buf []byte, spans []span, limit int) ([]byte, int) {
	spans = merge(spans)
	last, n := 0, 0
	for _, s := range spans {
		if s.start >= limit {
			break
		}
		out = append(out, buf[last:s.start]...)
		out = append(out, t.pats[s.pat].label...)
		last = s.end
		n++
	}
	return append(out, buf[last:limit]...), n
}

// cut returns the position up to which buf can be written out now: hold,
// or before a span that crosses it, with the context its verification
// needs (so that it is found again).
func (t *table) cut(spans []span, hold int) int {
	b := hold
	for again := true; again; {
		again = false
		for _, s := range spans {
			if s.start < b && s.end > b {
				b = t.holdAt(b, s.from)
				again = true
			}
		}
	}
	return b
}
