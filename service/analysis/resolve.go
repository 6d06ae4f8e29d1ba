package analysis

// This file resolves a command's name the way the shell would: functions,
// aliases, builtins, then PATH, following changes to PATH as it goes.

import (
	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

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
	if n.Function && a.argRunners[n.Name] {
		a.argRunnerCall(n, sc)
	} else if h, ok := handlers[n.Name]; ok {
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
	if first.Dynamic && sc.fn != "" && a.argRunners[sc.fn] && isAllArgsText(first.Value) {
		// What runs is what each call of the function passes: the calls
		// are judged (argRunnerCall).
		a.note(n.ID, "runs the arguments of function "+sc.fn+"; each call is judged by what it passes")
		return
	}
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
		if builtinOrKeyword(v) || a.lookup(v, sc, nil) != "" {
			a.flag(n.ID, FlagDynamic, "function %s, defined in this command, shadows the command %s", v, v)
		}
		return
	}
	if builtinOrKeyword(v) {
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
	if fspath.Within(dir, "/tmp") || fspath.Within(dir, "/var/tmp") || fspath.Within(dir, "/dev/shm") {
		return true
	}
	for _, w := range a.opts.Writable {
		if fspath.Within(dir, w) {
			return true
		}
	}
	return false
}

// underRoots reports whether p lies in a script inspection root.
func (a *analyzer) underRoots(p string) bool {
	if p == "" {
		return false
	}
	for _, r := range a.opts.ScriptRoots {
		if fspath.Within(p, r) {
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

// isAllArgsText reports whether a word's source text is "$@".
func isAllArgsText(s string) bool {
	switch s {
	case `"$@"`, `$@`, `"${@}"`, `${@}`:
		return true
	}
	return false
}

// argRunnerCall judges a call of a function that runs its arguments as
// the command those arguments make.
func (a *analyzer) argRunnerCall(n *Node, sc *scope) {
	args := n.Argv[1:]
	if len(args) == 0 {
		return
	}
	if args[0].Dynamic && !(sc.fn != "" && a.argRunners[sc.fn] && isAllArgsText(args[0].Value)) {
		a.flag(n.ID, FlagDynamic, "function %s runs its arguments as a command, and %s is only known at run time", n.Name, short(args[0].Value))
		return
	}
	a.payload(n, "function "+n.Name, slices.Clone(args), sc)
}
