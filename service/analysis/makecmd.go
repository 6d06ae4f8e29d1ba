package analysis

// This file runs make in analysis: it reads the Makefiles a make command
// uses, picks the targets it builds, and analyses their recipes as shell
// code.

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// makeShell judges the code of a $(shell ...) call.
func (a *analyzer) makeShell(e *makeExpander, code string) {
	arg := Arg{Value: code}
	if strings.Contains(code, "${") {
		arg = Arg{Value: code, Dynamic: true, ifEmpty: code, hasIfEmpty: true}
	}
	a.runnerCode(e.n, arg, "Makefile $(shell)", e.dir, syntax.LangPOSIX, e.sc)
}

// makeCmd follows make (gmake) into the recipes it runs.
func (a *analyzer) makeCmd(n *Node, sc *scope) {
	args := n.Argv[1:]
	var files, dirs, targets []string
	overrides := map[string]string{}
	for i := 0; i < len(args); i++ {
		x := args[i]
		v := x.Value
		if x.Dynamic {
			a.flag(n.ID, FlagDynamic, "make with an argument only known at run time: %s", short(v))
			n.runsCode = true
			return
		}
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i].Value
			}
			return ""
		}
		switch {
		case v == "--":
			targets = append(targets, values(args[i+1:])...)
			i = len(args)
		case v == "-f" || v == "--file" || v == "--makefile":
			files = append(files, next())
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--makefile="):
			_, f, _ := strings.Cut(v, "=")
			files = append(files, f)
		case v == "-C" || v == "--directory":
			dirs = append(dirs, next())
		case strings.HasPrefix(v, "--directory="):
			dirs = append(dirs, strings.TrimPrefix(v, "--directory="))
		case v == "-E" || v == "--eval" || strings.HasPrefix(v, "--eval="):
			a.flag(n.ID, FlagDynamic, "make --eval reads make code from the command line, which analysis does not follow")
			return
		case v == "-I" || v == "-o" || v == "-W" || v == "--include-dir" || v == "--old-file" || v == "--assume-old" ||
			v == "--new-file" || v == "--what-if" || v == "--assume-new" || v == "--jobserver-style":
			next()
		case v == "-j" || v == "-l" || v == "--jobs" || v == "--load-average":
			if i+1 < len(args) && isDigits(args[i+1].Value) {
				i++
			}
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for j := 1; j < len(v); j++ {
				c := v[j]
				if strings.IndexByte("fCIoWE", c) < 0 {
					continue
				}
				val := v[j+1:]
				if val == "" {
					val = next()
				}
				switch c {
				case 'f':
					files = append(files, val)
				case 'C':
					dirs = append(dirs, val)
				case 'E':
					a.flag(n.ID, FlagDynamic, "make --eval reads make code from the command line, which analysis does not follow")
					return
				}
				j = len(v)
			}
		case strings.IndexByte(v, '=') > 0:
			k, val, _ := strings.Cut(v, "=")
			overrides[strings.TrimRight(k, ":?+!")] = val
		default:
			targets = append(targets, v)
		}
	}
	dir, ok := a.runnerDir(n, dirs, sc)
	if !ok {
		return
	}
	if len(files) == 0 {
		for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
			p := path.Join(dir, name)
			if a.runnerExists(n, p) {
				files = []string{p}
				break
			}
		}
		if len(files) == 0 {
			return
		}
	}
	m := &makefile{vars: map[string][]string{}, appends: map[string][]string{}}
	var pinned []*fileResult
	for _, f := range files {
		a.makeRead(n, cleanJoin(dir, f), m, &pinned, true, 0, overrides, sc)
	}
	code := a.makeRun(n, m, targets, overrides, dir, sc)
	for _, f := range pinned {
		a.pinRunner(n, f, "make", code)
	}
}

// runnerExists reports whether p exists or is written by the command,
// without flagging anything.
func (a *analyzer) runnerExists(n *Node, p string) bool {
	for _, w := range a.writes {
		if w.node != n.ID && slices.Contains(w.paths, p) {
			return true
		}
	}
	return a.readFile(p).status != "missing"
}

// makeRead reads the Makefile p (and what it includes) into m.
func (a *analyzer) makeRead(n *Node, p string, m *makefile, pinned *[]*fileResult, required bool, depth int, overrides map[string]string, sc *scope) {
	text, f, exists, ok := a.runnerSource(n, p)
	if !exists {
		if required {
			a.flag(n.ID, FlagScriptUnreadable, "%s does not exist when the command is analysed", p)
		}
		return
	}
	if !ok {
		return
	}
	if f != nil {
		*pinned = append(*pinned, f)
	}
	part := parseMakefile(text)
	for k, v := range part.vars {
		m.vars[k] = append(m.vars[k], v...)
	}
	for k, v := range part.appends {
		m.appends[k] = append(m.appends[k], v...)
	}
	m.rules = append(m.rules, part.rules...)
	if m.def == "" {
		m.def = part.def
	}
	m.shells = append(m.shells, part.shells...)
	m.oneshell = m.oneshell || part.oneshell
	m.unknown = append(m.unknown, part.unknown...)
	for _, inc := range part.includes {
		e := &makeExpander{a: a, n: n, m: m, sc: sc, dir: path.Dir(p), overrides: overrides}
		files := e.expand(inc.files, 0)
		if depth >= 4 || e.why != "" {
			a.flag(n.ID, FlagDynamic, "%s includes %s, which analysis does not read", p, short(inc.files))
			continue
		}
		for _, name := range strings.Fields(files) {
			if strings.ContainsAny(name, "*?[") {
				a.flag(n.ID, FlagDynamic, "%s includes %s, a pattern analysis does not expand", p, name)
				continue
			}
			a.makeRead(n, cleanJoin(path.Dir(p), name), m, pinned, !inc.optional, depth+1, overrides, sc)
		}
	}
}

