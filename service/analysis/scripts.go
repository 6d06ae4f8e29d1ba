package analysis

// This file inspects the scripts a command runs: it finds them, reads them
// (only inside the script inspection roots and outside the deny-read set,
// with symlinks resolved first), hashes them, and parses shell scripts into
// the tree. It also links files the command writes to the ones it runs.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Errors of ReadScript.
var (
	ErrTooLarge   = errors.New("larger than the inspection limit")
	ErrNotRegular = errors.New("not a regular file")
)

// InitPath is where Gatehouse's own init is bound inside the sandbox
// (sandbox/bwrap.InitPath): running it runs nothing of the command's.
const initPath = "/run/gatehouse/init"

// ReadScript reads the regular file p, which must not be a symbolic link,
// up to max bytes. It never blocks on a FIFO or device.
func ReadScript(p string, max int64) ([]byte, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > max {
		return nil, ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, ErrTooLarge
	}
	return data, nil
}

// SHA256 returns the hex SHA-256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fileResult is the outcome of reading one path for inspection.
type fileResult struct {
	real   string
	data   []byte
	status string // ok, missing, outside, denied, large, special, error
	msg    string
}

// readFile reads p if the rules allow it (cached per analysis).
func (a *analyzer) readFile(p string) *fileResult {
	if r, ok := a.files[p]; ok {
		return r
	}
	r := &fileResult{}
	a.files[p] = r
	if a.inDenyRead(p) {
		r.status = "denied"
		return r
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.status = "missing"
		} else {
			r.status, r.msg = "error", errText(err)
		}
		return r
	}
	real = filepath.ToSlash(real)
	r.real = real
	switch {
	case a.inDenyRead(real):
		r.status = "denied"
		return r
	case !a.underRoots(real):
		r.status = "outside"
		return r
	}
	data, err := ReadScript(real, a.opts.MaxScriptBytes)
	switch {
	case errors.Is(err, ErrTooLarge):
		r.status = "large"
	case errors.Is(err, ErrNotRegular):
		r.status = "special"
	case errors.Is(err, fs.ErrNotExist):
		r.status = "missing"
	case err != nil:
		r.status, r.msg = "error", errText(err)
	default:
		r.status, r.data = "ok", data
	}
	return r
}

// errText is the cause of a path error without the path.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (a *analyzer) inDenyRead(p string) bool {
	for _, d := range a.opts.DenyRead {
		if fspath.Within(p, d) {
			return true
		}
	}
	return false
}

// execPath handles a command run by path (./x.sh, dir/tool, or a name
// PATH resolves inside the inspection roots).
func (a *analyzer) execPath(n *Node, sc *scope) {
	first := n.Argv[0]
	p := params{known: true, zero: first.Value, list: n.Argv[1:]}
	if !strings.Contains(first.Value, "/") {
		first = Arg{Value: n.Path}
	}
	a.runScript(n, first, "", "exec", p, sc)
}

// runScript inspects the script written (as the command names it) that n
// runs: how is exec (by path; the language comes from its first line),
// script (bash x.sh), source (. x.sh, BASH_ENV) or interp (python x.py).
func (a *analyzer) runScript(n *Node, written Arg, lang, how string, p params, sc *scope) {
	if written.Dynamic {
		if how == "interp" {
			a.flag(n.ID, FlagNonShellCode, "%s runs a %s script whose path is only known at run time", n.Name, lang)
			return
		}
		a.flag(n.ID, FlagDynamic, "runs a script whose path is only known at run time: %s", short(written.Value))
		n.codeFrom = append(n.codeFrom, written.subs...)
		n.runsCode = true
		return
	}
	if written.Value == "" {
		return
	}
	cands, why := a.scriptCandidates(written.Value, how, sc)
	if cands == nil {
		a.flag(n.ID, FlagScriptUnreadable, "%s cannot be located: %s", written.Value, why)
		return
	}
	for _, c := range cands {
		a.scriptAt(n, c, written, lang, how, p, sc, 0)
	}
}

// scriptCandidates returns where a script named v may be.
func (a *analyzer) scriptCandidates(v, how string, sc *scope) ([]string, string) {
	if path.IsAbs(v) {
		return []string{path.Clean(v)}, ""
	}
	if strings.Contains(v, "/") || how == "interp" || how == "exec" {
		if ps := a.absPaths(v, sc); ps != nil {
			return ps, ""
		}
		return nil, "the working directory is not known at this point"
	}
	// A bare name: source searches PATH first (then, in bash, the working
	// directory); bash x.sh the working directory first, then PATH.
	var out []string
	if how == "script" {
		out = append(out, a.absPaths(v, sc)...)
	}
	for _, e := range sc.st.path {
		if e.dynamic || !path.IsAbs(e.dir) {
			continue
		}
		q := path.Join(e.dir, v)
		if fi, err := os.Stat(q); err == nil && fi.Mode().IsRegular() {
			out = append(out, q)
			break
		}
	}
	if how == "source" && sc.u.lang != syntax.LangPOSIX {
		out = append(out, a.absPaths(v, sc)...)
	}
	if len(out) == 0 {
		return nil, "it is not in PATH and the working directory is not known"
	}
	return out, ""
}

