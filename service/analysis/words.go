package analysis

// This file expands words the way the shell will, as far as that is known
// before anything runs: quotes, backslashes, ANSI-C strings, tildes, brace
// expansion, and parameters whose values are fixed (the constructed
// environment, positional parameters of a bash -c with literal arguments,
// variables no part of the text assigns). Anything else is marked dynamic,
// never guessed.

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceFields bounds the fields one word's brace expansion may make.
const maxBraceFields = 256

// shellVars are variables the shell itself sets: their values are never
// known statically (and most are never empty).
var shellVars = map[string]bool{
	"BASH": true, "BASHOPTS": true, "BASHPID": true, "BASH_ALIASES": true, "BASH_ARGC": true,
	"BASH_ARGV": true, "BASH_ARGV0": true, "BASH_CMDS": true, "BASH_COMMAND": true,
	"BASH_EXECUTION_STRING": true, "BASH_LINENO": true, "BASH_REMATCH": true, "BASH_SOURCE": true,
	"BASH_SUBSHELL": true, "BASH_VERSINFO": true, "BASH_VERSION": true, "DIRSTACK": true,
	"EPOCHREALTIME": true, "EPOCHSECONDS": true, "EUID": true, "FUNCNAME": true, "GROUPS": true,
	"HISTCMD": true, "HOSTNAME": true, "HOSTTYPE": true, "LINENO": true, "MACHTYPE": true,
	"MAPFILE": true, "OLDPWD": true, "OPTARG": true, "OPTIND": true, "OSTYPE": true,
	"PIPESTATUS": true, "PPID": true, "PWD": true, "RANDOM": true, "REPLY": true, "SECONDS": true,
	"SHELLOPTS": true, "SHLVL": true, "SRANDOM": true, "UID": true, "COLUMNS": true, "LINES": true,
	"HISTFILE": true, "HISTSIZE": true, "HISTFILESIZE": true, "PS1": true, "PS2": true, "PS4": true,
	"COMP_WORDS": true, "COMP_CWORD": true, "COMP_LINE": true, "COMP_POINT": true, "COPROC": true,
	"READLINE_LINE": true, "READLINE_POINT": true, "BASH_COMPAT": true, "TIMEFORMAT": true,
	"MAIL": true, "MAILPATH": true, "OPTERR": true, "PS0": true, "PS3": true,
}

// numericVars are shell variables whose values are numbers: safe in
// arithmetic.
var numericVars = map[string]bool{
	"#": true, "?": true, "$": true, "!": true, "RANDOM": true, "SRANDOM": true, "LINENO": true,
	"SECONDS": true, "BASHPID": true, "PPID": true, "UID": true, "EUID": true, "OPTIND": true,
	"SHLVL": true, "COLUMNS": true, "LINES": true, "EPOCHSECONDS": true, "HISTCMD": true,
	"BASH_SUBSHELL": true,
}

// fieldBuilder accumulates the fields of one word.
type fieldBuilder struct {
	fields  []Arg
	cur     strings.Builder
	ifEmpty strings.Builder
	started bool
	dyn     bool
	subs    []int
	glob    bool
	// noIfEmpty: an unknown part can never be empty (${x:?}, $$...).
	noIfEmpty bool
	src       string
	// maybe are the values the field may take while maybeOK (Arg.maybe):
	// every unknown part so far was an assigned variable of literal
	// values.
	maybe   []string
	noMaybe bool
}

// maxMaybe bounds the values Arg.maybe lists for one word.
const maxMaybe = 16

func (b *fieldBuilder) lit(s string, glob bool) {
	if len(b.maybe) > 0 {
		for i := range b.maybe {
			b.maybe[i] += s
		}
	}
	b.cur.WriteString(s)
	if b.dyn {
		b.ifEmpty.WriteString(s)
	}
	b.started = true
	b.glob = b.glob || glob
}

func (b *fieldBuilder) unknown(nonEmpty bool) {
	b.noMaybe = true
	b.unknownPart(nonEmpty)
}

