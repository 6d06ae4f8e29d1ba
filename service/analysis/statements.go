package analysis

// This file walks statements: lists, compound commands, pipelines,
// substitutions, function declarations, tests and arithmetic.

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// stmts walks a list of statements in order.
func (a *analyzer) stmts(list []*syntax.Stmt, sc *scope) {
	for _, st := range list {
		if a.stopped {
			return
		}
		a.stmt(st, sc)
	}
}

// stmt walks one statement.
func (a *analyzer) stmt(st *syntax.Stmt, sc *scope) {
	if st.Background || st.Coprocess || st.Disown {
		sc = sc.child("background", sc.st.clone())
	}
	if st.Negated {
		sc = sc.child("negated", nil)
	}
	sc.st.lastCdSet = false
	sc.st.exited = false
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		a.simple(cmd, st.Redirs, sc)
	case nil:
		if len(st.Redirs) > 0 {
			n := a.newNode(sc, KindCompound, st.Pos())
			a.redirs(n, st.Redirs, sc, nil)
		}
	default:
		inner := sc
		if len(st.Redirs) > 0 {
			n := a.newNode(sc, KindCompound, st.Pos())
			n.Name = compoundName(cmd)
			in := a.redirs(n, st.Redirs, sc, nil)
			if in.kind != "" {
				inner = sc.child("", nil)
				inner.stdin = in
			}
		}
		a.compound(cmd, inner)
	}
}

// compoundName names a compound command for display.
func compoundName(c syntax.Command) string {
	switch c.(type) {
	case *syntax.Subshell:
		return "( )"
	case *syntax.Block:
		return "{ }"
	case *syntax.IfClause:
		return "if"
	case *syntax.WhileClause:
		return "while"
	case *syntax.ForClause:
		return "for"
	case *syntax.CaseClause:
		return "case"
	case *syntax.FuncDecl:
		return "function"
	case *syntax.BinaryCmd:
		return "list"
	}
	return "compound"
}

// compound walks a command other than a simple one.
func (a *analyzer) compound(cmd syntax.Command, sc *scope) {
	switch c := cmd.(type) {
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			a.pipeline(c, sc)
		case syntax.AndStmt:
			a.stmt(c.X, sc)
			before := sc.st.clone()
			if sc.st.lastCdSet {
				sc.st.cwds, sc.st.known = sc.st.lastCd, true
			}
			a.stmt(c.Y, sc)
			sc.st.merge(before)
		case syntax.OrStmt:
			a.stmt(c.X, sc)
			success := sc.st.clone()
			if sc.st.lastCdSet {
				success.cwds, success.known = sc.st.lastCd, true
			}
			a.stmt(c.Y, sc)
			if sc.st.exited {
				*sc.st = *success
			} else {
				sc.st.merge(success)
			}
		}
	case *syntax.Subshell:
		a.stmts(c.Stmts, sc.child("subshell", sc.st.clone()))
	case *syntax.Block:
		a.stmts(c.Stmts, sc)
	case *syntax.IfClause:
		var ends []*state
		for cl := c; cl != nil; cl = cl.Else {
			a.stmts(cl.Cond, sc.child("condition", nil))
			br := sc.st.clone()
			a.stmts(cl.Then, sc.child("", br))
			ends = append(ends, br)
		}
		sc.st.merge(ends...)
	case *syntax.WhileClause:
		body := sc.st.clone()
		a.stmts(c.Cond, sc.child("condition", body))
		a.stmts(c.Do, sc.child("loop", body))
		sc.st.merge(body)
	case *syntax.ForClause:
		n := a.newNode(sc, KindArith, c.Pos())
		n.Name = "for"
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			n.Kind = KindAssign
			n.Assigns = []string{l.Name.Value + " in ..."}
			for _, w := range l.Items {
				a.fields(w, sc, n.ID, nil)
			}
		case *syntax.CStyleLoop:
			a.arith(l.Init, sc, n.ID, nil)
			a.arith(l.Cond, sc, n.ID, nil)
			a.arith(l.Post, sc, n.ID, nil)
		}
		body := sc.st.clone()
		a.stmts(c.Do, sc.child("loop", body))
		sc.st.merge(body)
	case *syntax.CaseClause:
		n := a.newNode(sc, KindAssign, c.Pos())
		n.Name = "case"
		a.str(c.Word, sc, n.ID, nil)
		var ends []*state
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				a.str(p, sc, n.ID, nil)
			}
			br := sc.st.clone()
			a.stmts(item.Stmts, sc.child("", br))
			ends = append(ends, br)
		}
		sc.st.merge(ends...)
	case *syntax.FuncDecl:
		a.funcDecl(c, sc)
	case *syntax.ArithmCmd:
		n := a.newNode(sc, KindArith, c.Pos())
		n.Name = "(( ))"
		a.arith(c.X, sc, n.ID, nil)
	case *syntax.LetClause:
		n := a.newNode(sc, KindArith, c.Pos())
		n.Name = "let"
		for _, x := range c.Exprs {
			a.arith(x, sc, n.ID, nil)
		}
	case *syntax.TestClause:
		n := a.newNode(sc, KindCommand, c.Pos())
		n.Name, n.Builtin = "[[", true
		n.Argv = []Arg{{Value: "[["}}
		a.test(c.X, sc, n)
	case *syntax.DeclClause:
		a.decl(c, sc)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt, sc)
		}
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, sc.child("coproc", sc.st.clone()))
	default:
		n := a.newNode(sc, KindCommand, cmd.Pos())
		a.flag(n.ID, FlagDynamic, "a construct analysis does not follow")
	}
}

