package analysis

// This file reads Makefiles for make: the recipes of the targets a make
// command builds (the named ones, or the default target, and their
// prerequisites, explicit and pattern rules) are shell code, one sh -c per
// line (one for the whole recipe under .ONESHELL). Make variables are
// expanded where their values are known: the command line's VAR=value,
// the Makefile's own definitions when there is one, the environment, and
// make's defaults ($(MAKE), $(CC), $(RM)...); an undefined variable is
// empty, as in make. $(shell ...) runs when make reads the file, whatever
// the target, and is judged always. A recipe that uses a variable or a
// function analysis cannot expand is dynamic (its static skeleton is
// judged too); so are $(eval ...), .RECIPEPREFIX and include files that
// cannot be read.

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// A makefile is what analysis takes from a Makefile.
type makefile struct {
	vars     map[string][]string // raw definitions, in order
	appends  map[string][]string // += parts
	rules    []makeRule
	def      string   // the default target
	shells   []string // $(shell ...) and != outside recipes, raw
	includes []makeInclude
	oneshell bool
	unknown  []string // why the file cannot be followed
}

type makeRule struct {
	targets, prereqs []string
	recipe           []string
}

type makeInclude struct {
	files    string
	optional bool
}

// makeDefaults are make's built-in variables.
var makeDefaults = map[string]string{
	"MAKE": "make", "CC": "cc", "CXX": "g++", "CPP": "cc -E", "RM": "rm -f", "AR": "ar", "AS": "as",
	"LD": "ld", "SHELL": "/bin/sh", "MAKEFLAGS": "", "MFLAGS": "", "ARFLAGS": "rv", "YACC": "yacc", "LEX": "lex",
	"FC": "f77", "PC": "pc", "M2C": "m2c", "GET": "get", "TEX": "tex", "INSTALL": "install",
}

// parseMakefile reads text as a Makefile.
func parseMakefile(text string) *makefile {
	m := &makefile{vars: map[string][]string{}, appends: map[string][]string{}}
	lines := strings.Split(text, "\n")
	var cur *makeRule
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSuffix(lines[i], "\r")
		if strings.HasPrefix(l, "\t") && cur != nil {
			r := l[1:]
			for strings.HasSuffix(r, "\\") && i+1 < len(lines) {
				i++
				r += "\n" + strings.TrimPrefix(lines[i], "\t")
			}
			if t := strings.TrimSpace(r); t != "" && !strings.HasPrefix(t, "#") {
				cur.recipe = append(cur.recipe, r)
			}
			continue
		}
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = l[:len(l)-1] + " " + strings.TrimLeft(lines[i], " \t")
		}
		t := strings.TrimSpace(makeComment(l))
		if t == "" {
			continue
		}
		word, rest, _ := strings.Cut(t, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "define":
			name := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(rest), "=:?+!"))
			var body []string
			for i+1 < len(lines) {
				i++
				if strings.TrimSpace(lines[i]) == "endef" {
					break
				}
				body = append(body, lines[i])
			}
			m.vars[name] = append(m.vars[name], strings.Join(body, "\n"))
			cur = nil
			continue
		case "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif":
			m.shells = append(m.shells, makeCalls(t, "shell")...)
			continue
		case "include", "-include", "sinclude":
			m.includes = append(m.includes, makeInclude{files: rest, optional: word != "include"})
			continue
		case "export", "unexport", "override", "private":
			if rest == "" {
				continue
			}
			t = rest
		case "vpath":
			continue
		}
		if strings.Contains(t, "$(eval") || strings.Contains(t, "${eval") {
			m.unknown = append(m.unknown, "it builds make code at run time with $(eval ...)")
		}
		m.shells = append(m.shells, makeCalls(t, "shell")...)
		if name, op, val, ok := makeAssign(t); ok {
			switch {
			case name == ".RECIPEPREFIX":
				m.unknown = append(m.unknown, "it sets .RECIPEPREFIX")
			case op == "!=":
				m.shells = append(m.shells, val)
				m.vars[name] = append(m.vars[name], "$(shell "+val+")")
			case op == "+=":
				m.appends[name] = append(m.appends[name], val)
			default:
				m.vars[name] = append(m.vars[name], val)
			}
			cur = nil
			continue
		}
		colon := strings.IndexByte(t, ':')
		if colon < 0 {
			cur = nil
			continue
		}
		targets := strings.Fields(t[:colon])
		after := strings.TrimLeft(t[colon+1:], ":")
		if strings.IndexByte(after, '=') >= 0 && !strings.Contains(after, ";") {
			// A target-specific variable: its value is not followed.
			if name, _, _, ok := makeAssign(strings.TrimSpace(after)); ok {
				m.vars[name] = append(m.vars[name], "$(target-specific "+name+")")
			}
			cur = nil
			continue
		}
		r := makeRule{targets: targets}
		pre, first, hasRecipe := strings.Cut(after, ";")
		r.prereqs = strings.Fields(strings.ReplaceAll(pre, "|", " "))
		if hasRecipe && strings.TrimSpace(first) != "" {
			r.recipe = append(r.recipe, first)
		}
		m.rules = append(m.rules, r)
		cur = &m.rules[len(m.rules)-1]
		for _, tg := range targets {
			if tg == ".ONESHELL" {
				m.oneshell = true
			}
			if m.def == "" && !strings.HasPrefix(tg, ".") && !strings.Contains(tg, "%") {
				m.def = tg
			}
		}
	}
	return m
}

