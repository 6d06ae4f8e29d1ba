package dlp

// This file turns values and patterns into the engine's patterns and
// anchors (scan.go).

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
)

type builder struct {
	t *table
}

func newBuilder() *builder { return &builder{t: &table{}} }

func (b *builder) add(p pat) int32 {
	b.t.pats = append(b.t.pats, p)
	return int32(len(b.t.pats) - 1)
}

func (b *builder) anchor(key string, id int32) {
	if len(key) < 4 {
		panic("dlp: anchor shorter than four bytes")
	}
	b.t.main.add([]byte(key[:4]), id)
	b.t.pre.add([]byte(key[:4]))
}

func (b *builder) wrapAnchor(key string, id int32) {
	b.t.wrap.add([]byte(key[:4]), id)
	b.t.wpre.add([]byte(key[:4]))
	b.t.hasWr = true
}

// Alphabets of the base64 encodings, for the characters around a match.
var (
	stdAlphabet = alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
	urlAlphabet = alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
	octAlphabet = alphabet("01234567")
	hexAlphabet = alphabet("0123456789abcdefABCDEF")
)

func alphabet(s string) *[256]bool {
	var a [256]bool
	for i := range len(s) {
		a[s[i]] = true
	}
	return &a
}

// secret adds the patterns of one value: the value (literal or escaped),
// base64, hex and od words.
func (b *builder) secret(s Secret) {
	v := []byte(s.Value)
	label := []byte(Label(s.ID))

	raw := b.add(pat{kind: kindRaw, label: label, raw: v})
	for _, form := range []string{s.Value, urlEncode(v, true, false), urlEncode(v, false, false), urlEncode(v, true, true), jsonEscape(v)} {
		b.anchor(form, raw)
	}

	// base64, standard and URL-safe, at each alignment.
	seen := map[string]bool{}
	for _, enc := range []struct {
		e     *base64.Encoding
		alpha *[256]bool
	}{{base64.RawStdEncoding, stdAlphabet}, {base64.RawURLEncoding, urlAlphabet}} {
		for a := range 3 {
			core := base64Core(enc.e, v, a)
			if seen[core] || len(core) < 4 {
				continue
			}
			seen[core] = true
			id := b.add(pat{kind: kindUnits, label: label, text: []byte(core), unit: 1, extend: enc.alpha, pad: true})
			b.anchor(core, id)
			b.wrapAnchor(core, id)
		}
	}

	// hex: contiguous or one blank between bytes, either case.
	h := hex.EncodeToString(v)
	id := b.add(pat{kind: kindUnits, label: label, text: []byte(h), unit: 2, fold: true})
	up := strings.ToUpper(h)
	b.anchor(h, id)
	b.anchor(up, id)
	b.anchor(h[:2]+" "+h[2:3], id)
	b.anchor(up[:2]+" "+up[2:3], id)
	b.wrapAnchor(h, id)
	b.wrapAnchor(up, id)

	// od's words: two bytes, little-endian; octal (od's default) and hex
	// (od -x, hexdump), at both alignments.
	for a := range 2 {
		var oct, hx strings.Builder
		for k := a; k+1 < len(v); k += 2 {
			w := uint16(v[k]) | uint16(v[k+1])<<8
			fmt.Fprintf(&oct, "%06o", w)
			fmt.Fprintf(&hx, "%04x", w)
		}
		if oct.Len() >= 12 {
			id := b.add(pat{kind: kindUnits, label: label, text: []byte(oct.String()), unit: 6, extend: octAlphabet})
			b.anchor(oct.String(), id)
		}
		if hx.Len() >= 8 {
			t := hx.String()
			id := b.add(pat{kind: kindUnits, label: label, text: []byte(t), unit: 4, fold: true, extend: hexAlphabet})
			b.anchor(t, id)
			b.anchor(strings.ToUpper(t), id)
		}
	}
	b.t.ctx = 10 // a blank, an od word and two blanks before a match
}

// base64Core returns the characters of v's base64 that depend on v alone
// when v starts at byte offset a (0, 1 or 2) of the encoded stream.
func base64Core(e *base64.Encoding, v []byte, a int) string {
	in := make([]byte, a+len(v)+2)
	copy(in[a:], v)
	enc := e.EncodeToString(in)
	from := (8*a + 5) / 6
	to := 8 * (a + len(v)) / 6
	return enc[from:to]
}