// pipeline walks a | b | c: each element in a subshell whose stdin is the
// output of the elements before it.
func (a *analyzer) pipeline(c *syntax.BinaryCmd, sc *scope) {
	var elems []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated && !s.Background {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		elems = append(elems, s)
	}
	flatten(c.X)
	flatten(c.Y)
	a.pipelines++
	id := a.pipelines
	var before []int
	for i, e := range elems {
		el := sc.child("pipeline", sc.st.clone())
		el.pipeline = id
		if i > 0 {
			el.stdin = stdinSrc{kind: "pipe", from: slices.Clone(before)}
			el.stdinFrom = slices.Clone(before)
		}
		start := len(a.tree.Nodes)
		a.stmt(e, el)
		for j := start; j < len(a.tree.Nodes); j++ {
			before = append(before, j)
		}
	}
}

// subst walks the statements of a command or process substitution under
// owner and returns the ids of the nodes it made.
func (a *analyzer) subst(stmts []*syntax.Stmt, sc *scope, owner int, ctx string) []int {
	return a.substIn(stmts, sc, owner, ctx, stdinSrc{})
}

// substIn is subst with the substitution's stdin set (kind "" inherits).
func (a *analyzer) substIn(stmts []*syntax.Stmt, sc *scope, owner int, ctx string, in stdinSrc) []int {
	c := sc.child(ctx, sc.st.clone())
	c.parent, c.via, c.top = owner, "", false
	c.pipeline, c.stdinFrom = 0, nil
	if in.kind != "" {
		c.stdin = in
		c.stdinFrom = in.from
	}
	start := len(a.tree.Nodes)
	a.stmts(stmts, c)
	var ids []int
	for j := start; j < len(a.tree.Nodes); j++ {
		ids = append(ids, j)
	}
	return ids
}

// funcDecl walks a function body: its commands are judged whether or not
// it is called. Inside, the working directory and the arguments are not
// known.
func (a *analyzer) funcDecl(c *syntax.FuncDecl, sc *scope) {
	name := ""
	if c.Name != nil {
		name = c.Name.Value
	}
	st := sc.st.clone()
	st.known, st.cwds = false, nil
	body := sc.child("function "+name, st)
	body.top = false
	body.args = params{}
	body.fn = name
	start := len(a.tree.Nodes)
	a.stmt(c.Body, body)
	// A fork bomb: the body runs the function itself in a background
	// pipeline (:(){ :|:& };:).
	for j := start; j < len(a.tree.Nodes); j++ {
		n := a.tree.Nodes[j]
		if n.Name == name && n.pipeline != 0 && slices.Contains(n.Context, "background") {
			n.funcSelfPipe = true
		}
	}
}

// test walks a [[ ]] expression; arithmetic comparisons evaluate their
// operands as arithmetic.
func (a *analyzer) test(x syntax.TestExpr, sc *scope, n *Node) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if w, ok := x.X.(*syntax.Word); ok {
				a.arith(w, sc, n.ID, nil)
			}
			if w, ok := x.Y.(*syntax.Word); ok {
				a.arith(w, sc, n.ID, nil)
			}
			return
		}
		a.test(x.X, sc, n)
		a.test(x.Y, sc, n)
	case *syntax.UnaryTest:
		a.test(x.X, sc, n)
	case *syntax.ParenTest:
		a.test(x.X, sc, n)
	case *syntax.Word:
		n.Argv = append(n.Argv, a.str(x, sc, n.ID, nil))
	}
}

// arith walks an arithmetic expression owned by node owner. Bash evaluates
// the value of every variable it names as an expression again, and an
// array subscript in that value runs command substitutions: arithmetic
// over a value analysis cannot see is dynamic.
func (a *analyzer) arith(x syntax.ArithmExpr, sc *scope, owner int, subs *[]int) {
	if x == nil {
		return
	}
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		a.arith(x.X, sc, owner, subs)
		a.arith(x.Y, sc, owner, subs)
	case *syntax.UnaryArithm:
		a.arith(x.X, sc, owner, subs)
	case *syntax.ParenArithm:
		a.arith(x.X, sc, owner, subs)
	case *syntax.FlagsArithm:
		a.arith(x.X, sc, owner, subs)
	case *syntax.Word:
		for _, p := range x.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				if isName(p.Value) && !a.arithSafe(p.Value, sc, 0) {
					a.flag(owner, FlagDynamic, "arithmetic evaluates $%s, whose value is only known at run time and may hold code (a[$(cmd)])", p.Value)
				}
			case *syntax.ParamExp:
				// ${#x} is a length: a number, whatever x holds.
				if p.Param != nil && !p.Length && !a.arithSafe(p.Param.Value, sc, 0) {
					a.flag(owner, FlagDynamic, "arithmetic evaluates $%s, whose value is only known at run time and may hold code (a[$(cmd)])", p.Param.Value)
				}
				if p.Index != nil {
					a.arith(p.Index, sc, owner, subs)
				}
			case *syntax.CmdSubst:
				ids := a.subst(p.Stmts, sc, owner, "cmd_subst")
				if subs != nil {
					*subs = append(*subs, ids...)
				}
				if !numericSubst(p) {
					a.flag(owner, FlagDynamic, "arithmetic evaluates the output of a command substitution as an expression")
				}
			case *syntax.DblQuoted, *syntax.ArithmExp:
				w := &syntax.Word{Parts: []syntax.WordPart{p}}
				a.str(w, sc, owner, subs)
			}
		}
	}
}

