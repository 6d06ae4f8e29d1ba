package argvcred

// This file decides where a tainted value becomes an argument of a
// process: the words of external commands, code given to eval, trap and
// shells, and the input of xargs and of shells reading code.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// check returns the first credential unit u puts on a command line.
func (c *credChecker) check(u *credUnit) *Use {
	var use *Use
	at := func(n syntax.Node, v, cmd, how string) {
		if use == nil {
			use = &Use{Var: v, Command: cmd, How: how, Source: u.src, Line: int(n.Pos().Line()), Col: int(n.Pos().Col())}
		}
	}
	syntax.Walk(u.file, func(n syntax.Node) bool {
		if use != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign:
			// GIT_SSH_COMMAND="ssh -i $T": the value is a command line.
			if n.Name != nil && n.Value != nil && c.codeValue(n.Name.Value) {
				if v := c.wordVal(n.Value); v != "" {
					at(n.Value, v, "$"+n.Name.Value, "code variable")
				}
			}
		case *syntax.Stmt:
			if call, ok := n.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				c.checkCall(n, call.Args, at)
			}
		case *syntax.BinaryCmd:
			if n.Op != syntax.Pipe && n.Op != syntax.PipeAll {
				return true
			}
			// echo "$T" | xargs curl, echo "curl $T" | sh
			if call, ok := n.Y.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				name := credCmdName(call.Args[0])
				if credCodeReader(name) {
					if v := c.stmtVal(n.X); v != "" {
						how := "xargs"
						if credIsShell(name) {
							how = "shell code"
						}
						at(call.Args[0], v, name, how)
					}
				}
			}
		}
		return true
	})
	return use
}

// checkCall checks one simple command's words.
func (c *credChecker) checkCall(st *syntax.Stmt, args []*syntax.Word, at func(syntax.Node, string, string, string)) {
	name := credCmdName(args[0])
	switch {
	case name == "exec" || name == "command":
		// The rest is a command of its own.
		rest := args[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0].Lit(), "-") {
			if rest[0].Lit() == "-a" && len(rest) > 1 {
				rest = rest[1:]
			}
			if rest[0].Lit() == "-v" || rest[0].Lit() == "-V" {
				return // command -v: a lookup, nothing runs
			}
			rest = rest[1:]
		}
		if len(rest) > 0 {
			c.checkCall(st, rest, at)
		}
		return
	case name == "eval" || name == "trap" || name == "alias":
		for _, a := range args[1:] {
			if v := c.wordVal(a); v != "" {
				at(a, v, name, name)
				return
			}
		}
		return
	case name == "source" || name == ".":
		// source <(printf 'curl %s' "$T") runs code built from it.
		for _, a := range args[1:] {
			for _, p := range a.Parts {
				if ps, ok := p.(*syntax.ProcSubst); ok {
					if v := c.stmtsVal(ps.Stmts); v != "" {
						at(a, v, name, "shell code")
						return
					}
				}
			}
		}
		return
	case name != "" && !strings.Contains(name, "/") && (c.funcs[name] || analysis.IsBuiltin(name)):
		// Functions and builtins run inside the shell: their arguments are
		// on no command line (the builtins above are handled apart).
		return
	}
	if name == "" {
		name = credWordText(args[0])
	}
	// Words of an external command: a parameter expansion, or a command
	// substitution whose output may hold a credential. A process
	// substitution passes a file name, not the value.
	for _, a := range args {
		if v := c.wordVal(a); v != "" {
			how := "argument"
			if c.viaSubst(a) {
				how = "command substitution"
			}
			at(a, v, name, how)
			return
		}
	}
	// xargs <<<"$T", sh <<<"curl $T", sh <<EOF ... $T ... EOF
	if credCodeReader(name) {
		if v := c.inputVal(st); v != "" {
			how := "xargs"
			if credIsShell(name) {
				how = "shell code"
			}
			at(args[0], v, name, how)
		}
	}
}

// viaSubst reports whether the word carries a credential only through a
// command substitution (its output).
func (c *credChecker) viaSubst(w *syntax.Word) bool {
	var direct func(parts []syntax.WordPart) string
	direct = func(parts []syntax.WordPart) string {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.ParamExp:
				if v := c.paramVal(p); v != "" {
					return v
				}
			case *syntax.DblQuoted:
				if v := direct(p.Parts); v != "" {
					return v
				}
			}
		}
		return ""
	}
	return direct(w.Parts) == ""
}

// credCmdName returns the command name a word holds, as written (a path for
// /usr/bin/curl); "" when it is only known at run time.
func credCmdName(w *syntax.Word) string {
	s, ok := credStaticWord(w)
	if !ok {
		return ""
	}
	return s
}

func credBaseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// credStaticWord returns the value of a word without expansions.
func credStaticWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var add func(parts []syntax.WordPart) bool
	add = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(credUnescape(strings.ReplaceAll(p.Value, "\\\n", "")))
			case *syntax.SglQuoted:
				if p.Dollar {
					b.WriteString(analysis.ANSIC(p.Value))
				} else {
					b.WriteString(p.Value)
				}
			case *syntax.DblQuoted:
				if p.Dollar || !add(p.Parts) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	if !add(w.Parts) {
		return "", false
	}
	return b.String(), true
}

func credUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// credWordText is the word as written, for messages.
func credWordText(w *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return b.String()
}

// credIsShell reports whether name runs shell code: every shell analysis
// parses, and busybox, whose sh applet takes -c and reads its input.
func credIsShell(name string) bool {
	b := credBaseName(name)
	return analysis.IsShell(b) || b == "busybox"
}

// credCodeReader reports whether a command turns its input into arguments or
// code.
func credCodeReader(name string) bool {
	b := credBaseName(name)
	return b == "xargs" || b == "parallel" || credIsShell(b)
}
