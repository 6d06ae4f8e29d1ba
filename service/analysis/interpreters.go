package analysis

// This file handles commands whose payload is code: shells, other
// interpreters (python, node, perl, …) with inline code, awk, and templates.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// code parses a string a command runs as shell code (bash -c, eval, trap)
// and walks it under n; a dynamic string flags n.
func (a *analyzer) code(n *Node, s Arg, what string, lang syntax.LangVariant, sc *scope) {
	if s.Dynamic {
		a.flag(n.ID, FlagDynamic, "%s runs shell code only known at run time: %s", what, short(s.Value))
		n.codeFrom = append(n.codeFrom, s.subs...)
		n.runsCode = true
		// Anything the code may assign is unknown from here on.
		a.taintAll = true
		// The static skeleton (the unknown parts left out) is judged too:
		// xargs -I{} sh -c 'curl x/{} | sh' pipes to a shell whatever {} is.
		if s.hasIfEmpty && strings.TrimSpace(s.ifEmpty) != "" {
			a.template(n, s.ifEmpty, what, lang, sc)
		}
		return
	}
	a.unit(n.ID, s.Value, what, lang, sc, what)
}

// shell handles bash, sh, dash, zsh...: -c strings, script files, stdin.
func (a *analyzer) shell(n *Node, lang syntax.LangVariant, sc *scope) {
	args := n.Argv[1:]
	hasC, readsStdin, noExec := false, false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		x := args[i]
		if x.Dynamic {
			if !hasC && (strings.HasPrefix(x.Value, "-") || strings.HasPrefix(x.Value, "$") || strings.HasPrefix(x.Value, `"$`)) {
				a.flag(n.ID, FlagDynamic, "%s with options only known at run time: %s", n.Name, short(x.Value))
				n.runsCode = true
				n.codeFrom = append(n.codeFrom, x.subs...)
				return
			}
			break
		}
		v := x.Value
		switch {
		case v == "--" || v == "-":
			i++
			break loop
		case v == "--rcfile" || v == "--init-file":
			i++
			if i < len(args) {
				a.runScript(n, args[i], n.Name, "source", params{}, sc)
			}
		case v == "--version" || v == "--help" || v == "--dump-strings" || v == "--dump-po-strings" || v == "--pretty-print":
			noExec = true
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, c := range v[1:] {
				switch c {
				case 'c':
					hasC = true
				case 's':
					readsStdin = true
				case 'n', 'D':
					noExec = true
				case 'o', 'O':
					i++
				}
			}
		default:
			break loop
		}
	}
	if noExec {
		return
	}
	rest := args[min(i, len(args)):]
	n.runsCode = true
	switch {
	case hasC:
		if len(rest) == 0 {
			return
		}
		p := params{known: true, zero: n.Name}
		if len(rest) > 1 {
			p.zero = rest[1].Value
			p.list = rest[2:]
		}
		c := a.payloadScope(sc, n)
		c.args = p
		a.code(n, rest[0], n.Name+" -c", lang, c)
	case readsStdin || len(rest) == 0:
		p := params{known: true, zero: n.Name, list: rest}
		a.stdinCode(n, langName(lang), p, sc)
	default:
		p := params{known: true, zero: rest[0].Value, list: rest[1:]}
		a.runScript(n, rest[0], langName(lang), "script", p, sc)
	}
}

// langName returns the dialect name of lang.
func langName(lang syntax.LangVariant) string {
	switch lang {
	case syntax.LangPOSIX:
		return "sh"
	case syntax.LangMirBSDKorn:
		return "ksh"
	case syntax.LangZsh:
		return "zsh"
	}
	return "bash"
}

// foreignShell: fish -c, csh -c...: code analysis cannot parse.
func (a *analyzer) foreignShell(n *Node, sc *scope) {
	if len(n.Argv) == 1 && (sc.stdin.kind == "none" || sc.stdin.kind == "call" && a.opts.Stdin == "") {
		return
	}
	a.flag(n.ID, FlagDynamic, "%s runs shell code in a language analysis cannot parse", n.Name)
	n.runsCode = true
}

