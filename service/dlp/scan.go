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
	"math/bits"
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

const filterBits = 1 << 16

type anchorTable struct {
	bits [filterBits / 64]uint64
	m    map[uint32][]int32

	// pairs says, for two bytes (as a little-endian uint16) at offsets e
	// and e+1 of the input, which of the windows starting at e-2, e-1, e
	// and e+1 may be an anchor: bit d for the window starting at e-2+d,
	// which holds the two bytes at its offsets 2-d and 3-d (the window at
	// e+1 holds only the second, as its first byte). next uses it to rule
	// windows out.
	pairs *pairTable
	first [256]bool // the first bytes of anchors, as entered in pairs
}

func hashKey(k uint32) uint32 { return (k * 2654435761) >> 16 }

func (a *anchorTable) add(key []byte, id int32) {
	k := binary.LittleEndian.Uint32(key)
	if a.m == nil {
		a.m = map[uint32][]int32{}
	}
	if slices.Contains(a.m[k], id) {
		return
	}
	a.m[k] = append(a.m[k], id)
	h := hashKey(k)
	a.bits[h>>6] |= 1 << (h & 63)

	if a.pairs == nil {
		a.pairs = new(pairTable)
	}
	pair := func(lo, hi byte) int { return int(lo) | int(hi)<<8 }
	a.pairs[pair(key[2], key[3])] |= 1
	a.pairs[pair(key[1], key[2])] |= 2
	a.pairs[pair(key[0], key[1])] |= 4
	if !a.first[key[0]] {
		// The window starting at a pair's second byte: any byte may
		// come before it.
		a.first[key[0]] = true
		for c := range 256 {
			a.pairs[pair(byte(c), key[0])] |= 8
		}
	}
}

func (a *anchorTable) hit(k uint32) bool {
	h := hashKey(k)
	return a.bits[h>>6]&(1<<(h&63)) != 0
}

// prefixSet holds the 1-, 2- and 3-byte prefixes of anchors.
type prefixSet struct {
	p1 [256]bool
	p2 [1 << 16 / 64]uint64
	p3 map[uint32]bool
}

func (p *prefixSet) add(key []byte) {
	p.p1[key[0]] = true
	k2 := uint32(key[0]) | uint32(key[1])<<8
	p.p2[k2>>6] |= 1 << (k2 & 63)
	if p.p3 == nil {
		p.p3 = map[uint32]bool{}
	}
	p.p3[uint32(key[0])|uint32(key[1])<<8|uint32(key[2])<<16] = true
}

