package argvcred

// This file follows credentials from variable to variable: the passes
// that taint names assigned from a credential, and the values of words,
// parameters and substitutions in terms of that taint.

import (
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// propagate taints what is assigned from a tainted value; it reports
// whether anything changed.
func (c *credChecker) propagate() bool {
	changed := false
	set := func(m map[string]bool, name string) {
		if name != "" && !m[name] {
			m[name] = true
			changed = true
		}
	}
	assign := func(name string, w *syntax.Word) {
		if w == nil {
			return
		}
		if c.wordVal(w) != "" {
			set(c.val, name)
		}
		if c.wordDir(w) {
			set(c.dir, name)
		}
	}
	for _, u := range c.units {
		syntax.Walk(u.file, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Assign:
				if n.Name == nil {
					return true
				}
				assign(n.Name.Value, n.Value)
				if n.Array != nil {
					for _, e := range n.Array.Elems {
						assign(n.Name.Value, e.Value)
					}
				}
			case *syntax.DeclClause:
				nameref := n.Variant != nil && n.Variant.Value == "nameref"
				for _, a := range n.Args {
					if a.Naked && a.Name == nil && a.Value != nil && strings.HasPrefix(a.Value.Lit(), "-") && strings.Contains(a.Value.Lit(), "n") {
						nameref = true
					}
				}
				for _, a := range n.Args {
					if nameref && a.Name != nil && a.Value != nil {
						target := a.Value.Lit()
						if c.val[target] {
							set(c.val, a.Name.Value)
						}
						if c.dir[target] {
							set(c.dir, a.Name.Value)
						}
					}
				}
			case *syntax.ParamExp:
				if n.Param != nil && n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
					assign(n.Param.Value, n.Exp.Word)
				}
			case *syntax.ForClause:
				if it, ok := n.Loop.(*syntax.WordIter); ok && it.Name != nil {
					for _, w := range it.Items {
						assign(it.Name.Value, w)
					}
				}
			case *syntax.Stmt:
				c.propagateStmt(n, set)
				// while read X; do ...; done < "$GATEHOUSE_CRED_DIR/f"
				if _, simple := n.Cmd.(*syntax.CallExpr); !simple && c.inputVal(n) != "" {
					for _, name := range credReadsIn(n) {
						set(c.val, name)
					}
				}
			case *syntax.BinaryCmd:
				// printf %s "$T" | read X, ... | while read X: the input
				// of the reads is tainted.
				if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && c.stmtVal(n.X) != "" {
					for _, name := range credReadsIn(n.Y) {
						set(c.val, name)
					}
				}
			}
			return true
		})
	}
	return changed
}

// propagateStmt handles the commands that assign: read and mapfile from a
// tainted input, printf -v, and function calls, set and source given a
// tainted argument (positional parameters).
func (c *credChecker) propagateStmt(st *syntax.Stmt, set func(map[string]bool, string)) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return
	}
	name := credCmdName(call.Args[0])
	switch {
	case name == "read" || name == "mapfile" || name == "readarray":
		if c.inputVal(st) != "" {
			for _, v := range credReadNames(call) {
				set(c.val, v)
			}
		}
	case name == "printf":
		for i, a := range call.Args {
			if a.Lit() == "-v" && i+1 < len(call.Args) {
				for _, b := range call.Args[i+2:] {
					if c.wordVal(b) != "" {
						set(c.val, call.Args[i+1].Lit())
					}
				}
			}
		}
	case c.funcs[name] || name == "set" || name == "source" || name == ".":
		if !c.pos {
			for _, a := range call.Args[1:] {
				if c.wordVal(a) != "" {
					c.pos = true
					set(c.val, "@") // records the change
				}
			}
		}
	}
}

// credReadsIn returns the variables the reads in n assign.
func credReadsIn(n syntax.Node) []string {
	var out []string
	syntax.Walk(n, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			out = append(out, credReadNames(call)...)
		}
		return true
	})
	return out
}