// stdinCode analyses what a shell reading its stdin runs.
func (a *analyzer) stdinCode(n *Node, lang string, p params, sc *scope) {
	l, _ := LangOf(lang)
	in := sc.stdin
	switch in.kind {
	case "none":
	case "call":
		if a.opts.Stdin != "" {
			c := a.payloadScope(sc, n)
			c.args = p
			c.stdin = stdinSrc{kind: "none"}
			a.unit(n.ID, a.opts.Stdin, "stdin", l, c, "stdin")
		}
	case "text":
		if in.text.Dynamic {
			a.flag(n.ID, FlagDynamic, "%s reads its code from a here-document only known at run time", n.Name)
			n.codeFrom = append(n.codeFrom, in.subs...)
			return
		}
		c := a.payloadScope(sc, n)
		c.args = p
		c.stdin = stdinSrc{kind: "none"}
		a.unit(n.ID, in.text.Value, "here-document", l, c, "here-document")
	case "file":
		a.runScript(n, in.file, lang, "script", p, sc)
	case "pipe":
		n.codeFrom = append(n.codeFrom, in.from...)
		// cat FILE | sh reads FILE; echo TEXT | sh runs TEXT.
		if len(in.from) >= 1 {
			if f := a.node(in.from[0]); f != nil && len(in.from) == 1 && f.Kind == KindCommand {
				if f.Name == "cat" && len(f.Argv) > 1 && noDynamic(f.Argv[1:]) && !strings.HasPrefix(f.Argv[1].Value, "-") {
					for _, x := range f.Argv[1:] {
						a.runScript(n, x, lang, "script", p, sc)
					}
					return
				}
				if out := f.out; out != nil {
					c := a.payloadScope(sc, n)
					c.args = p
					a.unit(n.ID, out.Value, "stdin", l, c, "stdin")
					return
				}
			}
		}
		a.flag(n.ID, FlagDynamic, "%s reads its code from a pipe: what runs is the output of the commands before it", n.Name)
	default:
		a.flag(n.ID, FlagDynamic, "%s reads its code from a file descriptor only known at run time", n.Name)
	}
}

func noDynamic(args []Arg) bool {
	for _, x := range args {
		if x.Dynamic || x.Glob {
			return false
		}
	}
	return true
}

// interpreterOf returns the language of a non-shell interpreter name.
func interpreterOf(name string) string {
	switch {
	case name == "python" || strings.HasPrefix(name, "python2") || strings.HasPrefix(name, "python3") || strings.HasPrefix(name, "pypy"):
		return "python"
	case name == "node" || name == "nodejs" || name == "deno" || name == "bun" || name == "tsx" || name == "ts-node":
		return "node"
	case name == "perl" || strings.HasPrefix(name, "perl5"):
		return "perl"
	case name == "ruby" || strings.HasPrefix(name, "ruby"):
		return "ruby"
	case name == "php" || strings.HasPrefix(name, "php"):
		return "php"
	case name == "lua" || strings.HasPrefix(name, "lua5") || name == "luajit":
		return "lua"
	case name == "Rscript" || name == "osascript" || name == "tclsh" || name == "wish" || name == "expect" || name == "jshell" || name == "groovy" || name == "julia":
		return name
	case name == "awk" || name == "gawk" || name == "mawk" || name == "nawk":
		return "awk"
	}
	return ""
}

// codeFlags are each interpreter's options whose value is code; valFlags
// its options that take some other value.
var interpOpts = map[string]struct{ code, vals, module string }{
	"python": {code: "c", vals: "WXQ", module: "m"},
	"node":   {code: "ep", vals: "r"},
	"perl":   {code: "eE", vals: "IMmx"},
	"ruby":   {code: "e", vals: "IrCEFKT"},
	"php":    {code: "rBRE", vals: "cdfz"},
	"lua":    {code: "e", vals: "l"},
}