// scriptAt inspects the candidate path p.
func (a *analyzer) scriptAt(n *Node, p string, written Arg, lang, how string, pr params, sc *scope, depth int) {
	linked := a.linkWrites(n, p, lang, how, pr, sc, depth)
	switch {
	case p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0":
		if _, ok := LangOf(lang); ok || how == "exec" {
			a.stdinCode(n, orLang(lang, sc), pr, sc)
		} else {
			a.flag(n.ID, FlagNonShellCode, "%s runs %s code from its stdin", n.Name, lang)
		}
		return
	case strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/"):
		a.flag(n.ID, FlagDynamic, "runs code from a file descriptor (a process substitution): %s", short(written.Value))
		n.codeFrom = append(n.codeFrom, written.subs...)
		n.runsCode = true
		return
	case p == initPath:
		return
	case (fspath.Within(p, "/tmp") || fspath.Within(p, "/dev/shm")) && !a.inWorkspace(p) && !a.underRoots(p):
		if !linked {
			a.flag(n.ID, FlagDynamic, "%s is in the sandbox's private /tmp, which starts empty: the command creates it, with contents only known at run time", p)
		}
		return
	case (fspath.Within(p, "/proc") || fspath.Within(p, "/dev") || fspath.Within(p, "/run") || fspath.Within(p, "/sys")) && !a.inWorkspace(p) && !a.underRoots(p):
		a.flag(n.ID, FlagScriptUnreadable, "%s is not a file analysis reads", p)
		return
	}
	f := a.readFile(p)
	switch f.status {
	case "missing":
		if !linked {
			a.flag(n.ID, FlagScriptUnreadable, "%s does not exist when the command is analysed", p)
		}
		return
	case "outside":
		if how != "exec" || looksLikeScript(p) {
			a.flag(n.ID, FlagScriptOutsideRoots, "%s is outside the script inspection roots, so it is not read", p)
		} else {
			a.note(n.ID, p+" is outside the script inspection roots; it is run as a program, not read")
		}
		return
	case "denied":
		a.flag(n.ID, FlagScriptOutsideRoots, "%s is in the deny-read set, so it is not read", p)
		return
	case "large":
		a.flag(n.ID, FlagScriptUnreadable, "%s is larger than %d bytes, so it is not read", p, a.opts.MaxScriptBytes)
		return
	case "special":
		a.flag(n.ID, FlagScriptUnreadable, "%s is not a regular file", p)
		return
	case "error":
		a.flag(n.ID, FlagScriptUnreadable, "%s cannot be read: %s", p, f.msg)
		return
	}
	kind := lang
	if how == "exec" {
		interp, text := shebang(f.data)
		switch {
		case interp != "":
			kind = interp
		case !text:
			return // a program, not a script
		default:
			kind = langName(sc.u.lang) // the shell runs a text file without #!
		}
	}
	idx := a.addScript(f, kind, how == "exec")
	if !slices.Contains(n.Scripts, idx) {
		n.Scripts = append(n.Scripts, idx)
	}
	a.flag(n.ID, FlagScriptInspected, "")
	l, ok := LangOf(kind)
	if !ok {
		a.flag(n.ID, FlagNonShellCode, "%s is a %s script: hashed and pinned, not analysed", f.real, kind)
		return
	}
	n.runsCode = true
	if a.active[f.real] {
		a.note(n.ID, f.real+" runs itself again; it is analysed once")
		return
	}
	a.active[f.real] = true
	defer delete(a.active, f.real)
	var c *scope
	if how == "source" {
		c = sc.child("", nil)
		c.parent, c.top = n.ID, false
		c.args = pr
	} else {
		c = a.payloadScope(sc, n)
		c.args = pr
	}
	via := how
	if how == "exec" {
		via = "script"
	}
	c.script = f.real
	a.unit(n.ID, string(f.data), f.real, l, c, via)
}

func orLang(lang string, sc *scope) string {
	if lang == "" {
		return langName(sc.u.lang)
	}
	return lang
}

