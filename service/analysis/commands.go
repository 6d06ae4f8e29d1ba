package analysis

// This file handles simple commands: assignments, redirections, name
// resolution, and the commands analysis knows more about — wrappers whose
// payload is another command, shells and eval whose payload is code, and
// commands that change what later commands mean (cd, PATH, alias).

import (
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// builtins are the shell's builtins and keywords: they never resolve
// through PATH.
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
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "while": true, "until": true, "do": true, "done": true, "in": true, "function": true,
	"select": true, "time": true, "coproc": true, "!": true, "{": true, "}": true, "[[": true, "]]": true,
}

// cmdVars are environment variables whose values programs run as shell
// commands (git, less, editors).
var cmdVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "GIT_PAGER": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true, "GIT_PROXY_COMMAND": true, "SSH_ASKPASS": true,
	"SUDO_ASKPASS": true, "PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true,
	"LESSOPEN": true, "LESSCLOSE": true, "PROMPT_COMMAND": true, "GIT_SSH": true,
	"FCEDIT": true, "SUDO_EDITOR": true, "SELECTED_EDITOR": true, "KUBE_EDITOR": true,
	"GH_EDITOR": true, "GH_PAGER": true, "GH_BROWSER": true, "BROWSER": true, "SYSTEMD_PAGER": true,
	"SYSTEMD_EDITOR": true, "BAT_PAGER": true, "DELTA_PAGER": true, "PSQL_PAGER": true,
	"PERLDOC_PAGER": true, "HGEDITOR": true, "SVN_EDITOR": true, "CVSEDITOR": true, "GIT_DIFF_VIEWER": true,
}

// promptVars are expanded (command substitutions included) when the shell
// prints them: PS4 for set -x (and xtrace from SHELLOPTS), the others in
// interactive shells (bash -i).
var promptVars = map[string]bool{"PS0": true, "PS1": true, "PS2": true, "PS4": true}

// pendingWrite is a file a redirection writes, recorded once the command's
// output is known.
type pendingWrite struct {
	paths  []string
	fd     string
	append bool
}

// writeRec is a file the command writes.
type writeRec struct {
	paths   []string
	content *Arg     // the bytes written, when known statically
	from    []string // files copied there (cp, mv, install, ln)
	chmod   bool     // only made executable
	node    int
	what    string
}

// simple walks a simple command.
func (a *analyzer) simple(call *syntax.CallExpr, redirs []*syntax.Redirect, sc *scope) {
	var pos syntax.Pos
	if len(call.Assigns) > 0 || len(call.Args) > 0 {
		pos = call.Pos()
	}
	n := a.newNode(sc, KindCommand, pos)
	csc := sc
	own := func() {
		if csc == sc {
			csc = sc.child("", nil)
		}
	}
	for _, as := range call.Assigns {
		name, val := a.assign(n, as, sc)
		n.Assigns = append(n.Assigns, name+"="+val.Value)
		if len(call.Args) == 0 {
			if name == "PATH" {
				a.setPath(n, val, sc, sc.st)
			}
			continue
		}
		ev := envVal{val: val.Value, known: !val.Dynamic}
		own()
		csc.env = csc.env.with(name, &ev)
		if name == "PATH" {
			st := &state{path: slices.Clone(sc.st.path), pathKnown: sc.st.pathKnown}
			a.setPath(n, val, sc, st)
			csc.pathOverride = st.path
			if !st.pathKnown {
				csc.pathOverride = []pathEntry{{dynamic: true, added: true}}
			}
		}
	}
	var argv []Arg
	for _, w := range call.Args {
		argv = append(argv, a.fields(w, sc, n.ID, nil)...)
	}
	var pending []pendingWrite
	if in := a.redirs(n, redirs, sc, &pending); in.kind != "" {
		own()
		csc.stdin = in
	}
	if len(call.Args) == 0 {
		n.Kind = KindAssign
		empty := Arg{}
		a.finishWrites(n, pending, &empty)
		a.flushGitEnv(n, sc)
		return
	}
	n.Argv = argv
	if len(argv) == 0 {
		a.note(n.ID, "the words expand to nothing: no command runs")
		return
	}
	a.command(n, csc)
	n.out = a.output(n, csc)
	a.finishWrites(n, pending, n.out)
}

// assign evaluates one assignment under node n and handles the variables
// whose values are code.
func (a *analyzer) assign(n *Node, as *syntax.Assign, sc *scope) (string, Arg) {
	name := ""
	if as.Name != nil {
		name = as.Name.Value
	}
	if as.Index != nil {
		a.arith(as.Index, sc, n.ID, nil)
	}
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			if e.Index != nil {
				a.arith(e.Index, sc, n.ID, nil)
			}
			if e.Value != nil {
				v := a.str(e.Value, sc, n.ID, nil)
				// PROMPT_COMMAND=(cmd1 cmd2): each element is code.
				if cmdVars[name] || promptVars[name] {
					a.specialVar(n, name, v, sc)
				}
			}
		}
		return name, Arg{Value: "(" + short(a.text(sc.u, as.Array)) + ")", Dynamic: true}
	}
	val := a.str(as.Value, sc, n.ID, nil)
	if as.Append {
		val = Arg{Value: "+=" + val.Value, Dynamic: true}
	}
	a.specialVar(n, name, val, sc)
	return name, val
}

// specialVar handles assignments to variables whose values are code or
// name code.
func (a *analyzer) specialVar(n *Node, name string, val Arg, sc *scope) {
	switch {
	case name == "BASH_ENV" || name == "ENV":
		if val.Dynamic {
			a.flag(n.ID, FlagDynamic, "%s names a startup file only known at run time; shells started with it source that file", name)
			return
		}
		if val.Value != "" {
			lang := "bash"
			if name == "ENV" {
				lang = "sh"
			}
			a.runScript(n, val, lang, "source", params{}, sc)
		}
	case cmdVars[name]:
		if val.Dynamic {
			a.flag(n.ID, FlagDynamic, "$%s is a command other programs run, and is only known at run time", name)
			return
		}
		if strings.TrimSpace(val.Value) != "" {
			a.unit(n.ID, val.Value, "$"+name, syntax.LangPOSIX, a.payloadScope(sc, n), "$"+name)
		}
	case promptVars[name]:
		if val.Dynamic {
			a.flag(n.ID, FlagDynamic, "$%s is expanded (command substitutions included) when the shell prints it", name)
			return
		}
		w, err := syntax.NewParser().Document(strings.NewReader(val.Value))
		if err != nil {
			a.parseError("$"+name, err)
			return
		}
		u := &unit{src: val.Value, source: "$" + name, lang: a.lang, depth: sc.u.depth + 1}
		c := sc.child("", nil)
		c.u = u
		a.str(w, c, n.ID, nil)
	case name == "LD_PRELOAD" || name == "LD_AUDIT" || name == "DYLD_INSERT_LIBRARIES":
		a.flag(n.ID, FlagNonShellCode, "%s loads native code into the programs it runs", name)
	case name == "SHELLOPTS" || name == "BASHOPTS":
		// A child bash turns these options on: xtrace expands $PS4,
		// extdebug changes what a DEBUG trap does.
		if val.Dynamic {
			a.flag(n.ID, FlagDynamic, "$%s sets the options of the shells the command starts, and is only known at run time", name)
		}
	case strings.HasPrefix(name, "BASH_FUNC_") && (strings.HasSuffix(name, "%%") || strings.HasSuffix(name, "()")):
		// An exported function: bash defines it in every bash it starts.
		fn := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "BASH_FUNC_"), "%%"), "()")
		if val.Dynamic {
			a.flag(n.ID, FlagDynamic, "%s exports a function %s whose body is only known at run time", name, fn)
			return
		}
		if !strings.HasPrefix(val.Value, "() {") || !isName(strings.ReplaceAll(fn, "-", "_")) {
			a.note(n.ID, name+" does not hold a function bash imports")
			return
		}
		a.unit(n.ID, fn+" "+val.Value, "$"+name, syntax.LangBash, a.payloadScope(sc, n), "exported function")
	case name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_CONFIG":
		a.gitConfigFile(n, name, val, sc)
	case name == "GIT_CONFIG_PARAMETERS" || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		a.gitEnvSetting(n, name, val, sc)
	}
}