// interpreter flags code in another language and pins a script file.
func (a *analyzer) interpreter(n *Node, lang string, sc *scope) {
	args := n.Argv[1:]
	if lang == "awk" {
		a.awk(n, sc)
		return
	}
	spec := interpOpts[lang]
	for i := 0; i < len(args); i++ {
		x := args[i]
		v := x.Value
		if x.Dynamic {
			a.flag(n.ID, FlagNonShellCode, "%s runs code only known at run time", n.Name)
			return
		}
		switch {
		case v == "--":
			if i+1 < len(args) {
				a.runScript(n, args[i+1], lang, "interp", params{}, sc)
			}
			return
		case v == "--version" || v == "-V" || v == "--help" || v == "-h":
			return
		case v == "--eval" || v == "--print" || strings.HasPrefix(v, "--eval=") || strings.HasPrefix(v, "--print="):
			a.flag(n.ID, FlagNonShellCode, "%s %s runs inline %s code, which analysis does not understand", n.Name, v, lang)
			return
		case n.Name == "deno" && (v == "eval" || v == "repl"):
			a.flag(n.ID, FlagNonShellCode, "deno %s runs inline code, which analysis does not understand", v)
			return
		case n.Name == "deno" && v == "run":
			continue
		case v == "-":
			a.flag(n.ID, FlagNonShellCode, "%s runs %s code from its stdin", n.Name, lang)
			return
		case strings.HasPrefix(v, "--"):
			continue
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for j := 1; j < len(v); j++ {
				c := string(v[j])
				switch {
				case strings.Contains(spec.code, c):
					a.flag(n.ID, FlagNonShellCode, "%s -%s runs inline %s code, which analysis does not understand", n.Name, c, lang)
					return
				case strings.Contains(spec.module, c):
					a.flag(n.ID, FlagNonShellCode, "%s -%s runs an installed module, which analysis does not read", n.Name, c)
					return
				case strings.Contains(spec.vals, c):
					if j == len(v)-1 {
						i++
					}
					j = len(v)
				}
			}
		default:
			a.runScript(n, x, lang, "interp", params{}, sc)
			return
		}
	}
	// No code argument: the code is stdin.
	switch sc.stdin.kind {
	case "none":
	case "call":
		if a.opts.Stdin != "" {
			a.flag(n.ID, FlagNonShellCode, "%s runs %s code from the call's stdin", n.Name, lang)
		}
	default:
		a.flag(n.ID, FlagNonShellCode, "%s runs %s code from its stdin", n.Name, lang)
		n.codeFrom = append(n.codeFrom, sc.stdin.from...)
		n.runsCode = true
	}
}

// awk programs can run commands (system(), print | "cmd").
func (a *analyzer) awk(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{short: "bcCdhLNOPrStVWsg", shortVal: "fFvmlEie",
		longVal: []string{"file", "field-separator", "assign", "include", "load", "exec", "source"}, long: []string{"posix", "traditional", "sandbox"}})
	if f, ok := res.vals["f"]; ok {
		a.runScript(n, Arg{Value: f}, "awk", "interp", params{}, sc)
		return
	}
	if len(rest) == 0 {
		return
	}
	prog := rest[0]
	if prog.Dynamic || strings.Contains(prog.Value, "system") || strings.Contains(prog.Value, "|") || strings.Contains(prog.Value, "getline") {
		a.flag(n.ID, FlagNonShellCode, "the awk program can run commands (system, pipes), which analysis does not follow")
	}
}

// template walks the static skeleton of code built at run time, under n.
// A skeleton that does not parse is noted, not a parse error: the real
// code may parse.
func (a *analyzer) template(n *Node, text, what string, lang syntax.LangVariant, sc *scope) {
	if sc.u != nil && sc.u.depth+1 > a.opts.MaxDepth || a.stopped {
		return
	}
	f, err := a.parse(text, lang)
	if err != nil {
		a.note(n.ID, "the static part of the "+what+" code does not parse on its own")
		return
	}
	depth := 0
	if sc.u != nil {
		depth = sc.u.depth + 1
	}
	u := &unit{src: text, source: what + " (static part)", lang: lang, depth: depth}
	a.prepass(f, u, sc)
	c := *sc
	c.u, c.parent, c.via, c.top = u, n.ID, what+" (static part)", false
	a.stmts(f.Stmts, &c)
}