// looksLikeScript reports whether a file name says it is a script.
func looksLikeScript(p string) bool {
	switch path.Ext(p) {
	case ".sh", ".bash", ".zsh", ".ksh", ".command", ".py", ".pl", ".rb", ".js", ".mjs", ".cjs", ".ts", ".php", ".lua", ".tcl", ".awk":
		return true
	}
	return false
}

// addScript records a file that was read.
func (a *analyzer) addScript(f *fileResult, lang string, exec bool) int {
	if i, ok := a.scripts[f.real]; ok {
		a.tree.Scripts[i].Exec = a.tree.Scripts[i].Exec || exec
		return i
	}
	s := &Script{Path: f.real, SHA256: SHA256(f.data), Size: int64(len(f.data)), Lang: lang, Exec: exec, data: f.data}
	a.tree.Scripts = append(a.tree.Scripts, s)
	a.scripts[f.real] = len(a.tree.Scripts) - 1
	return len(a.tree.Scripts) - 1
}

// shebang returns the interpreter a file's #! line names (a dialect name
// for shells) and whether the file is text.
func shebang(data []byte) (string, bool) {
	head := data
	if len(head) > 1024 {
		head = head[:1024]
	}
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", !bytes.HasPrefix(head, []byte("\x7fELF")) && bytes.IndexByte(head, 0) < 0
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return "", true
	}
	prog := path.Base(fields[0])
	if prog == "env" {
		prog = ""
		rest := fields[1:]
		for i := 0; i < len(rest); i++ {
			f := rest[i]
			switch {
			case f == "-S" || f == "-i" || f == "-" || strings.HasPrefix(f, "--"):
			case f == "-u" || f == "-C":
				i++
			case strings.HasPrefix(f, "-"):
			case strings.Contains(f, "="):
			default:
				prog = path.Base(f)
			}
			if prog != "" {
				break
			}
		}
		if prog == "" {
			return "env", true
		}
	}
	if l, ok := LangOf(prog); ok {
		return langName(l), true
	}
	if i := interpreterOf(prog); i != "" {
		return i, true
	}
	return prog, true
}

// linkWrites flags n when the file p it runs is one the command writes
// before, and analyses what is written when that is known. It reports
// whether p is written.
func (a *analyzer) linkWrites(n *Node, p, lang, how string, pr params, sc *scope, depth int) bool {
	linked := false
	for _, w := range a.writes {
		if w.node == n.ID {
			continue
		}
		// A write of a directory on the script's path (ln -sfn other dir)
		// makes the path name another file than the one read here.
		if dir := slices.IndexFunc(w.paths, func(q string) bool { return q != p && fspath.Within(p, q) }); dir >= 0 {
			linked = true
			n.writtenBy = append(n.writtenBy, w.node)
			n.runsCode = true
			a.flag(n.ID, FlagDynamic, "runs %s, whose directory %s this command replaces first (%s): what it runs is only known at run time", p, w.paths[dir], w.what)
			continue
		}
		if !slices.Contains(w.paths, p) {
			continue
		}
		linked = true
		n.writtenBy = append(n.writtenBy, w.node)
		a.flag(n.ID, FlagWriteThenRun, "runs %s, which this command writes first (%s)", p, w.what)
		switch {
		case w.chmod:
			a.note(w.node, "chmod of "+p+" will fail (read-only file system) if it is pinned: the pinned copy of a script run by path is executable already")
		case w.content != nil:
			kind := lang
			if how == "exec" {
				if interp, _ := shebang([]byte(w.content.Value)); interp != "" {
					kind = interp
				} else {
					kind = langName(sc.u.lang)
				}
			}
			if l, ok := LangOf(kind); ok {
				c := a.payloadScope(sc, n)
				c.args = pr
				a.unit(n.ID, w.content.Value, "written "+p, l, c, "write-then-run")
			} else {
				a.flag(n.ID, FlagNonShellCode, "%s is written as %s code, which analysis does not understand", p, kind)
			}
		case len(w.from) > 0:
			if depth > 4 {
				a.flag(n.ID, FlagDynamic, "%s is copied around more than analysis follows", p)
				continue
			}
			for _, src := range w.from {
				a.scriptAt(n, src, Arg{Value: src}, lang, how, pr, sc, depth+1)
			}
		default:
			a.flag(n.ID, FlagDynamic, "runs %s, which this command writes (%s) with contents only known at run time", p, w.what)
			n.runsCode = true
		}
	}
	return linked
}

// inWorkspace reports whether p lies in a workspace root (which the sandbox
// binds in, even inside its private /tmp).
func (a *analyzer) inWorkspace(p string) bool {
	for _, w := range a.opts.Writable {
		if fspath.Within(p, w) {
			return true
		}
	}
	return false
}