// payloadScope is the scope of code that node n runs as a new process.
func (a *analyzer) payloadScope(sc *scope, n *Node) *scope {
	c := sc.child("", sc.st.clone())
	c.parent = n.ID
	c.top = false
	c.args = params{known: true, zero: "sh"}
	return c
}

// redirs evaluates the redirections of node n and returns the stdin they
// set (kind "" when they set none). Files written are added to pending.
func (a *analyzer) redirs(n *Node, rs []*syntax.Redirect, sc *scope, pending *[]pendingWrite) stdinSrc {
	var in stdinSrc
	for _, r := range rs {
		fd := ""
		if r.N != nil {
			fd = r.N.Value
			if strings.HasPrefix(fd, "{") {
				a.flag(n.ID, FlagDynamicArgs, "redirection to a file descriptor named at run time")
			}
		}
		isStdin := fd == "" || fd == "0"
		rd := Redir{Op: r.Op.String(), Fd: fd}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			var subs []int
			t := a.heredoc(r, sc, n.ID, &subs)
			rd.Target = "here-document"
			if t.Dynamic {
				rd.Dynamic = true
			}
			if isStdin {
				in = stdinSrc{kind: "text", text: t, subs: subs}
			}
		case syntax.WordHdoc:
			var subs []int
			t := a.str(r.Word, sc, n.ID, &subs)
			rd.Target = t.Value
			rd.Dynamic = t.Dynamic
			if !t.Dynamic {
				t.Value += "\n"
			}
			if isStdin {
				in = stdinSrc{kind: "text", text: t, subs: subs}
			}
		case syntax.RdrIn:
			t := a.str(r.Word, sc, n.ID, nil)
			rd.Target, rd.Dynamic = a.displayPath(t, sc), t.Dynamic
			if t.Dynamic {
				a.flag(n.ID, FlagDynamicArgs, "")
			}
			if isStdin {
				if !t.Dynamic && t.Value == "/dev/null" {
					in = stdinSrc{kind: "none"}
				} else {
					in = stdinSrc{kind: "file", file: t}
				}
			}
		case syntax.DplIn:
			t := a.str(r.Word, sc, n.ID, nil)
			rd.Target = t.Value
			if isStdin {
				if t.Value == "-" {
					in = stdinSrc{kind: "none"}
				} else if t.Value != "0" {
					in = stdinSrc{kind: "unknown"}
				}
			}
		case syntax.DplOut:
			t := a.str(r.Word, sc, n.ID, nil)
			rd.Target = t.Value
			if t.Dynamic || t.Value == "-" || isDigits(t.Value) {
				break
			}
			// >&file writes file (bash).
			a.addPending(n, t, sc, pending, "", false, &rd)
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
			t := a.str(r.Word, sc, n.ID, nil)
			a.addPending(n, t, sc, pending, fd, r.Op == syntax.AppOut || r.Op == syntax.AppAll, &rd)
		default:
			t := a.str(r.Word, sc, n.ID, nil)
			rd.Target, rd.Dynamic = t.Value, t.Dynamic
		}
		n.Redirs = append(n.Redirs, rd)
	}
	return in
}

// addPending records a redirection that writes t.
func (a *analyzer) addPending(n *Node, t Arg, sc *scope, pending *[]pendingWrite, fd string, app bool, rd *Redir) {
	rd.Target, rd.Dynamic = a.displayPath(t, sc), t.Dynamic
	if t.Dynamic {
		a.flag(n.ID, FlagDynamicArgs, "writes to a file only known at run time: %s", short(t.Value))
		return
	}
	if pending != nil {
		*pending = append(*pending, pendingWrite{paths: a.absPaths(t.Value, sc), fd: fd, append: app})
	}
}

// finishWrites records the files n's redirections write; out is what n
// writes to stdout, when known.
func (a *analyzer) finishWrites(n *Node, pending []pendingWrite, out *Arg) {
	for _, p := range pending {
		w := writeRec{paths: p.paths, node: n.ID, what: "redirection"}
		if (p.fd == "" || p.fd == "1") && !p.append && out != nil {
			w.content = out
		}
		a.writes = append(a.writes, w)
	}
}

// output returns what n writes to stdout when analysis knows it: echo and
// printf of literal text, cat of a literal here-document.
func (a *analyzer) output(n *Node, sc *scope) *Arg {
	args := n.Argv[1:]
	for _, x := range args {
		if x.Dynamic {
			return nil
		}
	}
	switch n.Name {
	case "echo":
		if len(args) > 0 && strings.HasPrefix(args[0].Value, "-") {
			return nil
		}
		return &Arg{Value: strings.Join(values(args), " ") + "\n"}
	case "printf":
		if len(args) > 0 && args[0].Value == "--" {
			args = args[1:]
		}
		if len(args) > 0 && !strings.HasPrefix(args[0].Value, "-") {
			if s, ok := printfOutput(args[0].Value, values(args[1:])); ok {
				return &Arg{Value: s}
			}
		}
	case "cat":
		if len(args) == 0 && sc.stdin.kind == "text" && !sc.stdin.text.Dynamic {
			t := sc.stdin.text
			return &t
		}
	}
	return nil
}

// printfEscapes are the escapes of a printf format that mean one byte.
var printfEscapes = map[byte]byte{'n': '\n', 't': '\t', '\\': '\\', '"': '"', '\'': '\'', 'a': '\a', 'b': '\b', 'f': '\f', 'r': '\r', 'v': '\v'}