// makeComment removes a # comment that is not escaped.
func makeComment(l string) string {
	for i := 0; i < len(l); i++ {
		if l[i] == '#' && (i == 0 || l[i-1] != '\\') {
			return l[:i]
		}
	}
	return l
}

// makeAssign splits a variable assignment: NAME = v, :=, ::=, :::=, ?=,
// +=, !=.
func makeAssign(t string) (name, op, val string, ok bool) {
	eq := strings.IndexByte(t, '=')
	if eq <= 0 {
		return "", "", "", false
	}
	colon := strings.IndexByte(t, ':')
	j := eq
	for j > 0 && strings.IndexByte(":?+!", t[j-1]) >= 0 {
		j--
	}
	if colon >= 0 && colon < j {
		return "", "", "", false // a rule: target: a=b is not an assignment
	}
	name = strings.TrimSpace(t[:j])
	if name == "" || strings.ContainsAny(name, " \t") && !strings.Contains(name, "$") {
		return "", "", "", false
	}
	return name, t[j : eq+1], strings.TrimSpace(t[eq+1:]), true
}

// makeCalls returns the arguments of the make function fn called in s:
// $(fn ...) or ${fn ...}, balanced.
func makeCalls(s, fn string) []string {
	var out []string
	for i := 0; i+2 < len(s); i++ {
		if s[i] != '$' || s[i+1] != '(' && s[i+1] != '{' {
			continue
		}
		if !strings.HasPrefix(s[i+2:], fn+" ") && !strings.HasPrefix(s[i+2:], fn+"\t") {
			continue
		}
		end := makeClose(s, i+1)
		if end < 0 {
			continue
		}
		out = append(out, strings.TrimSpace(s[i+2+len(fn):end]))
	}
	return out
}

// makeClose returns the index of the bracket closing the one at s[open].
func makeClose(s string, open int) int {
	o, c := s[open], byte(')')
	if o == '{' {
		c = '}'
	}
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// makeExpander expands make variables in one make invocation.
type makeExpander struct {
	a         *analyzer
	n         *Node
	m         *makefile
	sc        *scope
	dir       string
	overrides map[string]string
	target    string
	prereqs   []string
	stem      string
	hasStem   bool
	// why is the first thing that could not be expanded.
	why string
	// steps counts references expanded: X = $(X)$(X)... must not take
	// forever.
	steps int
}

// maxMakeSteps bounds the references one expansion follows.
const maxMakeSteps = 4096

// expand expands s; unknown parts become ${NAME} (a shell variable only
// known at run time) and set e.why.
func (e *makeExpander) expand(s string, depth int) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case '$':
			b.WriteByte('$')
		case '(', '{':
			end := makeClose(s, i)
			if end < 0 {
				e.unknownRef("an unclosed reference")
				return b.String()
			}
			b.WriteString(e.ref(s[i+1:end], depth))
			i = end
		default:
			b.WriteString(e.ref(string(c), depth))
		}
	}
	return b.String()
}

