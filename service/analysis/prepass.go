package analysis

// Before a piece of text is walked, one pass over it records what it
// defines and assigns anywhere: functions, aliases, and variables. Analysis
// is not flow-sensitive about variables: a variable the text assigns
// anywhere is only known at run time everywhere, so an expansion is never
// resolved to a value the shell might not have at that point.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// prepass records the definitions and assignments of f.
func (a *analyzer) prepass(f *syntax.File, u *unit, sc *scope) {
	prefixAssigns := map[*syntax.Assign]bool{}
	syntax.Walk(f, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.FuncDecl:
			if x.Name != nil {
				a.funcs[x.Name.Value] = true
				if runsArgs(x.Body) {
					a.argRunners[x.Name.Value] = true
				}
			}
		case *syntax.Assign:
			if x.Name != nil && !prefixAssigns[x] {
				switch {
				case x.Array != nil:
					// The elements' values: what arithmetic over an element
					// evaluates (the keys of an associative array never are).
					for _, e := range x.Array.Elems {
						a.assigned(x.Name.Value, e.Value, false, sc)
					}
					a.info(x.Name.Value).array = true
				default:
					a.assigned(x.Name.Value, x.Value, x.Append, sc)
					if x.Index != nil {
						a.info(x.Name.Value).array = true
					}
				}
			}
		case *syntax.DeclClause:
			for _, as := range x.Args {
				if as.Naked && as.Name == nil && as.Value != nil {
					if v := as.Value.Lit(); strings.HasPrefix(v, "-") && strings.Contains(v, "n") {
						a.taintAll = true // a nameref can point anywhere
					}
				}
			}
		case *syntax.WordIter:
			a.loopVar(x)
		case *syntax.ParamExp:
			if x.Exp != nil && x.Param != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
				a.taint(x.Param.Value)
			}
		case *syntax.BinaryArithm:
			if isAssignOp(x.Op) {
				if w, ok := x.X.(*syntax.Word); ok {
					a.arithAssigned(w.Lit())
				}
			}
		case *syntax.UnaryArithm:
			if x.Op == syntax.Inc || x.Op == syntax.Dec {
				if w, ok := x.X.(*syntax.Word); ok {
					a.arithAssigned(w.Lit())
				}
			}
		case *syntax.Redirect:
			if x.N != nil && strings.HasPrefix(x.N.Value, "{") {
				a.taint(strings.Trim(x.N.Value, "{}"))
			}
		case *syntax.CoprocClause:
			a.taint("COPROC")
			if x.Name != nil {
				a.taint(x.Name.Lit())
			}
		case *syntax.CallExpr:
			a.prepassCall(x, u, sc)
			// NAME=value cmd sets NAME for cmd alone, not in the shell,
			// except before a special builtin.
			if len(x.Args) > 0 && !specialBuiltins[x.Args[0].Lit()] {
				for _, as := range x.Assigns {
					prefixAssigns[as] = true
				}
			}
		}
		return true
	})
}

// specialBuiltins keep prefix assignments in the shell (POSIX).
var specialBuiltins = map[string]bool{
	":": true, ".": true, "source": true, "eval": true, "exec": true, "export": true, "readonly": true,
	"set": true, "shift": true, "trap": true, "unset": true, "return": true, "exit": true,
	"break": true, "continue": true, "times": true,
}

func isAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		return true
	}
	return false
}

func (a *analyzer) taint(name string) {
	if name != "" {
		a.tainted[name] = true
	}
}

func (a *analyzer) info(name string) *varInfo {
	v := a.vars[name]
	if v == nil {
		v = &varInfo{}
		a.vars[name] = v
	}
	return v
}

// assigned records name=value.
func (a *analyzer) assigned(name string, value *syntax.Word, complexValue bool, sc *scope) {
	a.taint(name)
	v := a.info(name)
	if complexValue {
		v.unknown = true
		return
	}
	if value == nil {
		v.static = append(v.static, "")
		return
	}
	if s, ok := literal(value); ok {
		v.static = append(v.static, s)
		return
	}
	if s, ok := a.staticValue(value, sc); ok {
		v.static = append(v.static, s)
		return
	}
	// x=${y#pat}, ${y%pat}, ${y:1:2}: a part of y's value, safe in
	// arithmetic when y's is.
	if src, ok := cutOf(value); ok {
		v.elemsOf = append(v.elemsOf, src)
		return
	}
	if len(value.Parts) == 1 {
		p := value.Parts[0]
		if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			p = dq.Parts[0]
		}
		switch p := p.(type) {
		case *syntax.ArithmExp:
			v.static = append(v.static, "0") // a number
			return
		case *syntax.CmdSubst:
			if numericSubst(p) {
				v.static = append(v.static, "0")
				return
			}
		}
	}
	v.unknown = true
}