// printfOutput formats like the printf builtin, for the directives %s
// and %% and the plain escapes; anything else is not known.
func printfOutput(format string, args []string) (string, bool) {
	var b strings.Builder
	for first := true; first || len(args) > 0; first = false {
		used := false
		for i := 0; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '\\' && i+1 < len(format):
				i++
				e, ok := printfEscapes[format[i]]
				if !ok {
					return "", false
				}
				b.WriteByte(e)
			case c == '%' && i+1 < len(format) && format[i+1] == '%':
				i++
				b.WriteByte('%')
			case c == '%' && i+1 < len(format) && format[i+1] == 's':
				i++
				used = true
				if len(args) > 0 {
					b.WriteString(args[0])
					args = args[1:]
				}
			case c == '%' || c == '\\':
				return "", false
			default:
				b.WriteByte(c)
			}
		}
		if !used {
			break
		}
	}
	return b.String(), true
}

func values(args []Arg) []string {
	out := make([]string, len(args))
	for i, x := range args {
		out[i] = x.Value
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// absPaths resolves p against the candidate working directories.
func (a *analyzer) absPaths(p string, sc *scope) []string {
	if path.IsAbs(p) {
		return []string{path.Clean(p)}
	}
	if !sc.st.known {
		return nil
	}
	out := make([]string, 0, len(sc.st.cwds))
	for _, d := range sc.st.cwds {
		out = append(out, cleanJoin(d, p))
	}
	return out
}

// displayPath is t resolved when that is unambiguous, else as written.
func (a *analyzer) displayPath(t Arg, sc *scope) string {
	if t.Dynamic {
		return t.Value
	}
	if ps := a.absPaths(t.Value, sc); len(ps) == 1 {
		return ps[0]
	}
	return t.Value
}

// command resolves node n's name and applies what analysis knows about
// the command.
func (a *analyzer) command(n *Node, sc *scope) {
	if len(n.Argv) == 0 || a.stopped {
		return
	}
	if sc.st.known {
		n.cwds = sc.st.cwds[:len(sc.st.cwds):len(sc.st.cwds)]
	}
	a.resolve(n, sc)
	for _, x := range n.Argv[1:] {
		if x.Dynamic {
			a.flag(n.ID, FlagDynamicArgs, "")
			break
		}
	}
	if n.Name == "" {
		return
	}
	if h, ok := handlers[n.Name]; ok {
		h(a, n, sc)
	} else if lang, ok := LangOf(n.Name); ok {
		a.shell(n, lang, sc)
	} else if unparsedShells[n.Name] {
		a.foreignShell(n, sc)
	} else if interp := interpreterOf(n.Name); interp != "" {
		a.interpreter(n, interp, sc)
	}
	a.writer(n, sc)
	if !n.Builtin && !n.Function && (strings.Contains(n.Argv[0].Value, "/") || a.underRoots(n.Path)) {
		a.execPath(n, sc)
	}
	a.flushGitEnv(n, sc)
}

// resolve sets n's Name, Path, Builtin and Function.
func (a *analyzer) resolve(n *Node, sc *scope) {
	first := n.Argv[0]
	if first.Dynamic {
		a.flag(n.ID, FlagDynamic, "the command name %s is only known at run time", short(first.Value))
		n.codeFrom = append(n.codeFrom, first.subs...)
		return
	}
	v := first.Value
	if first.Glob {
		a.flag(n.ID, FlagDynamic, "the command name %s is a pattern the shell expands against file names", short(v))
	}
	if v == "" {
		return
	}
	if strings.Contains(v, "/") {
		n.Name = path.Base(v)
		if path.IsAbs(v) {
			n.Path = path.Clean(v)
		} else if cwd, ok := sc.st.single(); ok {
			n.Path = cleanJoin(cwd, v)
		}
		return
	}
	n.Name = v
	if val, ok := a.aliases[v]; ok {
		a.flag(n.ID, FlagDynamic, "alias %s, defined in this command, replaces the command %s", v, v)
		text := val
		for _, x := range n.Argv[1:] {
			text += " " + shellQuote(x)
		}
		a.unit(n.ID, text, "alias "+v, sc.u.lang, sc.child("", nil), "alias")
	}
	if a.funcs[v] {
		n.Function = true
		if builtins[v] || a.lookup(v, sc, nil) != "" {
			a.flag(n.ID, FlagDynamic, "function %s, defined in this command, shadows the command %s", v, v)
		}
		return
	}
	if builtins[v] {
		n.Builtin = true
		return
	}
	n.Path = a.lookup(v, sc, n)
}

// shellQuote renders an argument for re-parsing.
func shellQuote(x Arg) string {
	if x.Dynamic {
		return x.Value
	}
	return "'" + strings.ReplaceAll(x.Value, "'", `'\''`) + "'"
}

// lookup finds name through PATH as the command will see it. With n set,
// a PATH the text made unsafe flags n.
func (a *analyzer) lookup(name string, sc *scope, n *Node) string {
	entries := sc.st.path
	if sc.pathOverride != nil {
		entries = sc.pathOverride
	} else if !sc.st.pathKnown {
		if n != nil {
			a.flag(n.ID, FlagDynamic, "PATH was changed to a value only known at run time, so %s could be any program", name)
		}
		return ""
	}
	for _, e := range entries {
		switch {
		case e.dynamic:
			if n != nil {
				a.flag(n.ID, FlagDynamic, "PATH holds a directory only known at run time ahead of where %s is found", name)
			}
			return ""
		case e.added && (e.dir == "" || !path.IsAbs(e.dir) || a.writable(e.dir)):
			if n != nil {
				a.flag(n.ID, FlagDynamic, "PATH puts %s, which the command can write, ahead of where %s is found", orDot(e.dir), name)
			}
			return ""
		}
		if e.dir == "" || !path.IsAbs(e.dir) {
			continue
		}
		if a.exists(e.dir, name) {
			return path.Join(e.dir, name)
		}
	}
	return ""
}

func orDot(s string) string {
	if s == "" {
		return "."
	}
	return s
}

// exists reports whether dir holds an executable name (cached).
func (a *analyzer) exists(dir, name string) bool {
	key := [2]string{dir, name}
	if v, ok := a.look[key]; ok {
		return v
	}
	var found bool
	if a.opts.LookPath != nil {
		found = a.opts.LookPath(dir, name)
	} else {
		found = osLookPath(dir, name)
	}
	a.look[key] = found
	return found
}

// writable reports whether the command can write dir: inside a workspace
// root or the sandbox's private /tmp.
func (a *analyzer) writable(dir string) bool {
	if within(dir, "/tmp") || within(dir, "/var/tmp") || within(dir, "/dev/shm") {
		return true
	}
	for _, w := range a.opts.Writable {
		if within(dir, w) {
			return true
		}
	}
	return false
}

// within reports whether the clean absolute path p is root or below it.
func within(p, root string) bool {
	if root == "" {
		return false
	}
	return p == root || root == "/" || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// underRoots reports whether p lies in a script inspection root.
func (a *analyzer) underRoots(p string) bool {
	if p == "" {
		return false
	}
	for _, r := range a.opts.ScriptRoots {
		if within(p, r) {
			return true
		}
	}
	return false
}

// setPath applies PATH=val to st.
func (a *analyzer) setPath(n *Node, val Arg, sc *scope, st *state) {
	entries, ok := a.newPath(val, sc)
	st.path, st.pathKnown = entries, ok
	if !ok {
		a.note(n.ID, "PATH is set to a value only known at run time")
	}
}

// newPath evaluates a new PATH value: the old entries where it says $PATH,
// the text's own entries marked added.
func (a *analyzer) newPath(val Arg, sc *scope) ([]pathEntry, bool) {
	if !val.Dynamic {
		var out []pathEntry
		for _, d := range strings.Split(val.Value, ":") {
			out = append(out, pathEntry{dir: d, added: true})
		}
		return out, true
	}
	// The common shapes: X:$PATH and $PATH:X, with X maybe dynamic.
	src := val.Value
	var out []pathEntry
	for _, part := range strings.Split(src, ":") {
		switch part {
		case "$PATH", "${PATH}", `"$PATH"`, `"${PATH}"`:
			out = append(out, sc.st.path...)
		default:
			if strings.ContainsAny(part, "$`") || strings.HasPrefix(part, "~") {
				if v, ok := a.tilde("", sc); ok && (part == "~" || strings.HasPrefix(part, "~/")) {
					out = append(out, pathEntry{dir: v + part[1:], added: true})
					continue
				}
				out = append(out, pathEntry{dynamic: true, added: true})
			} else {
				out = append(out, pathEntry{dir: strings.Trim(part, `"'`), added: true})
			}
		}
	}
	return out, sc.st.pathKnown
}

// payload makes a child node of n for the command a wrapper runs.
func (a *analyzer) payload(n *Node, via string, argv []Arg, sc *scope) *Node {
	if len(argv) == 0 || a.stopped {
		return nil
	}
	c := &Node{
		ID: len(a.tree.Nodes), Parent: n.ID, Via: via, Kind: KindCommand,
		Source: n.Source, Line: n.Line, Col: n.Col, Context: slices.Clone(n.Context),
		pipeline: n.pipeline, stdinFrom: slices.Clone(n.stdinFrom), script: n.script,
	}
	a.tree.Nodes = append(a.tree.Nodes, c)
	c.Argv = argv
	psc := sc.child("", nil)
	psc.parent = n.ID
	psc.top = false
	a.command(c, psc)
	return c
}

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

// A handler applies what analysis knows about one command.
type handler func(a *analyzer, n *Node, sc *scope)

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"cd": (*analyzer).cd, "pushd": (*analyzer).cd, "popd": (*analyzer).cd,
		"alias":   (*analyzer).alias,
		"eval":    (*analyzer).eval,
		"trap":    (*analyzer).trap,
		"source":  (*analyzer).source,
		".":       (*analyzer).source,
		"exit":    (*analyzer).exit,
		"return":  (*analyzer).exit,
		"exec":    (*analyzer).execBuiltin,
		"command": (*analyzer).commandBuiltin,
		"builtin": func(a *analyzer, n *Node, sc *scope) { a.payload(n, "builtin", n.Argv[1:], sc) },
		"hash":    (*analyzer).hash,
		"enable":  (*analyzer).enable,
		"find":    (*analyzer).find,
		"xargs":   (*analyzer).xargs,
		"git":     (*analyzer).git,
		"env":     (*analyzer).env,
		"watch":   (*analyzer).watch,
		"su":      (*analyzer).su,
		"flock":   (*analyzer).flock,
		"busybox": func(a *analyzer, n *Node, sc *scope) { a.payload(n, "busybox", n.Argv[1:], sc) },
		"set":     (*analyzer).set,
	}
	handlers["make"], handlers["gmake"] = (*analyzer).makeCmd, (*analyzer).makeCmd
	for _, name := range []string{"npm", "yarn", "pnpm"} {
		handlers[name] = (*analyzer).npm
	}
	for name := range runnerFiles {
		handlers[name] = (*analyzer).otherRunner
	}
	for name, spec := range wrapSpecs {
		handlers[name] = func(a *analyzer, n *Node, sc *scope) { a.wrapper(n, name, spec, sc) }
	}
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

// find: -exec/-execdir/-ok/-okdir run a command per file; {} is the file.
func (a *analyzer) find(n *Node, sc *scope) {
	args := n.Argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			continue
		}
		switch v {
		case "-delete":
			n.findDelete = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].Value == ";" || args[j].Value == "+") {
				j++
			}
			argv := slices.Clone(args[i+1 : j])
			for k, x := range argv {
				if strings.Contains(x.Value, "{}") {
					argv[k] = Arg{Value: x.Value, Dynamic: true, ifEmpty: strings.ReplaceAll(x.Value, "{}", ""), hasIfEmpty: true}
				}
			}
			if j >= len(args) {
				a.note(n.ID, "find "+v+" without a terminating ; or +")
			}
			psc := sc.child("", nil)
			psc.stdin = stdinSrc{kind: "none"}
			if c := a.payload(n, "find "+v, argv, psc); c != nil {
				switch c.Name {
				case "rm", "unlink", "shred", "rmdir":
					n.findDelete = true
				}
			}
			i = j
		}
	}
}