func (e *makeExpander) unknownRef(what string) {
	if e.why == "" {
		e.why = what
	}
}

// ref expands the reference $(inner).
func (e *makeExpander) ref(inner string, depth int) string {
	e.steps++
	if depth > 16 || e.steps > maxMakeSteps {
		e.unknownRef("variables nested too deeply")
		return "${MAKE_VARIABLE}"
	}
	if fn, arg, ok := strings.Cut(inner, " "); ok && !strings.Contains(fn, "=") && !strings.Contains(fn, ":") {
		if fn == "shell" {
			// Runs when the recipe is expanded: judged as code, its output
			// is only known at run time.
			e.a.makeShell(e, e.expand(arg, depth+1))
		}
		if v, ok := e.textFunc(fn, arg, depth); ok {
			return v
		}
		e.unknownRef("$(" + fn + " ...)")
		return "${MAKE_" + makeName(fn) + "}"
	}
	name := inner
	if strings.ContainsAny(name, ":=$") {
		e.unknownRef("$(" + short(inner) + ")")
		return "${MAKE_VARIABLE}"
	}
	switch name {
	case "@":
		return e.target
	case "<":
		if len(e.prereqs) > 0 {
			return e.prereqs[0]
		}
		return ""
	case "^", "+", "?":
		return strings.Join(e.prereqs, " ")
	case "*":
		if e.hasStem {
			return e.stem
		}
		e.unknownRef("$*")
		return "${MAKE_STEM}"
	case "@D":
		return path.Dir(e.target)
	case "@F":
		return path.Base(e.target)
	case "CURDIR":
		return e.dir
	}
	if v, ok := e.overrides[name]; ok {
		return v
	}
	defs := slices.Compact(slices.Clone(e.m.vars[name]))
	if len(defs) > 1 {
		e.unknownRef("$(" + name + "), defined more than once")
		return "${" + makeName(name) + "}"
	}
	if len(defs) == 1 {
		v := defs[0]
		for _, x := range e.m.appends[name] {
			v += " " + x
		}
		return e.expand(v, depth+1)
	}
	// make takes the rest from the environment, then its defaults; an
	// undefined variable is empty.
	if name == "PWD" {
		if cwd, ok := e.sc.st.single(); ok {
			return cwd
		}
	}
	vals, known, _ := e.a.value(name, e.sc)
	if !known {
		e.unknownRef("$(" + name + "), only known at run time")
		return "${" + makeName(name) + "}"
	}
	if v := strings.Join(vals, " "); v != "" {
		return v
	}
	if v, ok := makeDefaults[name]; ok {
		return v
	}
	return strings.Join(e.m.appends[name], " ")
}

// makeName turns a make variable name into a shell one.
func makeName(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 || s[0] >= '0' && s[0] <= '9' {
		return "MAKE_" + b.String()
	}
	return b.String()
}

// makeTextFuncs are make's functions of text alone, with how many
// arguments each takes (the last one keeps any further commas).
var makeTextFuncs = map[string]int{
	"subst": 3, "patsubst": 3, "strip": 1, "findstring": 2, "filter": 2, "filter-out": 2, "sort": 1,
	"word": 2, "wordlist": 3, "words": 1, "firstword": 1, "lastword": 1, "dir": 1, "notdir": 1,
	"suffix": 1, "basename": 1, "addsuffix": 2, "addprefix": 2, "join": 2,
}