// arithAssigned records an assignment inside arithmetic: a number.
func (a *analyzer) arithAssigned(name string) {
	if name == "" {
		return
	}
	a.taint(name)
	a.info(name).static = append(a.info(name).static, "0")
}

// unknownVar records an assignment only known at run time.
func (a *analyzer) unknownVar(name string) {
	if !isName(name) {
		return
	}
	a.taint(name)
	a.info(name).unknown = true
}

// loopVar records a for loop's variable.
func (a *analyzer) loopVar(x *syntax.WordIter) {
	name := x.Name.Value
	a.taint(name)
	v := a.info(name)
	for _, w := range x.Items {
		if s, ok := literal(w); ok {
			v.static = append(v.static, s)
			continue
		}
		// ${!arr[@]}: the keys of an indexed array are numbers (those of an
		// associative array are never evaluated as arithmetic).
		// "${arr[@]}": the array's elements.
		if len(w.Parts) == 1 {
			if dq, ok := w.Parts[0].(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
				if pe, ok := dq.Parts[0].(*syntax.ParamExp); ok && pe.Excl && pe.Index != nil {
					v.static = append(v.static, "0")
					continue
				}
				if pe, ok := dq.Parts[0].(*syntax.ParamExp); ok && allElems(pe) {
					v.elemsOf = append(v.elemsOf, pe.Param.Value)
					continue
				}
			}
		}
		v.unknown = true
	}
	if len(x.Items) == 0 && !x.InPos.IsValid() {
		v.unknown = true // for x; do: the positional parameters
	}
}

