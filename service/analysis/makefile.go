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