// assignedPart is an unknown part that is one of vals, the literal values
// the text assigns a variable.
func (b *fieldBuilder) assignedPart(vals []string) {
	if !b.dyn && !b.noMaybe {
		b.maybe = []string{b.cur.String()}
	}
	if !b.noMaybe {
		if len(b.maybe)*len(vals) > maxMaybe {
			b.noMaybe, b.maybe = true, nil
		} else {
			var next []string
			for _, m := range b.maybe {
				for _, v := range vals {
					next = append(next, m+v)
				}
			}
			b.maybe = next
		}
	}
	b.unknownPart(false)
}

func (b *fieldBuilder) unknownPart(nonEmpty bool) {
	if !b.dyn {
		// What the field would be if this (and every later) unknown
		// part were empty starts as what it holds so far.
		b.ifEmpty.WriteString(b.cur.String())
	}
	b.started = true
	b.dyn = true
	b.noIfEmpty = b.noIfEmpty || nonEmpty
}

func (b *fieldBuilder) end() {
	if !b.started {
		return
	}
	a := Arg{Value: b.cur.String(), Glob: b.glob}
	if b.dyn {
		a = Arg{Value: b.src, Dynamic: true, Glob: b.glob, ifEmpty: b.ifEmpty.String(), hasIfEmpty: !b.noIfEmpty, subs: b.subs}
		if !b.noMaybe {
			a.maybe = b.maybe
		}
	}
	b.maybe, b.noMaybe = nil, false
	b.subs = nil
	b.fields = append(b.fields, a)
	b.cur.Reset()
	b.ifEmpty.Reset()
	b.started, b.dyn, b.glob, b.noIfEmpty = false, false, false, false
}

// split appends the value of an unquoted expansion, split on IFS
// whitespace.
func (b *fieldBuilder) split(s string) {
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], " \t\n")
		if j < 0 {
			b.lit(s[i:], strings.ContainsAny(s[i:], "*?["))
			return
		}
		if j > 0 {
			b.lit(s[i:i+j], strings.ContainsAny(s[i:i+j], "*?["))
		}
		b.end()
		i += j + 1
	}
}

// fields expands w into the arguments the shell will pass, as far as they
// are known. Substitutions in w are walked as nodes under owner.
func (a *analyzer) fields(w *syntax.Word, sc *scope, owner int, subs *[]int) []Arg {
	if v, ok := simpleWord(w); ok {
		return []Arg{{Value: v}}
	}
	src := a.text(sc.u, w)
	// Brace expansion is bash's; it is applied in sh too, where it only
	// makes the analysis stricter (and /bin/sh is bash on macOS).
	// SplitBraces rewrites the word it is given: it splits a copy, for
	// the parsed unit is shared with the credential check, whose walk
	// knows no brace nodes.
	split := *w
	if syntax.SplitBraces(&split) {
		var out []Arg
		n := 0
		for bw, err := range expand.BracesSeq(nil, &split) {
			n++
			if err != nil || n > maxBraceFields {
				a.note(owner, "brace expansion of "+short(src)+" is too large to follow")
				return []Arg{{Value: src, Dynamic: true}}
			}
			out = append(out, a.expandWord(bw.Parts, src, sc, owner, subs, modeWord)...)
		}
		return out
	}
	return a.expandWord(w.Parts, src, sc, owner, subs, modeWord)
}

// Expansion modes.
const (
	modeWord    = iota // an argument: split and globbed
	modeString         // an assignment value or target: neither
	modeDouble         // inside double quotes
	modeHeredoc        // a here-document body
)

// str expands w as one string without splitting or globbing: assignment
// values, redirection targets, case words.
func (a *analyzer) str(w *syntax.Word, sc *scope, owner int, subs *[]int) Arg {
	if w == nil || len(w.Parts) == 0 {
		return Arg{}
	}
	if v, ok := simpleWord(w); ok {
		return Arg{Value: v}
	}
	src := a.text(sc.u, w)
	f := a.expandWord(w.Parts, src, sc, owner, subs, modeString)
	switch len(f) {
	case 0:
		return Arg{}
	case 1:
		f[0].Glob = false
		return f[0]
	}
	// "$@" in a string context joins; keep it simple.
	vals := make([]string, len(f))
	for i, x := range f {
		if x.Dynamic {
			return Arg{Value: src, Dynamic: true}
		}
		vals[i] = x.Value
	}
	return Arg{Value: strings.Join(vals, " ")}
}