// has reports whether b (1 to 3 bytes) begins an anchor.
func (p *prefixSet) has(b []byte) bool {
	switch len(b) {
	case 1:
		return p.p1[b[0]]
	case 2:
		k := uint32(b[0]) | uint32(b[1])<<8
		return p.p2[k>>6]&(1<<(k&63)) != 0
	case 3:
		return p.p3[uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16]
	}
	return false
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

// unitChar holds the characters of every encoding's units.
var unitChar = alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")

// next returns the first position from i on whose four bytes may be an
// anchor, or -1.
//
// It looks up in pairs the two bytes at every even offset: each window is
// covered by two of the look-ups, one holding its bytes 2 and 3 (or 0 and
// 1) and one its bytes 0 and 1 (or 2 and 3), or for the odd windows bytes
// 1 and 2 and byte 0 or 3. The pairs at offsets 2 mod 4 (hi) already
// cover every window; those at 0 mod 4 (lo) are looked up only where hi
// leaves a window open, and the windows both leave open are checked
// against the filter. Binary data, runs of blanks or NUL bytes and most
// text leave no window open: 32 positions then cost eight look-ups and no
// mispredicted branch.
func (a *anchorTable) next(buf []byte, i int) int {
	if a.pairs == nil {
		return -1
	}
	pairs := a.pairs
	n := len(buf)
	// Skip what leaves no window open, 32 positions at a time, up to the
	// first block that may hold an anchor; then go on 16 at a time. After
	// an anchor the scan calls again, and skips again.
	for ; i+35 <= n; i += 32 {
		b := buf[i : i+32]
		w0 := binary.LittleEndian.Uint64(b[0:8])
		w1 := binary.LittleEndian.Uint64(b[8:16])
		w2 := binary.LittleEndian.Uint64(b[16:24])
		w3 := binary.LittleEndian.Uint64(b[24:32])
		if pairs[uint16(w0>>16)]|pairs[uint16(w0>>48)]|pairs[uint16(w1>>16)]|pairs[uint16(w1>>48)]|
			pairs[uint16(w2>>16)]|pairs[uint16(w2>>48)]|pairs[uint16(w3>>16)]|pairs[uint16(w3>>48)] != 0 {
			break
		}
	}
	for ; i+19 <= n; i += 16 {
		b := buf[i : i+19]
		w0 := binary.LittleEndian.Uint64(b[0:8])
		w1 := binary.LittleEndian.Uint64(b[8:16])
		m := pairs.hi(w0, w1)
		if m == 0 {
			continue
		}
		if m &= pairs.lo(w0, w1, uint64(binary.LittleEndian.Uint16(b[16:18]))); m != 0 {
			if j := a.check(buf, i, m); j >= 0 {
				return j
			}
		}
	}
	for ; i+4 <= n; i++ {
		if a.hit(binary.LittleEndian.Uint32(buf[i : i+4])) {
			return i
		}
	}
	return -1
}

// pairTable is anchorTable.pairs.
type pairTable [1 << 16]uint8

// hi returns which of the 16 windows starting at the bytes w0, w1 (eight
// each, little-endian) the pairs at offsets 2, 6, 10 and 14 leave open:
// bit d for window d.
func (p *pairTable) hi(w0, w1 uint64) uint32 {
	return uint32(p[uint16(w0>>16)]) | uint32(p[uint16(w0>>48)])<<4 |
		uint32(p[uint16(w1>>16)])<<8 | uint32(p[uint16(w1>>48)])<<12
}

// lo is hi for the pairs at offsets 0, 4, 8, 12 and 16 (the first two
// bytes of w2), which cover windows -2 to 17.
func (p *pairTable) lo(w0, w1, w2 uint64) uint32 {
	return (uint32(p[uint16(w0)]) | uint32(p[uint16(w0>>32)])<<4 |
		uint32(p[uint16(w1)])<<8 | uint32(p[uint16(w1>>32)])<<12 |
		uint32(p[uint16(w2)])<<16) >> 2
}

// check returns the first window i+d, for the bits d of m, that the filter
// lets through, or -1.
func (a *anchorTable) check(buf []byte, i int, m uint32) int {
	for ; m != 0; m &= m - 1 {
		j := i + bits.TrailingZeros32(m)
		if a.hit(binary.LittleEndian.Uint32(buf[j : j+4])) {
			return j
		}
	}
	return -1
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

// matchRaw matches the value v at buf[j:], each byte literal or escaped.
func matchRaw(v, buf []byte, j int, budget *int) (int, status) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if j >= len(buf) {
			return j, more
		}
		b := buf[j]
		if b == c && c != '%' && c != '\\' {
			j++
			continue
		}
		if b == c {
			// '%' and '\' may be literal or begin an escape: try both.
			if *budget--; *budget <= 0 {
				return j, fail
			}
			e1, st1 := matchRaw(v[i+1:], buf, j+1, budget)
			if st1 == match {
				return e1, match
			}
			k, st2 := escaped(buf, j, c)
			if k > 0 {
				e2, st3 := matchRaw(v[i+1:], buf, j+k, budget)
				switch {
				case st3 == match:
					return e2, match
				case st3 == more || st1 == more:
					return max(e1, e2), more
				}
				return j, fail
			}
			if st1 == more || st2 == more {
				return max(e1, j), more
			}
			return j, fail
		}
		k, st := escaped(buf, j, c)
		if k == 0 {
			if st == more {
				return j, more
			}
			return j, fail
		}
		j += k
	}
	return j, match
}

// escaped returns the length of an escaped form of c at buf[j:], or 0.
// The status is more when buf ends inside what may be one.
func escaped(buf []byte, j int, c byte) (int, status) {
	rest := buf[j:]
	switch rest[0] {
	case '%':
		if len(rest) < 3 {
			return 0, more
		}
		if h, ok := hexByte(rest[1], rest[2]); ok && h == c {
			return 3, match
		}
	case '+':
		if c == ' ' {
			return 1, match
		}
	case '\\':
		if len(rest) < 2 {
			return 0, more
		}
		switch rest[1] {
		case c:
			if c == '"' || c == '\\' || c == '/' || c == '\'' || c == '$' || c == '`' {
				return 2, match
			}
		case 'n':
			if c == '\n' {
				return 2, match
			}
		case 't':
			if c == '\t' {
				return 2, match
			}
		case 'r':
			if c == '\r' {
				return 2, match
			}
		case 'u':
			if len(rest) < 6 {
				return 0, more
			}
			hi, ok1 := hexByte(rest[2], rest[3])
			lo, ok2 := hexByte(rest[4], rest[5])
			if ok1 && ok2 && hi == 0 && lo == c {
				return 6, match
			}
		case 'x':
			if len(rest) < 4 {
				return 0, more
			}
			if h, ok := hexByte(rest[2], rest[3]); ok && h == c {
				return 4, match
			}
		}
	}
	return 0, fail
}