// arithSafe reports whether the variable name holds a value arithmetic
// can evaluate without running code.
func (a *analyzer) arithSafe(name string, sc *scope, depth int) bool {
	if numericVars[name] {
		return true
	}
	if depth > 8 || a.taintAll {
		return false
	}
	if name != "" && name[0] >= '0' && name[0] <= '9' {
		vals, known, _ := a.value(name, sc)
		return known && safeArithValues(vals)
	}
	if v := a.vars[name]; v != nil {
		if v.unknown {
			return false
		}
		for _, arr := range v.elemsOf {
			if arr == name || !a.arithSafe(arr, sc, depth+1) {
				return false
			}
		}
		for _, s := range v.static {
			if isName(s) {
				if !a.arithSafe(s, sc, depth+1) {
					return false
				}
			} else if !safeArithValues([]string{s}) {
				return false
			}
		}
	}
	if ev, ok := sc.env.get(name); ok {
		return ev.known && safeArithValues([]string{ev.val})
	}
	return true
}

// safeArithValues: a value without $, ` or [ cannot run code when bash
// evaluates it.
func safeArithValues(vals []string) bool {
	for _, v := range vals {
		if strings.ContainsAny(v, "$`[") {
			return false
		}
	}
	return true
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// decl walks export/declare/local/readonly/typeset in bash.
func (a *analyzer) decl(c *syntax.DeclClause, sc *scope) {
	n := a.newNode(sc, KindCommand, c.Pos())
	n.Name, n.Builtin = c.Variant.Value, true
	n.Argv = []Arg{{Value: c.Variant.Value}}
	for _, as := range c.Args {
		switch {
		case as.Naked && as.Name == nil && as.Value != nil:
			n.Argv = append(n.Argv, a.fields(as.Value, sc, n.ID, nil)...)
		case as.Naked && as.Name != nil:
			n.Argv = append(n.Argv, Arg{Value: as.Name.Value})
		default:
			name, val := a.assign(n, as, sc)
			disp := name + "=" + val.Value
			n.Argv = append(n.Argv, Arg{Value: disp, Dynamic: val.Dynamic})
			if name == "PATH" && c.Variant.Value != "local" {
				a.setPath(n, val, sc, sc.st)
			}
		}
	}
	a.flushGitEnv(n, sc)
}

// sprintf is fmt.Sprintf.
func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// cleanJoin joins a relative path to dir and cleans it.
func cleanJoin(dir, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

// statNumeric matches stat formats that print only numbers.
var statNumeric = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(%[sbBfhiXYZWUgou]|[ :])+$`) })

// dateNumeric matches date formats that print only digits and separators.
var dateNumeric = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\+(%[sNHMSdmyYjuwVUGgIklezCq]|[-:./ _0-9])*$`) })

// numericSubst reports whether a command substitution prints only a number
// (date +%s, wc -l < f, nproc...): arithmetic on it cannot run code.
func numericSubst(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 1 {
		return false
	}
	st := cs.Stmts[0]
	cmd := st.Cmd
	// A pipeline: what matters is its last command.
	for {
		b, ok := cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe {
			break
		}
		if len(b.Y.Redirs) > 0 {
			return false
		}
		cmd = b.Y.Cmd
	}
	call, ok := cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return false
	}
	var args []string
	for _, w := range call.Args {
		s, ok := literal(w)
		if !ok {
			return false
		}
		args = append(args, s)
	}
	operands := 0
	for _, x := range args[1:] {
		if !strings.HasPrefix(x, "-") {
			operands++
		}
	}
	switch args[0] {
	case "nproc", "getconf":
		return true
	case "id":
		return operands == 0 && len(args) > 1
	case "date":
		return len(args) == 2 && dateNumeric().MatchString(args[1])
	case "wc":
		// With a file operand wc prints the file's name too.
		return operands == 0
	case "seq", "expr":
		return true
	case "grep":
		return operands <= 1 && slices.ContainsFunc(args[1:], func(x string) bool {
			return x == "-c" || x == "--count" || strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.Contains(x, "c")
		})
	case "stat":
		return len(args) == 3 && (args[1] == "-c" || args[1] == "--format") && statNumeric().MatchString(args[2]) ||
			len(args) == 4 && (args[1] == "-c" || args[1] == "--format") && statNumeric().MatchString(args[2])
	}
	return false
}