// expandWord expands parts in mode (modeWord or modeString).
func (a *analyzer) expandWord(parts []syntax.WordPart, src string, sc *scope, owner int, subs *[]int, mode int) []Arg {
	b := &fieldBuilder{src: src}
	for i, p := range parts {
		a.part(b, p, i == 0, mode, sc, owner, subs)
	}
	b.end()
	return b.fields
}

// part expands one word part into b.
func (a *analyzer) part(b *fieldBuilder, p syntax.WordPart, first bool, mode int, sc *scope, owner int, subs *[]int) {
	quoted := mode != modeWord
	switch p := p.(type) {
	case *syntax.Lit:
		v := p.Value
		switch mode {
		case modeDouble:
			b.lit(unescapeDouble(v, true), false)
			return
		case modeHeredoc:
			b.lit(unescapeDouble(v, false), false)
			return
		}
		if first && strings.HasPrefix(v, "~") {
			end := strings.IndexByte(v, '/')
			if end < 0 {
				end = len(v)
			}
			if home, ok := a.tilde(v[1:end], sc); ok {
				b.lit(home, false)
				v = v[end:]
			} else {
				b.unknown(true)
				v = v[end:]
			}
		}
		s, glob := unescapeLit(v)
		b.lit(s, glob && mode == modeWord)
	case *syntax.SglQuoted:
		if p.Dollar {
			b.lit(ansiC(p.Value), false)
		} else {
			b.lit(p.Value, false)
		}
		if p.Value == "" {
			b.started = true
		}
	case *syntax.DblQuoted:
		b.started = true
		for _, q := range p.Parts {
			a.part(b, q, false, modeDouble, sc, owner, subs)
		}
	case *syntax.ParamExp:
		vals, known, nonEmpty := a.param(p, sc, owner, subs)
		switch {
		case !known && a.lastDefault != nil:
			// ${x:-alt} with x unknown: alt is what an empty x gives.
			b.unknown(nonEmpty)
			b.ifEmpty.WriteString(*a.lastDefault)
			a.lastDefault = nil
		case !known:
			if vals, ok := a.assignedValues(p, quoted); ok {
				b.assignedPart(vals)
				break
			}
			b.unknown(nonEmpty)
		case quoted && len(vals) > 1 && isAtParam(p):
			// "$@": one field per parameter.
			for i, v := range vals {
				if i > 0 {
					b.end()
					b.started = true
				}
				b.lit(v, false)
			}
		case quoted:
			b.lit(strings.Join(vals, " "), false)
			b.started = true
		default:
			if a.taintAll || a.tainted["IFS"] {
				b.unknown(false)
				return
			}
			for i, v := range vals {
				if i > 0 {
					b.end()
				}
				b.split(v)
			}
		}
	case *syntax.CmdSubst:
		ids := a.subst(p.Stmts, sc, owner, "cmd_subst")
		if subs != nil {
			*subs = append(*subs, ids...)
		}
		b.subs = append(b.subs, ids...)
		// $(echo /), $(pwd): the output of one command analysis knows.
		if len(ids) == 1 {
			if n := a.node(ids[0]); n != nil && n.Kind == KindCommand && n.Builtin && n.Parent == owner && len(n.Redirs) == 0 {
				if out, ok := a.knownOutput(n); ok {
					out = strings.TrimRight(out, "\n")
					if quoted {
						b.lit(out, false)
						b.started = true
					} else {
						b.split(out)
					}
					return
				}
			}
		}
		b.unknown(false)
	case *syntax.ArithmExp:
		var ids []int
		a.arith(p.X, sc, owner, &ids)
		if subs != nil {
			*subs = append(*subs, ids...)
		}
		b.subs = append(b.subs, ids...)
		b.unknown(true)
	case *syntax.ProcSubst:
		var ids []int
		if p.Op == syntax.CmdOut {
			// >(cmd): cmd reads what the owner writes to it.
			ids = a.substIn(p.Stmts, sc, owner, "proc_subst", stdinSrc{kind: "pipe", from: []int{owner}})
		} else {
			ids = a.subst(p.Stmts, sc, owner, "proc_subst")
		}
		if subs != nil {
			*subs = append(*subs, ids...)
		}
		b.subs = append(b.subs, ids...)
		b.unknown(true)
	case *syntax.ExtGlob:
		b.lit(p.Op.String()+p.Pattern.Value+")", true)
	case *syntax.BraceExp:
		// Only reached for an expansion SplitBraces left (none expected).
		b.unknown(false)
	default:
		b.unknown(false)
	}
}

func isAtParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "@" && p.Exp == nil && p.Repl == nil && p.Slice == nil && !p.Length
}

// tilde returns the directory ~user (user "" for ~) names, when known.
func (a *analyzer) tilde(user string, sc *scope) (string, bool) {
	switch user {
	case "":
		return a.lookupVar("HOME", sc)
	case "+":
		if cwd, ok := sc.st.single(); ok && !a.tainted["PWD"] {
			return cwd, true
		}
	}
	return "", false
}

// plainParam reports whether p is a plain $x or ${x}: no operator, index,
// length or indirection, so it expands to x's value as it is.
func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && !p.Width && !p.IsSet && p.Index == nil && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil && p.NestedParam == nil && p.Flags == nil
}

// assignedValues returns the literal values the text assigns the
// variable p expands ($x, ${x}), when every assignment of it is literal;
// unquoted, only values that neither split nor glob.
func (a *analyzer) assignedValues(p *syntax.ParamExp, quoted bool) ([]string, bool) {
	if !plainParam(p) || a.taintAll {
		return nil, false
	}
	v := a.vars[p.Param.Value]
	if v == nil || v.unknown || len(v.static) == 0 || v.array {
		return nil, false
	}
	if !quoted {
		for _, s := range v.static {
			if s == "" || strings.ContainsAny(s, " \t\n*?[") {
				return nil, false
			}
		}
	}
	return v.static, true
}

// lookupVar returns the static value of a plain variable.
func (a *analyzer) lookupVar(name string, sc *scope) (string, bool) {
	vals, known, _ := a.value(name, sc)
	if !known || len(vals) != 1 {
		return "", false
	}
	return vals[0], true
}

// value returns the values of the parameter name ($@ has many), whether
// they are known, and, when not, whether they are known to be non-empty.
func (a *analyzer) value(name string, sc *scope) (vals []string, known, nonEmpty bool) {
	switch name {
	case "@", "*":
		if sc.args.known && !sc.args.dynamic() {
			return sc.args.values(), true, false
		}
		return nil, false, false
	case "#":
		if sc.args.known {
			return []string{strconv.Itoa(len(sc.args.list))}, true, true
		}
		return nil, false, true
	case "0":
		if sc.args.known && sc.args.zero != "" {
			return []string{sc.args.zero}, true, true
		}
		return nil, false, true
	case "?", "$", "!", "-", "_":
		return nil, false, name != "_"
	}
	if n, err := strconv.Atoi(name); isDigits(name) && err == nil {
		if n <= 0 {
			return a.value("0", sc)
		}
		if !sc.args.known {
			return nil, false, false
		}
		if n-1 < len(sc.args.list) {
			arg := sc.args.list[n-1]
			if arg.Dynamic {
				return nil, false, false
			}
			return []string{arg.Value}, true, false
		}
		return []string{""}, true, false
	}
	if a.taintAll || a.tainted[name] || strings.HasPrefix(name, "GATEHOUSE_") || slices.Contains(a.opts.Unknown, name) {
		return nil, false, false
	}
	if v, ok := sc.env.get(name); ok {
		if !v.known {
			return nil, false, false
		}
		return []string{v.val}, true, false
	}
	if shellVars[name] || strings.HasPrefix(name, "BASH_") || strings.HasPrefix(name, "COMP_") {
		return nil, false, name != "OLDPWD" && name != "REPLY" && name != "OPTARG"
	}
	if name == "IFS" {
		return []string{" \t\n"}, true, true
	}
	// Not in the constructed environment and never assigned: unset.
	return []string{""}, true, false
}

