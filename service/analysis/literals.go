package analysis

// This file reads literal text: unescaping quoted and $'...' strings,
// here-document bodies, static integers and words, and the short forms
// used in messages.

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// staticInt returns the value of an arithmetic expression that is a
// literal integer.
func staticInt(x syntax.ArithmExpr) (int, bool) {
	w, ok := x.(*syntax.Word)
	if !ok || w == nil {
		return 0, false
	}
	n, err := strconv.Atoi(w.Lit())
	return n, err == nil
}

// unescapeLit removes the backslashes of an unquoted literal and reports
// whether it has unescaped pattern characters.
func unescapeLit(s string) (string, bool) {
	if !strings.ContainsAny(s, `\*?[`) {
		return s, false
	}
	if !strings.ContainsAny(s, `\*?`) && !strings.Contains(s[strings.IndexByte(s, '[')+1:], "]") {
		return s, false
	}
	var b strings.Builder
	glob := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		case c == '*' || c == '?':
			glob = true
		case c == '[' && strings.IndexByte(s[i+1:], ']') >= 0:
			glob = true
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeDouble removes the backslashes that escape inside double quotes
// (before $ ` " \ and newline) or, without dquote, in a here-document
// (where \" stays as it is).
func unescapeDouble(s string, dquote bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch c := s[i+1]; {
			case c == '$' || c == '`' || c == '\\' || c == '"' && dquote:
				b.WriteByte(c)
				i++
				continue
			case c == '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'...' string as bash does.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// heredoc returns the text of a here-document body: static when it has no
// expansions (or they are known), with the substitutions in it walked.
func (a *analyzer) heredoc(r *syntax.Redirect, sc *scope, owner int, subs *[]int) Arg {
	if r.Hdoc == nil {
		return Arg{}
	}
	quotedDelim := false
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quotedDelim = true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				quotedDelim = true
			}
		}
	}
	var out Arg
	if quotedDelim {
		var b strings.Builder
		for _, p := range r.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				b.WriteString(l.Value)
			}
		}
		out = Arg{Value: b.String()}
	} else {
		f := a.expandWord(r.Hdoc.Parts, a.text(sc.u, r.Hdoc), sc, owner, subs, modeHeredoc)
		if len(f) == 1 {
			out = f[0]
			out.Glob = false
		}
	}
	if r.Op == syntax.DashHdoc && !out.Dynamic {
		lines := strings.Split(out.Value, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		out.Value = strings.Join(lines, "\n")
	}
	return out
}

// short abbreviates s for a note.
func short(s string) string { return shortN(s, 60) }

// Abbrev abbreviates s to about n bytes, on one line, for a message.
func Abbrev(s string, n int) string { return shortN(s, n) }

// shortN abbreviates s to about n bytes, on one line.
func shortN(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		i := n - 3
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return s[:i] + "..."
	}
	return s
}

// plainLit reports whether an unquoted literal means itself: no escapes,
// patterns, tilde or braces.
func plainLit(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '*', '?', '[', '~', '{':
			return false
		}
	}
	return true
}

// simpleWord returns the value of a word that is one plain literal, one
// single-quoted string or one double-quoted literal: the common case.
func simpleWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return p.Value, plainLit(p.Value)
	case *syntax.SglQuoted:
		return p.Value, !p.Dollar
	case *syntax.DblQuoted:
		if len(p.Parts) == 0 {
			return "", !p.Dollar
		}
		if l, ok := p.Parts[0].(*syntax.Lit); ok && len(p.Parts) == 1 && !p.Dollar && !strings.Contains(l.Value, `\`) {
			return l.Value, true
		}
	}
	return "", false
}

// ArgHasFlag reports whether the argument arg is (or contains, in a
// cluster like -rf) the flag f.
func ArgHasFlag(arg, f string) bool {
	if arg == f {
		return true
	}
	if strings.HasPrefix(f, "--") {
		return strings.HasPrefix(arg, f+"=")
	}
	// -f inside a cluster: -rf, -fr, -Rf.
	if len(arg) < 2 || arg[0] != '-' || arg[1] == '-' {
		return false
	}
	for _, c := range arg[1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	for _, c := range f[1:] {
		if !strings.ContainsRune(arg[1:], c) {
			return false
		}
	}
	return true
}