// credReadNames returns the variables read or mapfile assign.
func credReadNames(call *syntax.CallExpr) []string {
	if len(call.Args) == 0 {
		return nil
	}
	withValue := "pdnNtui" // read's options that take a value
	switch credCmdName(call.Args[0]) {
	case "read":
	case "mapfile", "readarray":
		withValue = "dnOsuCc"
	default:
		return nil
	}
	var out []string
	skip := false
	for _, a := range call.Args[1:] {
		s := a.Lit()
		switch {
		case skip:
			skip = false
		case strings.HasPrefix(s, "-"):
			if len(s) == 2 && strings.ContainsAny(s[1:], withValue) {
				skip = true
			}
			if strings.HasPrefix(s, "-a") && len(s) > 2 {
				out = append(out, s[2:])
			}
		case credVarRE().MatchString(s):
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = []string{"REPLY", "MAPFILE"}
	}
	return out
}

var credVarRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// inputVal returns a tainted variable that reaches st's standard input
// through a here-string, a here-document, or a file: a process
// substitution using one, or a file in the credential directory.
func (c *credChecker) inputVal(st *syntax.Stmt) string {
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.WordHdoc:
			if v := c.wordVal(r.Word); v != "" {
				return v
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				if v := c.wordVal(r.Hdoc); v != "" {
					return v
				}
			}
		case syntax.RdrIn:
			if v := c.wordVal(r.Word); v != "" {
				return v
			}
			if c.wordDir(r.Word) {
				return credDirEnv
			}
			for _, p := range r.Word.Parts {
				if ps, ok := p.(*syntax.ProcSubst); ok {
					if v := c.stmtsVal(ps.Stmts); v != "" {
						return v
					}
				}
			}
		}
	}
	return ""
}

// isTainted reports whether the parameter name carries a credential.
func (c *credChecker) isTainted(name string) bool {
	if c.val[name] || credPrefixRE().MatchString(name) && name != credDirEnv {
		return true
	}
	if c.pos && (name == "@" || name == "*" || len(name) == 1 && name[0] >= '1' && name[0] <= '9') {
		return true
	}
	return false
}

// paramVal returns the tainted variable a parameter expansion yields the
// value of, or "".
func (c *credChecker) paramVal(p *syntax.ParamExp) string {
	if p.Param == nil {
		return ""
	}
	if p.Length || p.Names != 0 {
		return "" // ${#T}, ${!T*}: a length or names, not the value
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AlternateUnset || p.Exp.Op == syntax.AlternateUnsetOrNull) {
		return c.wordVal(p.Exp.Word) // ${T:+word} yields word, not T
	}
	if c.isTainted(p.Param.Value) {
		return p.Param.Value
	}
	if p.Exp != nil {
		return c.wordVal(p.Exp.Word)
	}
	return ""
}

// wordVal returns a tainted variable whose value (or part of it) the word
// expands to, or "".
func (c *credChecker) wordVal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	return c.partsVal(w.Parts)
}

func (c *credChecker) partsVal(parts []syntax.WordPart) string {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.ParamExp:
			if v := c.paramVal(p); v != "" {
				return v
			}
		case *syntax.DblQuoted:
			if v := c.partsVal(p.Parts); v != "" {
				return v
			}
		case *syntax.CmdSubst:
			if v := c.stmtsVal(p.Stmts); v != "" {
				return v
			}
		}
	}
	return ""
}

// wordDir reports whether the word names the credential directory.
func (c *credChecker) wordDir(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param != nil && c.dir[n.Param.Value] {
				found = true
			}
		case *syntax.Lit:
			if strings.Contains(n.Value, credDirPath) {
				found = true
			}
		case *syntax.SglQuoted:
			if strings.Contains(n.Value, credDirPath) {
				found = true
			}
		}
		return !found
	})
	return found
}

// stmtsVal returns a tainted variable (or the credential directory) the
// commands use, so that their output may hold a credential; "" when none.
func (c *credChecker) stmtsVal(stmts []*syntax.Stmt) string {
	found := ""
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.ParamExp:
				if v := c.paramVal(n); v != "" {
					found = v
				} else if n.Param != nil && c.dir[n.Param.Value] && !n.Length {
					found = n.Param.Value
				}
			case *syntax.Lit:
				if strings.Contains(n.Value, credDirPath) {
					found = credDirEnv
				}
			}
			return found == ""
		})
		if found != "" {
			break
		}
	}
	return found
}

func (c *credChecker) stmtVal(st *syntax.Stmt) string {
	if st == nil {
		return ""
	}
	return c.stmtsVal([]*syntax.Stmt{st})
}
