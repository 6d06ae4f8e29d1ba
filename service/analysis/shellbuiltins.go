package analysis

// This file handles the shell's own builtins that change what later
// commands mean or run code: cd, alias, eval, trap, source, exec, command,
// hash, enable, set. (The built-in policy rules' shapes are in shapes.go.)

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// builtins are the shell's builtins: they never resolve through PATH.
// Keywords are the parser's (syntax.IsKeyword), asked by builtinOrKeyword.
var builtins = map[string]bool{
	".": true, ":": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true,
	"builtin": true, "caller": true, "cd": true, "command": true, "compgen": true, "complete": true,
	"compopt": true, "continue": true, "declare": true, "dirs": true, "disown": true, "echo": true,
	"enable": true, "eval": true, "exec": true, "exit": true, "export": true, "false": true, "fc": true,
	"fg": true, "getopts": true, "hash": true, "help": true, "history": true, "jobs": true, "kill": true,
	"let": true, "local": true, "logout": true, "mapfile": true, "popd": true, "printf": true,
	"pushd": true, "pwd": true, "read": true, "readarray": true, "readonly": true, "return": true,
	"set": true, "shift": true, "shopt": true, "source": true, "suspend": true, "test": true,
	"times": true, "trap": true, "true": true, "type": true, "typeset": true, "ulimit": true,
	"umask": true, "unalias": true, "unset": true, "wait": true,
}

// IsBuiltin reports whether name is a builtin of the shell (keywords are
// not: a quoted keyword in a command's place runs the program of that name).
func IsBuiltin(name string) bool { return builtins[name] }

// builtinOrKeyword reports whether a command name never resolves through
// PATH.
func builtinOrKeyword(name string) bool { return builtins[name] || syntax.IsKeyword(name) }

// IsShell reports whether name, a basename, is a shell whose code analysis
// parses (LangOf knows its language).
func IsShell(name string) bool {
	_, ok := LangOf(name)
	return ok
}

// cd follows the working directory.
func (a *analyzer) cd(n *Node, sc *scope) {
	st := sc.st
	args := n.Argv[1:]
	for len(args) > 0 && strings.HasPrefix(args[0].Value, "-") && !args[0].Dynamic && args[0].Value != "-" {
		if args[0].Value == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
	}
	if n.Name != "cd" || a.tainted["CDPATH"] || a.taintAll {
		st.known, st.cwds = false, nil
		return
	}
	var target string
	switch {
	case len(args) == 0:
		h, ok := a.lookupVar("HOME", sc)
		if !ok {
			st.known, st.cwds = false, nil
			return
		}
		target = h
	case args[0].Dynamic || args[0].Value == "-" || args[0].Glob:
		st.known, st.cwds = false, nil
		return
	default:
		target = args[0].Value
	}
	if !st.known {
		return
	}
	var next []string
	for _, d := range st.cwds {
		t := cleanJoin(d, target)
		if !slices.Contains(next, t) {
			next = append(next, t)
		}
	}
	st.lastCd, st.lastCdSet = next, true
	// cd may fail and leave the directory as it was.
	for _, t := range next {
		if !slices.Contains(st.cwds, t) {
			st.cwds = append(st.cwds, t)
		}
	}
	if len(st.cwds) > maxCwds {
		st.known, st.cwds = false, nil
	}
}

// alias records alias definitions; a later use of the name is dynamic.
func (a *analyzer) alias(n *Node, sc *scope) {
	for _, x := range n.Argv[1:] {
		if x.Dynamic {
			a.flag(n.ID, FlagDynamic, "alias defined from a value only known at run time")
			a.taintAll = true
			continue
		}
		if name, val, ok := strings.Cut(x.Value, "="); ok {
			a.aliases[name] = val
		}
	}
}