// xargs runs a command with arguments read from stdin.
func (a *analyzer) xargs(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{
		short: "0rtpxo", shortVal: "ILPnsdEa", shortOpt: "iel",
		long:    []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"},
		longVal: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		longOpt: []string{"replace", "eof", "max-lines"},
	})
	if !res.known {
		a.flag(n.ID, FlagDynamic, "xargs with an option analysis does not know: %s", res.unknown)
	}
	if len(rest) == 0 {
		rest = []Arg{{Value: "echo"}}
	}
	argv := slices.Clone(rest)
	repl := ""
	if v, ok := res.vals["I"]; ok {
		repl = v
	} else if v, ok := res.vals["i"]; ok {
		repl = orDefault(v, "{}")
	} else if v, ok := res.vals["replace"]; ok {
		repl = orDefault(v, "{}")
	}
	input := []Arg{{Value: "<input>", Dynamic: true, ifEmpty: "", hasIfEmpty: true}}
	// xargs CMD <<< WORDS, echo WORDS | xargs CMD: the input is known.
	if in := sc.stdin; in.kind == "text" && !in.text.Dynamic && !res.has("0") && !res.has("d") && !res.has("null") && !res.has("delimiter") && !strings.ContainsAny(in.text.Value, `'"\\`) {
		input = nil
		for _, w := range strings.Fields(in.text.Value) {
			input = append(input, Arg{Value: w})
		}
	} else if in.kind == "pipe" && len(in.from) == 1 && !res.has("0") && !res.has("d") && !res.has("null") && !res.has("delimiter") {
		if f := a.node(in.from[0]); f != nil && f.Kind == KindCommand {
			if out := f.out; out != nil && !strings.ContainsAny(out.Value, `'"\`) {
				input = nil
				for _, w := range strings.Fields(out.Value) {
					input = append(input, Arg{Value: w})
				}
			}
		}
	}
	if repl != "" {
		for k, x := range argv {
			if k > 0 && strings.Contains(x.Value, repl) {
				argv[k] = Arg{Value: x.Value, Dynamic: true, ifEmpty: strings.ReplaceAll(x.Value, repl, ""), hasIfEmpty: true}
			}
		}
	} else {
		argv = append(argv, input...)
	}
	psc := sc.child("", nil)
	if !res.has("o") && !res.has("open-tty") {
		psc.stdin = stdinSrc{kind: "none"}
	}
	a.payload(n, "xargs", argv, psc)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [command [args]]
func (a *analyzer) env(n *Node, sc *scope) {
	args := slices.Clone(n.Argv[1:])
	envm := sc.env
	psc := sc.child("", nil)
	for len(args) > 0 {
		x := args[0]
		if x.Dynamic {
			a.flag(n.ID, FlagDynamic, "env with an argument only known at run time before the command: %s", short(x.Value))
			break
		}
		v := x.Value
		switch {
		case v == "--":
			args = args[1:]
			goto payload
		case v == "-" || v == "-i" || v == "--ignore-environment":
			envm = newEnv(nil)
			args = args[1:]
		case v == "-0" || v == "--null" || v == "-v" || v == "--debug":
			args = args[1:]
		case v == "-u" || v == "--unset" || v == "-C" || v == "--chdir" || v == "-P" || v == "-a" || v == "--argv0":
			if len(args) < 2 {
				return
			}
			if v == "-u" || v == "--unset" {
				envm = envm.with(args[1].Value, nil)
			}
			if v == "-C" || v == "--chdir" {
				psc.st = &state{cwds: a.absPaths(args[1].Value, sc), known: !args[1].Dynamic && sc.st.known, path: sc.st.path, pathKnown: sc.st.pathKnown}
			}
			if v == "-P" {
				psc.pathOverride = []pathEntry{{dynamic: args[1].Dynamic, dir: args[1].Value, added: true}}
			}
			args = args[2:]
		case strings.HasPrefix(v, "--unset=") || strings.HasPrefix(v, "-u"):
			name := strings.TrimPrefix(strings.TrimPrefix(v, "--unset="), "-u")
			envm = envm.with(name, nil)
			args = args[1:]
		case v == "-S" || v == "--split-string" || strings.HasPrefix(v, "-S") || strings.HasPrefix(v, "--split-string="):
			var s Arg
			switch {
			case v == "-S" || v == "--split-string":
				if len(args) < 2 {
					return
				}
				s, args = args[1], args[2:]
			case strings.HasPrefix(v, "--split-string="):
				s, args = Arg{Value: strings.TrimPrefix(v, "--split-string=")}, args[1:]
			default:
				s, args = Arg{Value: v[2:]}, args[1:]
			}
			if s.Dynamic {
				a.flag(n.ID, FlagDynamic, "env -S splits a string only known at run time into the command")
				return
			}
			words, ok := a.splitWords(s.Value, sc)
			if !ok {
				a.flag(n.ID, FlagDynamic, "env -S string analysis cannot split: %s", short(s.Value))
				return
			}
			args = append(words, args...)
		case strings.HasPrefix(v, "--default-signal") || strings.HasPrefix(v, "--ignore-signal") || strings.HasPrefix(v, "--block-signal") || v == "--list-signal-handling":
			args = args[1:]
		case strings.HasPrefix(v, "-") && len(v) > 1:
			a.flag(n.ID, FlagDynamic, "env with an option analysis does not know: %s", v)
			args = args[1:]
		case strings.IndexByte(v, '=') > 0:
			// env takes any NAME=VALUE, BASH_FUNC_f%%=() {...} included.
			name, val, _ := strings.Cut(v, "=")
			envm = envm.with(name, &envVal{val: val, known: true})
			a.specialVar(n, name, Arg{Value: val}, sc)
			if name == "PATH" {
				st := &state{path: slices.Clone(sc.st.path), pathKnown: sc.st.pathKnown}
				a.setPath(n, Arg{Value: val}, sc, st)
				psc.pathOverride = st.path
			}
			args = args[1:]
		default:
			goto payload
		}
	}
payload:
	psc.env = envm
	a.payload(n, "env", args, psc)
}

// splitWords splits s into words as a shell would (env -S, git aliases).
func (a *analyzer) splitWords(s string, sc *scope) ([]Arg, bool) {
	f, err := a.parse(s, syntax.LangPOSIX)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(f.Stmts[0].Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, false
	}
	u := &unit{src: s, source: "env -S", lang: syntax.LangPOSIX, depth: sc.u.depth + 1}
	c := sc.child("", nil)
	c.u = u
	var out []Arg
	for _, w := range call.Args {
		for _, x := range a.fields(w, c, -1, nil) {
			if x.Dynamic {
				return nil, false
			}
			out = append(out, x)
		}
	}
	return out, true
}

// watch runs its arguments through sh -c (or directly with -x).
func (a *analyzer) watch(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{
		short: "bcCdegtxprw", shortVal: "nq",
		long:    []string{"beep", "color", "no-color", "chgexit", "errexit", "no-title", "exec", "precise", "no-wrap", "differences"},
		longVal: []string{"interval", "equexit"},
		longOpt: []string{"differences"},
	})
	if !res.known {
		a.flag(n.ID, FlagDynamic, "watch with an option analysis does not know: %s", res.unknown)
	}
	if len(rest) == 0 {
		return
	}
	if res.has("x") || res.has("exec") {
		a.payload(n, "watch", rest, sc)
		return
	}
	s := Arg{Value: strings.Join(values(rest), " ")}
	for _, x := range rest {
		if x.Dynamic {
			s = Arg{Value: a.joinSrc(rest), Dynamic: true, subs: collectSubs(rest)}
		}
	}
	a.code(n, s, "watch", syntax.LangPOSIX, a.payloadScope(sc, n))
}

// su [-] [user] -c CMD runs CMD with the user's shell.
func (a *analyzer) su(n *Node, sc *scope) {
	args := n.Argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-c" || v == "--command" || v == "--session-command":
			if i+1 < len(args) {
				a.code(n, args[i+1], "su -c", syntax.LangPOSIX, a.payloadScope(sc, n))
			}
			return
		case strings.HasPrefix(v, "--command="):
			a.code(n, Arg{Value: strings.TrimPrefix(v, "--command=")}, "su -c", syntax.LangPOSIX, a.payloadScope(sc, n))
			return
		case v == "-s" || v == "--shell" || v == "-g" || v == "--group" || v == "-G" || v == "-w":
			i++
		}
	}
}

// flock [opts] file command [args] | flock [opts] file -c command
func (a *analyzer) flock(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{
		short: "sexnuoFv", shortVal: "wE",
		long:    []string{"shared", "exclusive", "nonblock", "unlock", "close", "no-fork", "verbose"},
		longVal: []string{"timeout", "conflict-exit-code"},
	})
	if !res.known {
		a.flag(n.ID, FlagDynamic, "flock with an option analysis does not know: %s", res.unknown)
	}
	if len(rest) < 2 {
		return
	}
	rest = rest[1:]
	if rest[0].Value == "-c" || rest[0].Value == "--command" {
		if len(rest) > 1 {
			a.code(n, rest[1], "flock -c", syntax.LangPOSIX, a.payloadScope(sc, n))
		}
		return
	}
	a.payload(n, "flock", rest, sc)
}

// wrapper handles a wrapper described by spec.
func (a *analyzer) wrapper(n *Node, name string, spec optSpec, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], spec)
	if !res.known {
		a.flag(n.ID, FlagDynamic, "%s with an option analysis does not know: %s", name, res.unknown)
	}
	for _, f := range spec.noPayload {
		if res.has(f) {
			return
		}
	}
	psc := sc.child("", nil)
	// Assignments before the command (sudo VAR=x cmd).
	if spec.assigns {
		for len(rest) > 0 && !rest[0].Dynamic && strings.IndexByte(rest[0].Value, '=') > 0 && !strings.HasPrefix(rest[0].Value, "-") {
			k, v, _ := strings.Cut(rest[0].Value, "=")
			psc.env = psc.env.with(k, &envVal{val: v, known: true})
			a.specialVar(n, k, Arg{Value: v}, sc)
			rest = rest[1:]
		}
	}
	skip := spec.skip
	if name == "nice" && len(n.Argv) > 1 && isNiceNumber(n.Argv[1].Value) {
		skip = 0
	}
	if len(rest) < skip {
		return
	}
	rest = rest[skip:]
	if len(rest) == 0 {
		return
	}
	if spec.shellFlag != "" && res.has(spec.shellFlag) {
		// sudo -s cmd args: the user's shell runs "cmd args".
		a.note(n.ID, name+" -"+spec.shellFlag+" runs the command through a shell")
	}
	a.payload(n, name, rest, psc)
}

func isNiceNumber(s string) bool {
	return len(s) > 1 && s[0] == '-' && isDigits(strings.TrimPrefix(s[1:], "-"))
}

// optSpec describes a command's options.
type optSpec struct {
	short    string   // letters taking no value
	shortVal string   // letters taking a value (attached or next)
	shortOpt string   // letters taking an optional attached value
	long     []string // long options without value
	longVal  []string // long options with a value (=v or next)
	longOpt  []string // long options with an optional =value
	// skip is how many operands come before the payload (timeout's
	// DURATION, chrt's priority, flock's file).
	skip int
	// assigns: NAME=VALUE operands may precede the payload.
	assigns bool
	// noPayload are options after which nothing runs (sudo -l).
	noPayload []string
	// shellFlag runs the payload through a shell (sudo -s).
	shellFlag string
	// numeric: -N options (nice -10).
	numeric bool
}

// optResult is what parseOpts found.
type optResult struct {
	known   bool
	unknown string
	vals    map[string]string
}

func (r optResult) has(o string) bool { _, ok := r.vals[o]; return ok }

// parseOpts skips the options of args (argv[1:]) per spec and returns the
// operands after them.
func parseOpts(args []Arg, spec optSpec) ([]Arg, optResult) {
	res := optResult{known: true, vals: map[string]string{}}
	for i := 0; i < len(args); i++ {
		x := args[i]
		v := x.Value
		if x.Dynamic {
			if strings.HasPrefix(v, "-") || strings.HasPrefix(v, `"-`) || strings.HasPrefix(v, "$") {
				res.known, res.unknown = false, short(v)
			}
			return args[i:], res
		}
		switch {
		case v == "--":
			return args[i+1:], res
		case v == "-" || !strings.HasPrefix(v, "-"):
			return args[i:], res
		case strings.HasPrefix(v, "--"):
			name, val, hasVal := strings.Cut(v[2:], "=")
			switch {
			case slices.Contains(spec.longVal, name):
				if !hasVal {
					if i+1 < len(args) {
						i++
						val = args[i].Value
					}
				}
				res.vals[name] = val
			case slices.Contains(spec.long, name) || slices.Contains(spec.longOpt, name):
				res.vals[name] = val
			default:
				res.known, res.unknown = false, v
				res.vals[name] = val
			}
		default:
			if spec.numeric && isNiceNumber(v) {
				res.vals["n"] = v[1:]
				continue
			}
			letters := v[1:]
			for j := 0; j < len(letters); j++ {
				c := string(letters[j])
				switch {
				case strings.Contains(spec.shortVal, c):
					val := letters[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i].Value
					}
					res.vals[c] = val
					j = len(letters)
				case strings.Contains(spec.shortOpt, c):
					res.vals[c] = letters[j+1:]
					j = len(letters)
				case strings.Contains(spec.short, c):
					res.vals[c] = ""
				default:
					res.known, res.unknown = false, v
					res.vals[c] = ""
				}
			}
		}
	}
	return nil, res
}

