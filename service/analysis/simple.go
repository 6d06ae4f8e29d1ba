package analysis

// This file walks simple commands: assignments (and the variables whose
// values become code), redirections, and what a command prints.

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
		if val.Value != "" && !path.IsAbs(val.Value) {
			// Not a search: each shell started with it opens the name from
			// the directory it starts in, which may be another one, with
			// other contents, than where the command is analysed.
			// What it names here is judged too.
			a.flag(n.ID, FlagDynamic, "%s names a relative startup file (%s): each shell started with it reads that name from the directory it starts in; give an absolute path", name, short(val.Value))
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
	c.fn = ""
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
			rd.Target, rd.Dynamic, rd.maybe = a.displayPath(t, sc), t.Dynamic, t.maybe
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

// knownOutput returns what the builtin n prints, when analysis knows it.
func (a *analyzer) knownOutput(n *Node) (string, bool) {
	switch n.Name {
	case "echo", "printf":
		if n.out != nil && !n.out.Dynamic {
			return n.out.Value, true
		}
	case "pwd":
		if len(n.Argv) == 1 && len(n.cwds) == 1 && !a.taintAll {
			return n.cwds[0], true
		}
	}
	return "", false
}