// param evaluates a parameter expansion.
func (a *analyzer) param(p *syntax.ParamExp, sc *scope, owner int, subs *[]int) (vals []string, known, nonEmpty bool) {
	a.lastDefault = nil
	if p.Index != nil {
		a.arith(p.Index, sc, owner, subs)
	}
	if p.Slice != nil {
		a.arith(p.Slice.Offset, sc, owner, subs)
		a.arith(p.Slice.Length, sc, owner, subs)
	}
	if p.Param == nil || p.Excl || p.NestedParam != nil || p.Index != nil || p.Names != 0 || p.Width || p.IsSet || p.Flags != nil {
		// Walk words inside for their substitutions.
		if p.Exp != nil && p.Exp.Word != nil {
			a.str(p.Exp.Word, sc, owner, subs)
		}
		return nil, false, false
	}
	name := p.Param.Value
	base, known, nonEmpty := a.value(name, sc)
	if p.Length {
		if !known {
			return nil, false, true
		}
		n := 0
		for _, v := range base {
			n += utf8.RuneCountInString(v)
		}
		if len(base) > 1 {
			n = len(base)
		}
		return []string{strconv.Itoa(n)}, true, true
	}
	joined := strings.Join(base, " ")
	switch {
	case p.Exp != nil:
		var alt Arg
		if p.Exp.Word != nil {
			alt = a.str(p.Exp.Word, sc, owner, subs)
		}
		switch p.Exp.Op {
		case syntax.DefaultUnsetOrNull, syntax.AssignUnsetOrNull, syntax.DefaultUnset, syntax.AssignUnset:
			if !known {
				if !alt.Dynamic {
					a.lastDefault = &alt.Value
				}
				return nil, false, nonEmpty
			}
			if joined != "" {
				return base, true, true
			}
			if alt.Dynamic {
				return nil, false, false
			}
			return []string{alt.Value}, true, alt.Value != ""
		case syntax.ErrorUnsetOrNull, syntax.ErrorUnset:
			if !known {
				return nil, false, true
			}
			return base, true, true
		case syntax.AlternateUnsetOrNull, syntax.AlternateUnset:
			if !known {
				return nil, false, false
			}
			if joined == "" {
				return []string{""}, true, false
			}
			if alt.Dynamic {
				return nil, false, false
			}
			return []string{alt.Value}, true, alt.Value != ""
		case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
			if !known || alt.Dynamic || alt.Glob || strings.ContainsAny(alt.Value, "*?[") {
				return nil, false, false
			}
			v := joined
			switch p.Exp.Op {
			case syntax.RemSmallPrefix, syntax.RemLargePrefix:
				v = strings.TrimPrefix(v, alt.Value)
			default:
				v = strings.TrimSuffix(v, alt.Value)
			}
			return []string{v}, true, false
		case syntax.UpperFirst, syntax.UpperAll:
			if !known {
				return nil, false, nonEmpty
			}
			if p.Exp.Op == syntax.UpperAll {
				return []string{strings.ToUpper(joined)}, true, false
			}
			if joined == "" {
				return []string{""}, true, false
			}
			r, size := utf8.DecodeRuneInString(joined)
			return []string{strings.ToUpper(string(r)) + joined[size:]}, true, false
		case syntax.LowerFirst, syntax.LowerAll:
			if !known {
				return nil, false, nonEmpty
			}
			if p.Exp.Op == syntax.LowerAll {
				return []string{strings.ToLower(joined)}, true, false
			}
			if joined == "" {
				return []string{""}, true, false
			}
			r, size := utf8.DecodeRuneInString(joined)
			return []string{strings.ToLower(string(r)) + joined[size:]}, true, false
		}
		return nil, false, false
	case p.Repl != nil:
		orig := a.str(p.Repl.Orig, sc, owner, subs)
		with := a.str(p.Repl.With, sc, owner, subs)
		if !known || orig.Dynamic || with.Dynamic || strings.ContainsAny(orig.Value, "*?[#%") || orig.Value == "" {
			return nil, false, false
		}
		n := 1
		if p.Repl.All {
			n = -1
		}
		return []string{strings.Replace(joined, orig.Value, with.Value, n)}, true, false
	case p.Slice != nil:
		off, ok1 := staticInt(p.Slice.Offset)
		length, ok2 := staticInt(p.Slice.Length)
		if !known || !ok1 || (p.Slice.Length != nil && !ok2) || off < 0 || len(base) > 1 {
			return nil, false, false
		}
		r := []rune(joined)
		if off > len(r) {
			off = len(r)
		}
		r = r[off:]
		if p.Slice.Length != nil && length >= 0 && length < len(r) {
			r = r[:length]
		}
		return []string{string(r)}, true, false
	}
	return base, known, nonEmpty
}