// wrapSpecs are the wrappers whose payload follows their options.
var wrapSpecs = map[string]optSpec{
	"sudo": {
		short: "AbEeHhiKklnPSsVv", shortVal: "CDgprtTUuR",
		long: []string{"askpass", "background", "edit", "help", "login", "non-interactive", "preserve-groups",
			"remove-timestamp", "reset-timestamp", "shell", "stdin", "version", "validate", "list", "bell"},
		longVal:   []string{"close-from", "chdir", "group", "host", "prompt", "role", "type", "command-timeout", "other-user", "user", "chroot"},
		longOpt:   []string{"preserve-env"},
		assigns:   true,
		noPayload: []string{"l", "list", "v", "validate", "k", "K", "e", "edit", "V", "version", "help"},
		shellFlag: "s",
	},
	"doas":     {short: "nsL", shortVal: "uC", noPayload: []string{"L"}},
	"pkexec":   {longVal: []string{"user"}, long: []string{"disable-internal-agent", "keep-cwd", "version", "help"}},
	"nice":     {shortVal: "n", longVal: []string{"adjustment"}, numeric: true},
	"nohup":    {},
	"setsid":   {short: "cfw", long: []string{"ctty", "fork", "wait"}},
	"unbuffer": {short: "p"},
	"timeout": {short: "v", shortVal: "sk", long: []string{"preserve-status", "foreground", "verbose"},
		longVal: []string{"signal", "kill-after"}, skip: 1},
	"time": {short: "apvq", shortVal: "of", long: []string{"append", "portability", "verbose", "quiet"},
		longVal: []string{"output", "format"}},
	"stdbuf": {shortVal: "ioe", longVal: []string{"input", "output", "error"}},
	"ionice": {short: "th", shortVal: "cnpPu", longVal: []string{"class", "classdata", "pid", "pgid", "uid"},
		long: []string{"ignore"}, noPayload: []string{"p", "P", "u", "pid", "pgid", "uid"}},
	"chrt": {short: "abdefiormRv", shortVal: "TPD", long: []string{"all-tasks", "batch", "deadline", "fifo", "idle",
		"other", "rr", "reset-on-fork", "verbose", "max"}, longVal: []string{"sched-runtime", "sched-period", "sched-deadline"},
		skip: 1, noPayload: []string{"p", "pid", "m", "max"}},
	"taskset":    {short: "acp", long: []string{"all-tasks", "cpu-list"}, skip: 1, noPayload: []string{"p", "pid"}},
	"chroot":     {longVal: []string{"userspec", "groups"}, long: []string{"skip-chdir"}, skip: 1},
	"caffeinate": {short: "dimsu", shortVal: "tw"},
	"runuser":    {short: "lmpf", shortVal: "ugGsw", longVal: []string{"user", "group", "supp-group", "shell", "whitelist-environment"}, long: []string{"login", "preserve-environment"}},
	"strace":     {short: "cCdDfFhiqrtTvVxyz", shortVal: "abeEIoOpPsSuX"},
	"ltrace":     {short: "bcCfhiLrStT", shortVal: "aADeEFlnopsuwx"},
	"firejail":   {},
	"proot":      {},
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

// git: -c settings that are commands, and aliases defined with -c.
func (a *analyzer) git(n *Node, sc *scope) {
	args := n.Argv[1:]
	configs := map[string]Arg{}
	var gitDirs []Arg
	i := 0
	for ; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			if strings.HasPrefix(v, "-") || strings.HasPrefix(v, "$") {
				a.flag(n.ID, FlagDynamic, "git with an option only known at run time: %s", short(v))
				return
			}
			break
		}
		switch {
		case v == "-c":
			i++
			if i < len(args) {
				if args[i].Dynamic {
					a.flag(n.ID, FlagDynamic, "git -c with a setting only known at run time: %s", short(args[i].Value))
					continue
				}
				k, val, _ := strings.Cut(args[i].Value, "=")
				configs[strings.ToLower(k)] = Arg{Value: val}
			}
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--exec-path" || v == "--super-prefix" || v == "--config-env" || v == "--list-cmds" || v == "--attr-source":
			if v == "-C" && i+1 < len(args) {
				gitDirs = append(gitDirs, args[i+1])
			}
			if v == "--config-env" && i+1 < len(args) {
				a.flag(n.ID, FlagDynamic, "git --config-env takes a setting from an environment variable")
			}
			i++
		case strings.HasPrefix(v, "--config-env="):
			a.flag(n.ID, FlagDynamic, "git --config-env takes a setting from an environment variable")
		case strings.HasPrefix(v, "--exec-path="):
			a.flag(n.ID, FlagDynamic, "git --exec-path runs git subcommands from another directory")
		case strings.HasPrefix(v, "-"):
		default:
			goto sub
		}
	}
