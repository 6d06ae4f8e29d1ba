package termesc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var cases = []struct {
	name, in, want string
}{
	{"plain", "hello, world\n", "hello, world\n"},
	{"tab and newline kept", "a\tb\nc\n", "a\tb\nc\n"},
	{"crlf kept", "line\r\nnext\r\n", "line\r\nnext\r\n"},
	{"unicode text kept", "héllo wörld ✓ 日本 🙂\n", "héllo wörld ✓ 日本 🙂\n"},
	{"csi erase line", "ok\x1b[2K\x1b[1Ahidden", `ok\x1b[2K\x1b[1Ahidden`},
	{"csi colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
	{"osc 52 clipboard, bel", "\x1b]52;c;Y3VybCBldmlsfHNo\a", `\x1b]52;c;Y3VybCBldmlsfHNo\x07`},
	{"osc 52 clipboard, st", "\x1b]52;c;eA==\x1b\\", `\x1b]52;c;eA==\x1b\`},
	{"osc 0 title", "\x1b]0;innocent\a", `\x1b]0;innocent\x07`},
	{"osc 8 hyperlink", "\x1b]8;;http://x\x1b\\t\x1b]8;;\x1b\\", `\x1b]8;;http://x\x1b\t\x1b]8;;\x1b\`},
	{"bare cr", "rm -rf /\rls", `rm -rf /\x0dls`},
	{"cr at end", "abc\r", `abc\x0d`},
	{"cr cr lf", "a\r\r\nb", `a\x0d` + "\r\nb"},
	{"bel", "ding\a", `ding\x07`},
	{"backspace", "safe\b\b\b\bevil", `safe\x08\x08\x08\x08evil`},
	{"vertical tab and form feed", "a\vb\fc", `a\x0bb\x0cc`},
	{"nul", "a\x00b", `a\x00b`},
	{"del", "a\x7fb", `a\x7fb`},
	{"c1 csi as utf-8", "a\u009b2Kb", `a\u009b2Kb`},
	{"c1 osc and st as utf-8", "\u009d52;c;eA==\u009c", `\u009d52;c;eA==\u009c`},
	{"c1 nel as utf-8", "a\u0085b", `a\u0085b`},
	{"c1 range ends", "\u0080\u009f", `\u0080\u009f`},
	{"raw 8-bit csi byte", "a\x9b2Kb", `a\x9b2Kb`},
	{"invalid utf-8", "a\xff\xfeb\xc3", `a\xff\xfeb\xc3`},
	{"overlong encoding", "\xc0\xaf", `\xc0\xaf`},
	{"surrogate encoding", "\xed\xa0\x80", `\xed\xa0\x80`},
	{"bidi override", "access\u202eadmin\u202c", `access\u202eadmin\u202c`},
	{"bidi embeddings", "\u202a\u202b\u202d", `\u202a\u202b\u202d`},
	{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`},
	{"bidi marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
	{"zero width space and joiners", "pass\u200bword\u200c\u200d", `pass\u200bword\u200c\u200d`},
	{"word joiner and invisible operators", "\u2060\u2061\u2064", `\u2060\u2061\u2064`},
	{"bom in the middle", "a\ufeffb", `a\ufeffb`},
	{"bom at the start", "\ufeffa", `\ufeffa`},
	{"soft hyphen", "pay\u00adpal", `pay\u00adpal`},
	{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"tag characters", "x\U000e0041\U000e007f", `x\U000e0041\U000e007f`},
	{"mongolian vowel separator", "a\u180eb", `a\u180eb`},
}

func TestString(t *testing.T) {
	t.Parallel()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := String(c.in); got != c.want {
				t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestWriterSplits writes every case in two and in three pieces, at every
// byte offset, and byte by byte: the result never depends on the split.
func TestWriterSplits(t *testing.T) {
	t.Parallel()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(c.in)
			for i := 0; i <= len(in); i++ {
				for j := i; j <= len(in); j++ {
					if got := writeChunks(in[:i], in[i:j], in[j:]); got != c.want {
						t.Fatalf("split at %d,%d: got %q, want %q", i, j, got, c.want)
					}
				}
			}
			var chunks [][]byte
			for i := range in {
				chunks = append(chunks, in[i:i+1])
			}
			if got := writeChunks(chunks...); got != c.want {
				t.Fatalf("byte by byte: got %q, want %q", got, c.want)
			}
		})
	}
}

func writeChunks(chunks ...[]byte) string {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, c := range chunks {
		w.Write(c)
	}
	w.Close()
	return b.String()
}

// TestWriterHoldsLittle checks that what is decided is passed on at once:
// only an incomplete sequence or a CR waits for the next write.
func TestWriterHoldsLittle(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Write([]byte("ab\x1b[2K"))
	if got := b.String(); got != `ab\x1b[2K` {
		t.Fatalf("after the first write: got %q", got)
	}
	w.Write([]byte("c\xe2\x80"))
	if got := b.String(); got != `ab\x1b[2Kc` {
		t.Fatalf("an incomplete sequence passed on: got %q", got)
	}
	w.Write([]byte("\xaed\r"))
	if got := b.String(); got != `ab\x1b[2Kc\u202ed` {
		t.Fatalf("after completing the sequence: got %q", got)
	}
	w.Close()
	if got := b.String(); got != `ab\x1b[2Kc\u202ed\x0d` {
		t.Fatalf("after Close: got %q", got)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// safe reports why s could still act on a terminal, or "".
func safe(s string) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for i, r := range s {
		switch {
		case r == '\r':
			if !strings.HasPrefix(s[i:], "\r\n") {
				return "bare CR"
			}
		case r == '\t' || r == '\n':
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			return "control " + string(appendRune(nil, r))
		case unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029:
			return "format character " + string(appendRune(nil, r))
		}
	}
	return ""
}

func FuzzWriter(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c.in), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		whole, _ := Append(nil, in, true)
		if why := safe(string(whole)); why != "" {
			t.Fatalf("escaped %q to %q: still has %s", in, whole, why)
		}
		n := int(step%7) + 1
		var chunks [][]byte
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		if got := writeChunks(chunks...); got != string(whole) {
			t.Fatalf("in chunks of %d: got %q, want %q", n, got, whole)
		}
		if utf8.Valid(in) && safe(string(in)) == "" && string(whole) != string(in) {
			t.Fatalf("safe text %q changed to %q", in, whole)
		}
	})
}

func TestJSON(t *testing.T) {
	t.Parallel()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if !utf8.ValidString(c.in) {
				return // encoding/json has replaced such bytes already
			}
			js, err := json.Marshal(map[string]string{"s": c.in})
			if err != nil {
				t.Fatal(err)
			}
			got := JSON(js)
			if why := safe(string(got)); why != "" {
				t.Errorf("JSON(%s) = %s: still has %s", js, got, why)
			}
			var back map[string]string
			if err := json.Unmarshal(got, &back); err != nil || back["s"] != c.in {
				t.Errorf("JSON(%s) = %s decodes to %q (%v), want %q", js, got, back["s"], err, c.in)
			}
		})
	}
	if got := JSON([]byte("{\n\t\"a\": 1\r\n}")); string(got) != "{\n\t\"a\": 1\r\n}" {
		t.Errorf("whitespace changed: %q", got)
	}
}

// BenchmarkAppendText is the common case: printable ASCII lines.
func BenchmarkAppendText(b *testing.B) {
	p := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz\n"), 40000)
	dst := make([]byte, 0, 2*len(p))
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		dst, _ = Append(dst[:0], p, true)
	}
}

// Line shows everything String does, and the line breaks a one-line face
// cannot show: bidi controls, escape sequences, tabs and newlines all read
// as text.
func TestLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"git status", "git status"},
		{"echo a\nrm -rf ~", `echo a\nrm -rf ~`},
		{"a\tb\r\nc\rd", `a\tb\r\nc\x0dd`},
		{"printf '\x1b]0;owned\x07'", `printf '\x1b]0;owned\x07'`},
		{"ls \u202egnp.exe \u202a\u202b\u202c\u202d", `ls \u202egnp.exe \u202a\u202b\u202c\u202d`},
		{"x \u2066\u2067\u2068\u2069 y", `x \u2066\u2067\u2068\u2069 y`},
		{"echo <b>&</b>", "echo <b>&</b>"},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMarkup(t *testing.T) {
	t.Parallel()
	if got, want := Markup(Line("echo <b>x</b> && <a href='http://e'>y</a>\u202e")), `echo &lt;b&gt;x&lt;/b&gt; &amp;&amp; &lt;a href='http://e'&gt;y&lt;/a&gt;\u202e`; got != want {
		t.Errorf("Markup = %q, want %q", got, want)
	}
	if got := Markup("plain"); got != "plain" {
		t.Errorf("Markup(plain) = %q", got)
	}
}