// literal returns the value of a word without expansions.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "~*?[") {
				return "", false
			}
			s, _ := unescapeLit(p.Value)
			b.WriteString(s)
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value, true))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// prepassCall records what a simple command assigns or defines.
func (a *analyzer) prepassCall(x *syntax.CallExpr, u *unit, sc *scope) {
	if len(x.Args) == 0 {
		return
	}
	name := x.Args[0].Lit()
	if name == "" {
		if _, ok := literal(x.Args[0]); !ok {
			return
		}
		name, _ = literal(x.Args[0])
	}
	name = strings.TrimPrefix(name, `\`)
	args := x.Args[1:]
	lits := func() []string {
		var out []string
		for _, w := range args {
			if s, ok := literal(w); ok {
				out = append(out, s)
			} else {
				out = append(out, "")
			}
		}
		return out
	}
	switch name {
	case "read", "mapfile", "readarray", "getopts", "wait":
		for _, s := range lits() {
			a.unknownVar(s)
		}
		a.unknownVar("REPLY")
		a.unknownVar("MAPFILE")
		a.unknownVar("OPTARG")
	case "printf":
		l := lits()
		for i, s := range l {
			if s == "-v" && i+1 < len(l) {
				a.unknownVar(l[i+1])
			}
		}
	case "unset", "export", "declare", "typeset", "local", "readonly":
		for _, s := range lits() {
			if strings.HasPrefix(s, "-") {
				if strings.Contains(s, "n") && name != "unset" {
					a.taintAll = true
				}
				continue
			}
			k, v, hasVal := strings.Cut(s, "=")
			if hasVal {
				a.taint(k)
				a.info(k).static = append(a.info(k).static, v)
			} else {
				a.taint(k)
			}
		}
		for _, w := range args {
			if _, ok := literal(w); !ok {
				a.taintAll = true // declare "$x=..." can assign anything
			}
		}
	case "eval":
		// A literal string's assignments count everywhere; one built at run
		// time is judged when the walk reaches it (eval).
		var parts []string
		for _, w := range args {
			s, ok := literal(w)
			if !ok {
				return
			}
			parts = append(parts, s)
		}
		if u.depth < a.opts.MaxDepth {
			if f, err := a.parse(strings.Join(parts, " "), u.lang); err == nil {
				a.prepass(f, &unit{src: strings.Join(parts, " "), lang: u.lang, depth: u.depth + 1}, sc)
			}
		}
	case "set":
		for _, s := range lits() {
			if s == "" || s == "--" || !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
				u.argsMutated = true
			}
		}
	case "shift":
		u.argsMutated = true
	case "cd", "pushd", "popd":
		a.taint("PWD")
		a.taint("OLDPWD")
	case "alias":
		for _, w := range args {
			s, ok := literal(w)
			if !ok {
				continue
			}
			if k, v, ok := strings.Cut(s, "="); ok {
				a.aliases[k] = v
			}
		}
	}
}

// staticValue returns the value of an assignment's word made of literal
// text, a leading tilde and variables of the constructed environment
// ($HOME/.netrc, ~/.aws), when it is known before anything runs.
func (a *analyzer) staticValue(w *syntax.Word, sc *scope) (string, bool) {
	var b strings.Builder
	var walk func(parts []syntax.WordPart, quoted bool) bool
	walk = func(parts []syntax.WordPart, quoted bool) bool {
		for i, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				v := p.Value
				if i == 0 && !quoted && (v == "~" || strings.HasPrefix(v, "~/")) {
					home, ok := a.lookupVar("HOME", sc)
					if !ok {
						return false
					}
					b.WriteString(home)
					v = v[1:]
				}
				if quoted {
					b.WriteString(unescapeDouble(v, true))
					continue
				}
				if strings.ContainsAny(v, "~*?[") {
					return false
				}
				s, _ := unescapeLit(v)
				b.WriteString(s)
			case *syntax.SglQuoted:
				if p.Dollar {
					return false
				}
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if !walk(p.Parts, true) {
					return false
				}
			case *syntax.ParamExp:
				if !plainParam(p) {
					return false
				}
				val, ok := a.lookupVar(p.Param.Value, sc)
				if !ok {
					return false
				}
				b.WriteString(val)
			default:
				return false
			}
		}
		return true
	}
	if !walk(w.Parts, false) {
		return "", false
	}
	return b.String(), true
}

// allElems reports whether p is "${arr[@]}" (or [*]) and nothing more.
func allElems(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.IsSet || p.Slice != nil || p.Repl != nil ||
		p.Names != 0 || p.Exp != nil || p.NestedParam != nil || p.Flags != nil {
		return false
	}
	w, ok := p.Index.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// cutOf reports the variable whose value w is a part of: w is ${y#pat},
// ${y##pat}, ${y%pat}, ${y%%pat} or ${y:off:len} of a plain y (quoted or
// not), whose result is a substring of y's value.
func cutOf(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	p := w.Parts[0]
	if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		p = dq.Parts[0]
	}
	pe, ok := p.(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.IsSet || pe.Index != nil || pe.Repl != nil ||
		pe.Names != 0 || pe.NestedParam != nil || pe.Flags != nil || !isName(pe.Param.Value) {
		return "", false
	}
	switch {
	case pe.Slice != nil && pe.Exp == nil:
		return pe.Param.Value, true
	case pe.Exp != nil && pe.Slice == nil:
		switch pe.Exp.Op {
		case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
			return pe.Param.Value, true
		}
	}
	return "", false
}

// runsArgs reports whether a function body runs its arguments as a
// command: a simple command that is "$@" (after command, exec, time,
// nohup or builtin none of which change what runs).
func runsArgs(body *syntax.Stmt) bool {
	found := false
	syntax.Walk(body, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.FuncDecl); ok && n != syntax.Node(body) {
			return false // a nested function's "$@" is its own
		}
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		for _, w := range call.Args {
			if isAllArgs(w) {
				found = true
				break
			}
			if lit := w.Lit(); lit != "command" && lit != "exec" && lit != "nohup" {
				break
			}
		}
		return true
	})
	return found
}

// isAllArgs reports whether w is "$@" (or ${@}, unquoted too).
func isAllArgs(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	p := w.Parts[0]
	if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		p = dq.Parts[0]
	}
	pe, ok := p.(*syntax.ParamExp)
	return ok && isAtParam(pe) && !pe.Excl && pe.Index == nil && pe.Exp == nil && pe.Names == 0 && pe.NestedParam == nil && pe.Flags == nil
}