sub:
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := configs[k]
		if !strings.HasPrefix(k, "alias.") {
			a.gitSetting(n, k, v, "git -c "+k, sc)
		}
	}
	if i >= len(args) {
		return
	}
	sub := args[i].Value
	if sub == "push" {
		n.gitPush = a.parsePush(args[i+1:], gitDirs, sc)
	}
	v, ok := configs["alias."+strings.ToLower(sub)]
	if !ok {
		v, ok = a.gitEnvAlias(strings.ToLower(sub), sc)
		if ok && v.Dynamic {
			a.flag(n.ID, FlagDynamic, "git alias %s comes from the environment and is only known at run time", sub)
			return
		}
	}
	if ok {
		if strings.HasPrefix(v.Value, "!") {
			c := a.payloadScope(sc, n)
			c.args = params{known: true, zero: "sh", list: args[i+1:]}
			text := strings.TrimPrefix(v.Value, "!")
			// git runs "alias args..." through sh -c with the arguments
			// appended as "$@".
			if len(args[i+1:]) > 0 {
				text += ` "$@"`
			}
			a.code(n, Arg{Value: text}, "git alias "+sub, syntax.LangPOSIX, c)
			return
		}
		words, ok := a.splitWords(v.Value, sc)
		if !ok {
			a.flag(n.ID, FlagDynamic, "git alias %s analysis cannot split: %s", sub, short(v.Value))
			return
		}
		argv := append([]Arg{{Value: "git"}}, words...)
		argv = append(argv, args[i+1:]...)
		a.payload(n, "git alias "+sub, argv, sc)
	}
}