// urlEncode percent-encodes every byte but the unreserved ones (RFC
// 3986), in upper or lower case hex; plus writes a space as "+".
func urlEncode(v []byte, upper, plus bool) string {
	const hexUp, hexLo = "0123456789ABCDEF", "0123456789abcdef"
	digits := hexLo
	if upper {
		digits = hexUp
	}
	var sb strings.Builder
	for _, c := range v {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			sb.WriteByte(c)
		case c == ' ' && plus:
			sb.WriteByte('+')
		default:
			sb.WriteByte('%')
			sb.WriteByte(digits[c>>4])
			sb.WriteByte(digits[c&15])
		}
	}
	return sb.String()
}

// jsonEscape escapes v as a JSON string body would hold it.
func jsonEscape(v []byte) string {
	var sb strings.Builder
	for _, c := range v {
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20:
			fmt.Fprintf(&sb, `\u%04x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// builtinRegexps are the built-in patterns, each compiled (anchored at
// the start) the first time an anchor of it is found: most output never
// needs one, and compiling them all would delay every command's start.
// Regular expressions are safe for concurrent use.
var builtinRegexps = func() []func() *regexp.Regexp {
	out := make([]func() *regexp.Regexp, len(Builtin))
	for i, d := range Builtin {
		out[i] = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\A(?:` + d.Regexp + `)`) })
	}
	return out
}()

// regex adds a built-in pattern, compiled by re on first use.
func (b *builder) regex(d Def, re func() *regexp.Regexp) {
	id := b.add(pat{kind: kindRegex, label: []byte(PatternLabel(d.Name)), re: re, maxLen: d.MaxLen, boundary: d.Boundary, valid: d.Valid})
	for _, a := range d.Anchors {
		for _, k := range expandAnchor(a, d.FoldAnchors) {
			b.anchor(k, id)
		}
	}
}

// expandAnchor returns the four-byte keys an anchor stands for: a
// three-byte anchor followed by any character of the base64url alphabet,
// and with fold every mix of case.
func expandAnchor(a string, fold bool) []string {
	keys := []string{a}
	if len(a) == 3 {
		keys = nil
		for c := range 256 {
			if urlAlphabet[c] {
				keys = append(keys, a+string(rune(c)))
			}
		}
	}
	if !fold {
		return keys
	}
	var out []string
	for _, k := range keys {
		k = k[:4]
		variants := []string{""}
		for i := range 4 {
			c := k[i]
			lo, up := strings.ToLower(string(c)), strings.ToUpper(string(c))
			var next []string
			for _, v := range variants {
				next = append(next, v+lo)
				if up != lo {
					next = append(next, v+up)
				}
			}
			variants = next
		}
		out = append(out, variants...)
	}
	return out
}

// custom adds a configured pattern: anchored when it begins with a
// literal of four or more bytes, else searched for everywhere.
func (b *builder) custom(p Pattern) error {
	if err := CheckPattern(p); err != nil {
		return fmt.Errorf("pattern %q: %w", p.Name, err)
	}
	label := []byte(PatternLabel(p.Name))
	prefix, foldPrefix := literalPrefix(p.Regexp)
	if len(prefix) >= 4 {
		re := regexp.MustCompile(`\A(?:` + p.Regexp + `)`)
		id := b.add(pat{kind: kindRegex, label: label, re: func() *regexp.Regexp { return re }, maxLen: CustomMaxLen})
		for _, k := range expandAnchor(prefix[:4], foldPrefix) {
			b.anchor(k, id)
		}
		return nil
	}
	re := regexp.MustCompile(p.Regexp)
	id := b.add(pat{kind: kindRegex, label: label, re: func() *regexp.Regexp { return re }, maxLen: CustomMaxLen})
	b.t.full = append(b.t.full, fullPat{re: re, pat: id})
	return nil
}

// literalPrefix returns the literal text every match of expr begins with,
// and whether it is matched case-insensitively.
func literalPrefix(expr string) (string, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture || re.Op == syntax.OpConcat && len(re.Sub) > 0 {
		switch re.Op {
		case syntax.OpCapture:
			re = re.Sub[0]
		case syntax.OpConcat:
			first := re.Sub[0]
			// A leading \b or ^ does not change what is matched next.
			if (first.Op == syntax.OpWordBoundary || first.Op == syntax.OpBeginLine || first.Op == syntax.OpBeginText) && len(re.Sub) > 1 {
				re = &syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[1:]}
				continue
			}
			re = first
		}
	}
	if re.Op != syntax.OpLiteral {
		return "", false
	}
	fold := re.Flags&syntax.FoldCase != 0
	s := string(re.Rune)
	if len(s) != len(re.Rune) { // not ASCII
		return "", false
	}
	return s, fold
}

func (b *builder) build() *table { return b.t }