func (a *analyzer) eval(n *Node, sc *scope) {
	args := n.Argv[1:]
	if len(args) == 0 {
		return
	}
	s := Arg{Value: strings.Join(values(args), " ")}
	for _, x := range args {
		if x.Dynamic {
			s = Arg{Value: short(a.joinSrc(args)), Dynamic: true}
			s.subs = collectSubs(args)
			break
		}
	}
	n.runsCode = true
	a.code(n, s, "eval", sc.u.lang, sc.child("", nil))
}

func (a *analyzer) joinSrc(args []Arg) string {
	return strings.Join(values(args), " ")
}

func collectSubs(args []Arg) []int {
	var out []int
	for _, x := range args {
		out = append(out, x.subs...)
	}
	return out
}

// trap: the first argument is code run on a signal or at exit.
func (a *analyzer) trap(n *Node, sc *scope) {
	args := n.Argv[1:]
	if len(args) > 0 && (args[0].Value == "--" && !args[0].Dynamic) {
		args = args[1:]
	}
	if len(args) < 2 || !args[0].Dynamic && (args[0].Value == "-" || args[0].Value == "" || strings.HasPrefix(args[0].Value, "-")) {
		return
	}
	a.code(n, args[0], "trap", sc.u.lang, sc.child("", nil))
}

// source reads a script into the current shell.
func (a *analyzer) source(n *Node, sc *scope) {
	args := n.Argv[1:]
	if len(args) > 0 && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	p := sc.args
	if len(args) > 1 {
		p = params{known: true, zero: sc.args.zero, list: args[1:]}
	}
	lang := "bash"
	if sc.u.lang == syntax.LangPOSIX {
		lang = "sh"
	}
	n.runsCode = true
	a.runScript(n, args[0], lang, "source", p, sc)
}

func (a *analyzer) exit(n *Node, sc *scope) { sc.st.exited = true }

func (a *analyzer) set(n *Node, sc *scope) {
	for _, x := range n.Argv[1:] {
		if x.Dynamic || !strings.HasPrefix(x.Value, "-") && !strings.HasPrefix(x.Value, "+") || x.Value == "--" {
			sc.args = params{}
			return
		}
	}
}

// execBuiltin: exec [-cl] [-a name] [command [args]].
func (a *analyzer) execBuiltin(n *Node, sc *scope) {
	rest, ok := parseOpts(n.Argv[1:], optSpec{short: "cl", shortVal: "a"})
	if !ok.known {
		a.flag(n.ID, FlagDynamic, "exec with an option analysis does not know: %s", ok.unknown)
	}
	if len(rest) > 0 {
		sc.st.exited = true
	}
	a.payload(n, "exec", rest, sc)
}

// commandBuiltin: command [-pVv] command [args]; -v and -V only look.
func (a *analyzer) commandBuiltin(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{short: "pvV"})
	if res.has("v") || res.has("V") {
		return
	}
	if !res.known {
		a.flag(n.ID, FlagDynamic, "command with an option analysis does not know: %s", res.unknown)
	}
	a.payload(n, "command", rest, sc)
}

// hash -p path name binds name to any program.
func (a *analyzer) hash(n *Node, sc *scope) {
	for _, x := range n.Argv[1:] {
		if strings.HasPrefix(x.Value, "-p") {
			a.flag(n.ID, FlagDynamic, "hash -p makes a command name run another program")
			a.taintAll = true
		}
	}
}

// enable -f loads a builtin from a shared library.
func (a *analyzer) enable(n *Node, sc *scope) {
	for _, x := range n.Argv[1:] {
		if strings.HasPrefix(x.Value, "-") && strings.Contains(x.Value, "f") {
			a.flag(n.ID, FlagNonShellCode, "enable -f loads a builtin from a shared library")
		}
		if strings.HasPrefix(x.Value, "-") && strings.Contains(x.Value, "n") {
			a.flag(n.ID, FlagDynamic, "enable -n turns a builtin off, so its name runs a program from PATH")
		}
	}
}