// writer records the files a command writes (cp, mv, tee, curl -o...) for
// write-then-run linking.
func (a *analyzer) writer(n *Node, sc *scope) {
	args := n.Argv[1:]
	rec := func(target Arg, w writeRec) {
		if target.Dynamic {
			return
		}
		w.paths = a.absPaths(target.Value, sc)
		n.writesTo = append(n.writesTo, w.paths...)
		if len(w.paths) == 0 {
			n.writesTo = append(n.writesTo, target.Value)
		}
		w.node = n.ID
		w.what = n.Name
		a.writes = append(a.writes, w)
	}
	switch n.Name {
	case "cp", "mv", "install", "ln":
		rest, res := parseOpts(args, optSpec{short: "abdfiHlLnPprsuvxRTZDsSC", shortVal: "tmogS",
			long:    []string{"archive", "force", "interactive", "link", "dereference", "no-dereference", "recursive", "symbolic", "update", "verbose", "relative", "no-target-directory", "parents", "backup", "preserve", "no-clobber", "strip", "compare"},
			longVal: []string{"target-directory", "mode", "owner", "group", "suffix", "reflink", "sparse"}})
		dir := res.vals["t"]
		if d, ok := res.vals["target-directory"]; ok {
			dir = d
		}
		var srcs []Arg
		if dir != "" {
			srcs = rest
		} else if len(rest) >= 2 {
			srcs, rest = rest[:len(rest)-1], rest[len(rest)-1:]
			dir = rest[0].Value
			if len(srcs) == 1 && !strings.HasSuffix(dir, "/") && !a.isDir(dir, sc) {
				from := a.fromPaths(srcs[0], sc, n.Name == "ln" && res.has("s"))
				rec(rest[0], writeRec{from: from})
				return
			}
		}
		for _, s := range srcs {
			if s.Dynamic {
				continue
			}
			from := a.fromPaths(s, sc, n.Name == "ln" && res.has("s"))
			rec(Arg{Value: path.Join(dir, path.Base(s.Value))}, writeRec{from: from})
		}
	case "tee":
		rest, _ := parseOpts(args, optSpec{short: "aip", long: []string{"append", "ignore-interrupts"}, longOpt: []string{"output-error"}})
		var content *Arg
		if sc.stdin.kind == "text" && !sc.stdin.text.Dynamic {
			t := sc.stdin.text
			content = &t
		} else if sc.stdin.kind == "pipe" && len(sc.stdin.from) == 1 {
			// echo TEXT | tee f: what echo writes.
			if f := a.node(sc.stdin.from[0]); f != nil && f.Kind == KindCommand && f.out != nil && !f.out.Dynamic {
				content = f.out
			}
		}
		for _, f := range rest {
			rec(f, writeRec{content: content})
		}
	case "curl":
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			switch {
			case (v == "-o" || v == "--output") && i+1 < len(args):
				i++
				rec(args[i], writeRec{})
			case strings.HasPrefix(v, "-o") && len(v) > 2 && !strings.HasPrefix(v, "--"):
				rec(Arg{Value: v[2:]}, writeRec{})
			case v == "-O" || v == "--remote-name" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "O"):
				for _, u := range args {
					if strings.Contains(u.Value, "://") && !u.Dynamic {
						rec(Arg{Value: urlBase(u.Value)}, writeRec{})
					}
				}
			}
		}
	case "wget":
		named := false
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			switch {
			case (v == "-O" || v == "--output-document") && i+1 < len(args):
				i++
				named = true
				if args[i].Value != "-" {
					rec(args[i], writeRec{})
				}
			case strings.HasPrefix(v, "--output-document="):
				named = true
				rec(Arg{Value: strings.TrimPrefix(v, "--output-document=")}, writeRec{})
			case strings.HasPrefix(v, "-O") && len(v) > 2:
				named = true
				if v[2:] != "-" {
					rec(Arg{Value: v[2:]}, writeRec{})
				}
			}
		}
		if !named {
			for _, u := range args {
				if strings.Contains(u.Value, "://") && !u.Dynamic {
					rec(Arg{Value: urlBase(u.Value)}, writeRec{})
				}
			}
		}
	case "dd":
		for _, x := range args {
			if strings.HasPrefix(x.Value, "of=") {
				rec(Arg{Value: strings.TrimPrefix(x.Value, "of="), Dynamic: x.Dynamic}, writeRec{})
			}
		}
	case "chmod":
		rest, _ := parseOpts(args, optSpec{short: "cfvR", long: []string{"changes", "silent", "quiet", "verbose", "recursive"}, longVal: []string{"reference"}})
		if len(rest) >= 2 && !rest[0].Dynamic && makesExecutable(rest[0].Value) {
			for _, f := range rest[1:] {
				rec(f, writeRec{chmod: true})
			}
		}
	case "sed", "perl":
		inPlace := false
		for _, x := range args {
			if x.Value == "-i" || strings.HasPrefix(x.Value, "-i") || x.Value == "--in-place" || strings.HasPrefix(x.Value, "--in-place=") ||
				n.Name == "perl" && strings.HasPrefix(x.Value, "-") && strings.Contains(x.Value, "i") {
				inPlace = true
			}
		}
		if inPlace {
			for _, x := range args[1:] {
				if !strings.HasPrefix(x.Value, "-") {
					rec(x, writeRec{})
				}
			}
		}
	}
}

