package analysis

// This file holds the walker's state: the analyzer, the units it parses,
// the shell state it follows (working directories, PATH, functions,
// aliases, variables) and the scopes that carry it through the tree.

import (
	"errors"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// analyzer holds the state of one analysis.
type analyzer struct {
	opts Options
	tree *Tree
	lang syntax.LangVariant

	funcs map[string]bool // functions defined in the text
	// argRunners are functions that run their arguments as a command
	// ("$@" in their body): each call is judged by what it passes.
	argRunners map[string]bool
	aliases    map[string]string // aliases defined in the text
	// tainted are variables the text assigns somewhere; their values are
	// only known at run time. taintAll: anything may be assigned (eval of
	// a run-time string, declare -n...).
	tainted  map[string]bool
	taintAll bool
	vars     map[string]*varInfo // for arithmetic safety

	files   map[string]*fileResult // reads, by path as resolved
	active  map[string]bool        // scripts being walked (cycles)
	scripts map[string]int         // Tree.Scripts index by path
	look    map[[2]string]bool     // PATH lookups
	writes  []writeRec             // files the command writes, in order
	// gitEnv are the GIT_CONFIG_* variables a node assigns, judged
	// together once all of its assignments are known.
	gitEnv map[int]map[string]Arg

	pipelines int
	stopped   bool // a parse error or a limit: stop walking
	// lastDefault is the default word of the ${x:-word} param just
	// evaluated, when x is unknown (its value if x is empty).
	lastDefault *string
	parsers     map[syntax.LangVariant]*syntax.Parser
}

// varInfo is what the text assigns to one variable.
type varInfo struct {
	static  []string // literal values assigned
	unknown bool     // some assignment is only known at run time
	array   bool     // static holds an array's elements
	// elemsOf are variables whose values (an array's elements: for x in
	// "${arr[@]}"), or parts of them (x=${y%.*}), it is assigned; judged
	// when the text has been read.
	elemsOf []string
}

// A unit is one piece of shell text: the command, a bash -c string, a
// script, a here-document fed to a shell.
type unit struct {
	src    string
	source string
	lang   syntax.LangVariant
	depth  int
	// argsMutated: set or shift changes the positional parameters.
	argsMutated bool
}

// params are a shell's positional parameters.
type params struct {
	known bool
	zero  string
	list  []Arg
}

func (p params) dynamic() bool {
	for _, a := range p.list {
		if a.Dynamic {
			return true
		}
	}
	return false
}

func (p params) values() []string {
	out := make([]string, len(p.list))
	for i, a := range p.list {
		out[i] = a.Value
	}
	return out
}

// stdinSrc is what a command's standard input is.
type stdinSrc struct {
	kind string // call, pipe, text, file, none, unknown
	from []int  // pipe: the commands feeding it
	text Arg    // text: a here-document or here-string
	file Arg    // file: < path
	subs []int  // text: substitutions in a dynamic here-document
}

// state is what a sequence of commands changes for the ones after it.
type state struct {
	cwds  []string // candidate working directories
	known bool     // false: the working directory is not known
	// lastCd is the directory the last command changed to when it
	// succeeded (for cd X && Y).
	lastCd    []string
	lastCdSet bool
	path      []pathEntry
	pathKnown bool
	// exited: the last command ends the shell (exit, return, exec).
	exited bool
}

// pathEntry is one directory of PATH.
type pathEntry struct {
	dir     string
	dynamic bool // only known at run time
	added   bool // added by the text (not from the environment)
}

func initialPath(env map[string]string) []pathEntry {
	p, ok := env["PATH"]
	if !ok {
		p = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	var out []pathEntry
	for _, d := range strings.Split(p, ":") {
		out = append(out, pathEntry{dir: d})
	}
	return out
}

func (s *state) clone() *state {
	c := *s
	// Shared, capacity-limited: an append by either copies.
	c.cwds = s.cwds[:len(s.cwds):len(s.cwds)]
	c.path = s.path[:len(s.path):len(s.path)]
	c.lastCd = nil
	c.lastCdSet = false
	c.exited = false
	return &c
}

// single returns the working directory when exactly one is possible.
func (s *state) single() (string, bool) {
	if s.known && len(s.cwds) == 1 {
		return s.cwds[0], true
	}
	return "", false
}

// merge makes s the union of the states others may leave.
func (s *state) merge(others ...*state) {
	for _, o := range others {
		if !o.known {
			s.known = false
		}
		for _, c := range o.cwds {
			if !slices.Contains(s.cwds, c) {
				s.cwds = append(s.cwds, c)
			}
		}
		if !o.pathKnown || !slices.Equal(o.path, s.path) {
			if !samePath(o.path, s.path) {
				s.pathKnown = s.pathKnown && o.pathKnown
				// Keep the one with more added entries: stricter.
				if len(o.path) > len(s.path) {
					s.path = o.path
				}
			}
		}
	}
	if len(s.cwds) > maxCwds {
		s.known = false
	}
	s.lastCd, s.lastCdSet, s.exited = nil, false, false
}

func samePath(a, b []pathEntry) bool { return slices.Equal(a, b) }

// envMap is a command's environment as analysis knows it.
type envMap struct {
	vals map[string]envVal
}

type envVal struct {
	val   string
	known bool
}

func newEnv(env map[string]string) *envMap {
	e := &envMap{vals: map[string]envVal{}}
	for k, v := range env {
		e.vals[k] = envVal{val: v, known: true}
	}
	return e
}

func (e *envMap) get(name string) (envVal, bool) {
	v, ok := e.vals[name]
	return v, ok
}

// with returns a copy of e with name set (unset when v is nil).
func (e *envMap) with(name string, v *envVal) *envMap {
	c := &envMap{vals: make(map[string]envVal, len(e.vals)+1)}
	for k, x := range e.vals {
		c.vals[k] = x
	}
	if v == nil {
		delete(c.vals, name)
	} else {
		c.vals[name] = *v
	}
	return c
}

// scope is where a node being walked sits.
type scope struct {
	u      *unit
	parent int
	via    string
	ctx    []string
	top    bool
	st     *state
	args   params
	env    *envMap
	stdin  stdinSrc
	// pipeline and stdinFrom describe the pipeline element being walked.
	pipeline  int
	stdinFrom []int
	// pathOverride is a PATH set for one command (PATH=... cmd).
	pathOverride []pathEntry
	// script is the innermost script file being walked.
	script string
	// fn is the function whose body is being walked, whose positional
	// parameters are its callers' arguments.
	fn string
}

// child returns a copy of sc for a nested construct.
func (sc *scope) child(ctx string, st *state) *scope {
	c := *sc
	if ctx != "" {
		c.ctx = append(slices.Clip(sc.ctx), ctx)
	}
	if st != nil {
		c.st = st
	}
	return &c
}

// text returns the source text of node n of unit u.
func (a *analyzer) text(u *unit, n syntax.Node) string {
	if u == nil || n == nil {
		return ""
	}
	s, e := n.Pos(), n.End()
	if !s.IsValid() || !e.IsValid() {
		return ""
	}
	i, j := int(s.Offset()), int(e.Offset())
	if i < 0 || j > len(u.src) || i > j {
		return ""
	}
	return u.src[i:j]
}

// unit parses text and walks it under parent. source names it for
// positions; via says how parent leads to it.
func (a *analyzer) unit(parent int, text, source string, lang syntax.LangVariant, sc *scope, via string) {
	depth := 0
	if sc.u != nil {
		depth = sc.u.depth + 1
	}
	if depth > a.opts.MaxDepth {
		a.flag(parent, FlagDynamic, "nested more than %d levels deep (shell strings, scripts, eval); analysis stops here", a.opts.MaxDepth)
		a.tree.Truncated = true
		return
	}
	if a.stopped {
		return
	}
	f, err := a.parse(text, lang)
	if err != nil {
		a.parseError(source, err)
		return
	}
	u := &unit{src: text, source: source, lang: lang, depth: depth}
	a.prepass(f, u, sc)
	c := *sc
	c.u, c.parent, c.via = u, parent, via
	if parent >= 0 {
		c.top = false
	}
	if u.argsMutated {
		c.args = params{}
	}
	a.stmts(f.Stmts, &c)
}

// parse parses text in lang with a parser kept for the analysis, once:
// a text met again (a script run twice) is the unit parsed before.
func (a *analyzer) parse(text string, lang syntax.LangVariant) (*syntax.File, error) {
	if f := a.tree.ParsedUnit(lang, text); f != nil {
		return f, nil
	}
	p := a.parsers[lang]
	if p == nil {
		p = syntax.NewParser(syntax.Variant(lang))
		if a.parsers == nil {
			a.parsers = map[syntax.LangVariant]*syntax.Parser{}
		}
		a.parsers[lang] = p
	}
	f, err := parseShell(p, lang, text)
	if err == nil {
		if a.tree.units == nil {
			a.tree.units = map[unitKey]*syntax.File{}
		}
		a.tree.units[unitKey{lang, text}] = f
	}
	return f, err
}

// parseError records the first parse error; analysis stops.
func (a *analyzer) parseError(source string, err error) {
	if a.tree.ParseError == nil {
		pe := &ParseError{Source: source, Msg: err.Error()}
		var se syntax.ParseError
		var le syntax.LangError
		switch {
		case errors.As(err, &se):
			pe.Line, pe.Col, pe.Msg = int(se.Pos.Line()), int(se.Pos.Col()), se.Text
		case errors.As(err, &le):
			pe.Line, pe.Col = int(le.Pos.Line()), int(le.Pos.Col())
			pe.Msg = strings.TrimPrefix(le.Error(), le.Pos.String()+": ")
		}
		a.tree.ParseError = pe
	}
	a.stopped = true
}

// newNode adds a node at pos in sc.
func (a *analyzer) newNode(sc *scope, kind string, pos syntax.Pos) *Node {
	n := &Node{
		ID:        len(a.tree.Nodes),
		Parent:    sc.parent,
		Via:       sc.via,
		Kind:      kind,
		Context:   sc.ctx[:len(sc.ctx):len(sc.ctx)],
		pipeline:  sc.pipeline,
		stdinFrom: sc.stdinFrom[:len(sc.stdinFrom):len(sc.stdinFrom)],
		topLevel:  sc.top,
		script:    sc.script,
	}
	if sc.u != nil {
		n.Source = sc.u.source
	}
	if pos.IsValid() {
		n.Line, n.Col = int(pos.Line()), int(pos.Col())
	}
	a.tree.Nodes = append(a.tree.Nodes, n)
	if len(a.tree.Nodes) >= a.opts.MaxNodes && !a.stopped {
		a.stopped = true
		a.tree.Truncated = true
		n.Flags = append(n.Flags, FlagDynamic)
		n.Notes = append(n.Notes, "the command has more parts than analysis follows; the rest is not analysed")
	}
	return n
}

// node returns the node with id, or nil.
func (a *analyzer) node(id int) *Node {
	if id < 0 || id >= len(a.tree.Nodes) {
		return nil
	}
	return a.tree.Nodes[id]
}

// note adds a note to node id.
func (a *analyzer) note(id int, msg string) {
	if n := a.node(id); n != nil && !slices.Contains(n.Notes, msg) {
		n.Notes = append(n.Notes, msg)
	}
}

// flag sets f on node id with a note.
func (a *analyzer) flag(id int, f Flag, format string, args ...any) {
	n := a.node(id)
	if n == nil {
		return
	}
	if !n.Has(f) {
		n.Flags = append(n.Flags, f)
	}
	if format != "" {
		msg := sprintf(format, args...)
		if f == FlagDynamic && n.dynamicWhy == "" {
			n.dynamicWhy = msg
		}
		a.note(id, msg)
	}
}