// makeRun judges what make runs for targets, and returns the code.
func (a *analyzer) makeRun(n *Node, m *makefile, targets []string, overrides map[string]string, dir string, sc *scope) []string {
	for _, why := range m.unknown {
		a.flag(n.ID, FlagDynamic, "the Makefile cannot be followed: %s", why)
	}
	e := &makeExpander{a: a, n: n, m: m, sc: sc, dir: dir, overrides: overrides}
	lang := syntax.LangPOSIX
	if sh := e.expand("$(SHELL)", 0); e.why == "" {
		switch l, ok := LangOf(path.Base(sh)); {
		case ok:
			lang = l
		default:
			a.flag(n.ID, FlagNonShellCode, "the Makefile runs its recipes with %s, which analysis does not understand", short(sh))
			return nil
		}
	} else {
		a.flag(n.ID, FlagDynamic, "the Makefile's SHELL is only known at run time")
		return nil
	}
	var code []string
	judge := func(text, what string, ex *makeExpander) {
		ex.why = ""
		s := ex.expand(text, 0)
		code = append(code, s)
		arg := Arg{Value: s}
		if ex.why != "" {
			a.note(n.ID, "the recipe of "+what+" uses "+ex.why+", which analysis cannot expand")
			arg = Arg{Value: s, Dynamic: true, ifEmpty: s, hasIfEmpty: true}
		}
		a.runnerCode(n, arg, "Makefile "+what, dir, lang, sc)
	}
	// $(shell ...) outside recipes runs when make reads the file.
	for _, s := range m.shells {
		judge(s, "$(shell)", e)
	}
	// Targets and prerequisites may be named by variables: $(BIN): main.go.
	unknownTargets := false
	words := func(list []string) ([]string, bool) {
		var out []string
		for _, w := range list {
			if !strings.Contains(w, "$") {
				out = append(out, w)
				continue
			}
			e.why = ""
			x := e.expand(w, 0)
			if e.why != "" {
				return out, false
			}
			out = append(out, strings.Fields(x)...)
		}
		return out, true
	}
	for i := range m.rules {
		r := &m.rules[i]
		ts, ok1 := words(r.targets)
		ps, ok2 := words(r.prereqs)
		if m.def != "" && slices.Equal(r.targets, []string{m.def}) && ok1 && len(ts) > 0 {
			m.def = ts[0]
		}
		r.targets, r.prereqs = ts, ps
		unknownTargets = unknownTargets || !ok1 || !ok2
	}
	if len(targets) == 0 {
		if m.def == "" {
			return code
		}
		targets = []string{m.def}
	}
	// Prerequisites first, then the target's own recipe, as make builds.
	seen := map[string]bool{}
	var visit func(t string, depth int)
	visit = func(t string, depth int) {
		if seen[t] {
			return
		}
		if len(seen) >= maxRunnerTargets || depth > maxRunnerTargets {
			a.flag(n.ID, FlagDynamic, "the Makefile has more targets to build than analysis follows (%d)", maxRunnerTargets)
			return
		}
		seen[t] = true
		var rules []makeRule
		for _, r := range m.rules {
			if slices.Contains(r.targets, t) {
				rules = append(rules, r)
			}
		}
		stem, hasStem := "", false
		if len(rules) == 0 {
			// A pattern rule: %.o: %.c.
			for _, r := range m.rules {
				for _, pt := range r.targets {
					if s, ok := makeStem(pt, t); ok && len(rules) == 0 {
						var pre []string
						for _, p := range r.prereqs {
							pre = append(pre, strings.ReplaceAll(p, "%", s))
						}
						rules = append(rules, makeRule{targets: []string{t}, prereqs: pre, recipe: r.recipe})
						stem, hasStem = s, true
					}
				}
			}
		}
		if len(rules) == 0 && unknownTargets {
			a.flag(n.ID, FlagDynamic, "the Makefile names targets or prerequisites with variables analysis cannot expand, so what builds %s is not known", t)
		}
		for _, r := range rules {
			for _, p := range r.prereqs {
				visit(p, depth+1)
			}
		}
		for _, r := range rules {
			if len(r.recipe) > 0 {
				a.makeRecipe(n, r, t, stem, hasStem, m, judge, e)
			}
		}
	}
	for _, t := range targets {
		visit(t, 0)
	}
	return code
}

// makeRecipe judges the recipe of rule r building target t.
func (a *analyzer) makeRecipe(n *Node, r makeRule, t, stem string, hasStem bool, m *makefile, judge func(string, string, *makeExpander), e *makeExpander) {
	ex := *e
	ex.target, ex.prereqs, ex.stem, ex.hasStem = t, r.prereqs, stem, hasStem
	var lines []string
	for _, l := range r.recipe {
		l = strings.TrimLeft(l, " \t")
		for len(l) > 0 && strings.IndexByte("@-+", l[0]) >= 0 {
			l = strings.TrimLeft(l[1:], " \t")
		}
		// A backslash-newline inside a recipe line reaches the shell.
		lines = append(lines, l)
	}
	if m.oneshell {
		judge(strings.Join(lines, "\n"), t, &ex)
		return
	}
	for _, l := range lines {
		judge(l, t, &ex)
	}
}

// makeStem matches target t against pattern p (with one %).
func makeStem(p, t string) (string, bool) {
	pre, suf, ok := strings.Cut(p, "%")
	if !ok || len(t) < len(pre)+len(suf) || !strings.HasPrefix(t, pre) || !strings.HasSuffix(t, suf) {
		return "", false
	}
	return t[len(pre) : len(t)-len(suf)], true
}