// textFunc expands $(fn arg) when fn is a function of text alone and its
// arguments are known; ok is false otherwise.
func (e *makeExpander) textFunc(fn, arg string, depth int) (string, bool) {
	n, ok := makeTextFuncs[fn]
	if !ok {
		return "", false
	}
	raw := makeArgs(arg, n)
	if len(raw) != n {
		return "", false
	}
	why := e.why
	e.why = ""
	args := make([]string, n)
	for i, r := range raw {
		args[i] = e.expand(r, depth+1)
	}
	known := e.why == ""
	if !known || why != "" {
		e.why = why
	}
	if !known {
		return "", false
	}
	words := func(i int) []string { return strings.Fields(args[i]) }
	mapWords := func(ws []string, f func(string) string) string {
		out := make([]string, len(ws))
		for i, w := range ws {
			out[i] = f(w)
		}
		return strings.Join(out, " ")
	}
	switch fn {
	case "subst":
		if args[0] == "" {
			return args[2], true
		}
		return strings.ReplaceAll(args[2], args[0], args[1]), true
	case "patsubst":
		return mapWords(words(2), func(w string) string {
			if stem, ok := makeMatch(strings.TrimSpace(args[0]), w); ok {
				return strings.Replace(strings.TrimSpace(args[1]), "%", stem, 1)
			}
			return w
		}), true
	case "strip":
		return strings.Join(words(0), " "), true
	case "findstring":
		if strings.Contains(args[1], args[0]) {
			return args[0], true
		}
		return "", true
	case "filter", "filter-out":
		var out []string
		for _, w := range words(1) {
			hit := false
			for _, p := range words(0) {
				_, m := makeMatch(p, w)
				hit = hit || m
			}
			if hit == (fn == "filter") {
				out = append(out, w)
			}
		}
		return strings.Join(out, " "), true
	case "sort":
		ws := words(0)
		slices.Sort(ws)
		return strings.Join(slices.Compact(ws), " "), true
	case "words":
		return strconv.Itoa(len(words(0))), true
	case "word", "wordlist":
		i, err := strconv.Atoi(strings.TrimSpace(args[0]))
		ws := words(n - 1)
		if err != nil || i < 1 {
			return "", false
		}
		j := i
		if fn == "wordlist" {
			if j, err = strconv.Atoi(strings.TrimSpace(args[1])); err != nil {
				return "", false
			}
		}
		if i > len(ws) || j < i {
			return "", true
		}
		return strings.Join(ws[i-1:min(j, len(ws))], " "), true
	case "firstword", "lastword":
		ws := words(0)
		if len(ws) == 0 {
			return "", true
		}
		if fn == "firstword" {
			return ws[0], true
		}
		return ws[len(ws)-1], true
	case "dir":
		return mapWords(words(0), func(w string) string {
			if i := strings.LastIndexByte(w, '/'); i >= 0 {
				return w[:i+1]
			}
			return "./"
		}), true
	case "notdir":
		return mapWords(words(0), func(w string) string { return w[strings.LastIndexByte(w, '/')+1:] }), true
	case "suffix", "basename":
		var out []string
		for _, w := range words(0) {
			dot := strings.LastIndexByte(w, '.')
			if dot < 0 || strings.LastIndexByte(w, '/') > dot {
				if fn == "basename" {
					out = append(out, w)
				}
				continue
			}
			if fn == "suffix" {
				out = append(out, w[dot:])
			} else {
				out = append(out, w[:dot])
			}
		}
		return strings.Join(out, " "), true
	case "addsuffix":
		return mapWords(words(1), func(w string) string { return w + strings.TrimSpace(args[0]) }), true
	case "addprefix":
		return mapWords(words(1), func(w string) string { return strings.TrimSpace(args[0]) + w }), true
	case "join":
		a, b := words(0), words(1)
		out := make([]string, max(len(a), len(b)))
		for i := range out {
			if i < len(a) {
				out[i] = a[i]
			}
			if i < len(b) {
				out[i] += b[i]
			}
		}
		return strings.Join(out, " "), true
	}
	return "", false
}

// makeArgs splits a function's argument text at its top-level commas into
// at most n arguments.
func makeArgs(s string, n int) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s) && len(out) < n-1; i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// makeMatch matches word w against a make pattern (one % at most) and
// returns the stem.
func makeMatch(pattern, w string) (string, bool) {
	pre, suf, ok := strings.Cut(pattern, "%")
	if !ok {
		return "", pattern == w
	}
	if len(w) < len(pre)+len(suf) || !strings.HasPrefix(w, pre) || !strings.HasSuffix(w, suf) {
		return "", false
	}
	return w[len(pre) : len(w)-len(suf)], true
}