// fromPaths resolves the source of a copy; for a symbolic link, relative
// to the link's directory is close enough.
func (a *analyzer) fromPaths(s Arg, sc *scope, symlink bool) []string {
	if s.Dynamic {
		return nil
	}
	return a.absPaths(s.Value, sc)
}

func (a *analyzer) isDir(p string, sc *scope) bool {
	for _, q := range a.absPaths(p, sc) {
		if fi, err := os.Stat(q); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// makesExecutable reports whether a chmod mode adds an execute bit.
func makesExecutable(mode string) bool {
	if isDigits(mode) {
		for _, c := range mode {
			if (c-'0')&1 != 0 {
				return true
			}
		}
		return false
	}
	for _, part := range strings.Split(mode, ",") {
		if i := strings.IndexAny(part, "+="); i >= 0 && strings.ContainsAny(part[i:], "xX") {
			return true
		}
	}
	return false
}

// urlBase is the file name curl -O and wget give a download.
func urlBase(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	b := path.Base(u)
	if b == "." || b == "/" || strings.Contains(b, ":") {
		return "index.html"
	}
	return b
}

// parsePush reads the options and refspecs of git push, and the current
// branch from the repository's HEAD.
func (a *analyzer) parsePush(args []Arg, dirs []Arg, sc *scope) *gitPush {
	g := &gitPush{}
	var ops []Arg
	for i := 0; i < len(args); i++ {
		x := args[i]
		v := x.Value
		if x.Dynamic {
			ops = append(ops, x)
			continue
		}
		switch {
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case v == "--force" || strings.HasPrefix(v, "--force-with-lease") || v == "--force-if-includes":
			g.force = true
		case v == "--mirror":
			g.force, g.all = true, true
		case v == "--all" || v == "--branches":
			g.all = true
		case v == "--delete":
			g.delete = true
		case v == "--dry-run":
			return nil
		case v == "-o" || v == "--push-option" || v == "--repo" || v == "--receive-pack" || v == "--exec":
			i++
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if strings.Contains(v, "n") {
				return nil
			}
			g.force = g.force || strings.Contains(v, "f")
			g.delete = g.delete || strings.Contains(v, "d")
			if strings.HasSuffix(v, "o") {
				i++
			}
		default:
			ops = append(ops, x)
		}
	}
	if len(ops) > 1 {
		g.refs = ops[1:]
		for _, r := range g.refs {
			if strings.HasPrefix(r.Value, "+") || strings.HasPrefix(r.Value, ":") {
				g.plusRef = true
			}
		}
	}
	g.branch, g.branchKnown = a.currentBranch(dirs, sc)
	return g
}

// currentBranch reads the branch HEAD names in the repository the command
// runs in (inside the inspection roots only).
func (a *analyzer) currentBranch(dirs []Arg, sc *scope) (string, bool) {
	dir, ok := sc.st.single()
	if !ok {
		return "", false
	}
	for _, d := range dirs {
		if d.Dynamic {
			return "", false
		}
		dir = cleanJoin(dir, d.Value)
	}
	for d := dir; ; d = path.Dir(d) {
		f := a.readFile(path.Join(d, ".git", "HEAD"))
		switch f.status {
		case "ok":
			ref, ok := strings.CutPrefix(strings.TrimSpace(string(f.data)), "ref: refs/heads/")
			return ref, ok
		case "missing":
		default:
			return "", false
		}
		if d == "/" || !a.underRoots(d) {
			return "", false
		}
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

// lookCache remembers, for a second, whether a directory holds an
// executable: a command names the same few programs again and again, and a
// stat per PATH entry per name is most of the cost of a one-line command.
var lookCache = struct {
	sync.Mutex
	m map[[2]string]lookEntry
}{m: map[[2]string]lookEntry{}}

type lookEntry struct {
	found bool
	at    time.Time
}

const lookTTL = time.Second

// osLookPath reports whether dir holds an executable regular file name.
func osLookPath(dir, name string) bool {
	key := [2]string{dir, name}
	now := time.Now()
	lookCache.Lock()
	e, ok := lookCache.m[key]
	lookCache.Unlock()
	if ok && now.Sub(e.at) < lookTTL {
		return e.found
	}
	fi, err := os.Stat(path.Join(dir, name))
	found := err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
	lookCache.Lock()
	if len(lookCache.m) > 4096 {
		clear(lookCache.m)
	}
	lookCache.m[key] = lookEntry{found, now}
	lookCache.Unlock()
	return found
}