func hexByte(a, b byte) (byte, bool) {
	x, ok1 := hexVal(a)
	y, ok2 := hexVal(b)
	return x<<4 | y, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// skipGap skips whitespace between two units at buf[j:]: at most maxGap
// bytes, and after a newline an offset column (six to eight hex digits,
// maybe a colon, then blanks), as od, hexdump and xxd print. It returns
// more when buf ends inside the gap.
func skipGap(buf []byte, j int) (int, status) {
	n := len(buf)
	skipped := 0
	newline := false
	for j < n && isGap(buf[j]) {
		if buf[j] == '\n' {
			newline = true
		}
		j++
		if skipped++; skipped > maxGap {
			return j, fail
		}
	}
	if j == n {
		return j, more
	}
	if !newline {
		return j, match
	}
	// An offset column?
	k := j
	for k < n && k-j < 9 {
		if _, ok := hexVal(buf[k]); !ok {
			break
		}
		k++
	}
	if k == n {
		return j, more
	}
	d := k - j
	if d < 6 || d > 8 {
		return j, match
	}
	if buf[k] == ':' {
		k++
	}
	if k == n {
		return j, more
	}
	if buf[k] != ' ' && buf[k] != '\t' {
		return j, match
	}
	for k < n && (buf[k] == ' ' || buf[k] == '\t') {
		k++
	}
	if k == n {
		return j, more
	}
	return k, match
}

func (p *pat) matchUnits(buf []byte, i int, final bool) (s, e int, st status) {
	n := len(buf)
	j := i
	u := p.unit
	for k := 0; k < len(p.text); k += u {
		if k > 0 {
			if j, st = skipGap(buf, j); st != match {
				if st == more && final {
					return i, j, partial(k, len(p.text))
				}
				return i, j, st
			}
		}
		if j+u > n {
			if final {
				return i, j, partial(k, len(p.text))
			}
			// Verify what is there before asking for more.
			for t := 0; j+t < n; t++ {
				c := buf[j+t]
				if p.fold {
					c = lower(c)
				}
				if c != p.text[k+t] {
					return i, j, fail
				}
			}
			return i, j, more
		}
		for t := 0; t < u; t++ {
			c := buf[j+t]
			if p.fold {
				c = lower(c)
			}
			if c != p.text[k+t] {
				return i, j, fail
			}
		}
		j += u
	}
	s, e = i, j
	if p.extend == nil {
		return s, e, match
	}
	// The units around the match mix the value's bits with its
	// neighbours': they go too.
	if u == 1 {
		// A base64 character on each side.
		if s > 0 && p.extend[buf[s-1]] {
			s--
		}
		if e < n && p.extend[buf[e]] {
			e++
		}
		if e == n && !final {
			return s, e, more
		}
	} else {
		// An od word on each side: a whole token, a blank or two away.
		b := s
		for b > 0 && (buf[b-1] == ' ' || buf[b-1] == '\t') && s-b < 2 {
			b--
		}
		if b < s && b >= u && p.allIn(buf[b-u:b]) && (b == u || isGap(buf[b-u-1])) {
			s = b - u
		}
		j = e
		for j < n && (buf[j] == ' ' || buf[j] == '\t') && j-e < 2 {
			j++
		}
		switch {
		case j == n || j+u >= n && p.allIn(buf[j:]):
			if !final {
				return s, e, more
			}
			if j > e && j+u == n {
				e = n
			}
		case j > e && j+u < n && p.allIn(buf[j:j+u]) && isGap(buf[j+u]):
			e = j + u
		}
	}
	if p.pad {
		for e < n && buf[e] == '=' {
			e++
		}
		if e == n && !final {
			return s, e, more
		}
	}
	return s, e, match
}

func (p *pat) allIn(b []byte) bool {
	for _, c := range b {
		if !p.extend[c] {
			return false
		}
	}
	return true
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func (p *pat) matchRegex(buf []byte, i int, prev byte, final bool) (s, e int, st status) {
	if p.boundary {
		b := prev
		if i > 0 {
			b = buf[i-1]
		}
		if isWord(b) {
			return i, i, fail
		}
	}
	n := len(buf)
	lim := min(n, i+p.maxLen)
	truncated := !final && i+p.maxLen > n
	loc := p.re().FindSubmatchIndex(buf[i:lim])
	if loc == nil {
		if truncated {
			return i, i, more
		}
		return i, i, fail
	}
	if truncated && i+loc[1] == lim {
		return i, i, more
	}
	s, e = i+loc[0], i+loc[1]
	if len(loc) >= 4 && loc[2] >= 0 {
		s, e = i+loc[2], i+loc[3]
	}
	if e <= s || p.valid != nil && !p.valid(buf[s:e]) {
		return i, i, fail
	}
	return s, e, match
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
