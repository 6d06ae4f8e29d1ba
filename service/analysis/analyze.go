// Package analysis turns a shell command into a tree of the commands it
// runs, as far as that is known before anything runs, and judges the tree
// against the policy's rules.
//
// The text is parsed with mvdan.cc/sh/v3 in the dialect of the configured
// shell. Every simple command becomes a Node with its resolved name and
// static argv; wrappers (sudo, env, nice, timeout, xargs, find -exec,
// bash -c, eval...) are unwrapped to their payloads; scripts the command
// runs are read (under the inspection roots only), parsed, hashed and
// merged into the tree; whatever is only known at run time is marked
// dynamic, never guessed. [Judge] then applies the built-in rules, the
// configured rules and the default and dynamic actions.
//
// Analysis never runs anything; it reads only the scripts a command names,
// within the roots it is given.
package analysis

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Defaults for the limits in Options.
const (
	DefaultMaxScriptBytes = 1 << 20
	DefaultMaxDepth       = 8
	DefaultMaxNodes       = 5000
)

// maxCwds bounds the working directories analysis follows at once (after
// cd commands that may or may not succeed).
const maxCwds = 4

// Options say what analysis may know about the command's surroundings. The
// zero value analyses bash text with nothing known about the file system.
type Options struct {
	// Dialect is "bash" or "sh", the basename of the configured shell.
	Dialect string
	// Dir is the working directory: absolute, symlinks resolved.
	Dir string
	// Env is the command's constructed environment. Values of variables in
	// it are known statically unless the text assigns them; PWD and
	// GATEHOUSE_EXECUTION_ID should be left out (they vary).
	Env map[string]string
	// ScriptRoots are the directories whose files may be read (resolved).
	ScriptRoots []string
	// DenyRead are never read, even inside ScriptRoots (resolved); a
	// command that sends one to the network reads a secret. The executor
	// passes its deny-read set, every credential store included.
	DenyRead []string
	// Writable are the directories the command may write (the workspace
	// roots). A PATH entry the text adds inside one of them (or in /tmp)
	// can hold anything by the time it is searched.
	Writable []string
	// Unknown are variables set at run time whose values analysis must not
	// assume (credentials the broker injects): they are never taken as
	// unset. Names starting with GATEHOUSE_ always are.
	Unknown []string
	// Stdin is the call's stdin, parsed as a script when a shell reads it.
	Stdin string
	// LookPath finds an executable name in the directory dir; nil checks
	// the file system. Tests use a fixed table.
	LookPath func(dir, name string) bool

	MaxScriptBytes int64 // default DefaultMaxScriptBytes
	MaxDepth       int   // nesting of shell strings and scripts; default DefaultMaxDepth
	MaxNodes       int   // default DefaultMaxNodes
}

// LangOf returns the parser language of a shell's basename, and whether it
// is a shell analysis can parse.
func LangOf(shell string) (syntax.LangVariant, bool) {
	switch shell {
	case "bash", "rbash":
		return syntax.LangBash, true
	case "sh", "dash", "ash", "posh", "yash":
		return syntax.LangPOSIX, true
	case "ksh", "mksh", "ksh93", "pdksh", "oksh", "lksh":
		return syntax.LangMirBSDKorn, true
	case "zsh":
		return syntax.LangZsh, true
	}
	return 0, false
}

// unparsedShells run shell code in a language analysis cannot parse.
var unparsedShells = map[string]bool{
	"fish": true, "csh": true, "tcsh": true, "nu": true, "elvish": true, "xonsh": true,
	"pwsh": true, "powershell": true, "rc": true, "es": true,
}

// Analyze builds the command tree of text. It never fails: a parse error
// is recorded in the tree (and Judge denies it).
func Analyze(text string, opts Options) *Tree {
	if opts.Dialect == "" {
		opts.Dialect = "bash"
	}
	if opts.MaxScriptBytes <= 0 {
		opts.MaxScriptBytes = DefaultMaxScriptBytes
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = DefaultMaxNodes
	}
	lang, ok := LangOf(opts.Dialect)
	if !ok {
		lang = syntax.LangBash
	}
	a := &analyzer{
		opts:    opts,
		tree:    &Tree{Dialect: opts.Dialect, Nodes: []*Node{}, Scripts: []*Script{}, opts: opts},
		lang:    lang,
		funcs:   map[string]bool{},
		aliases: map[string]string{},
		tainted: map[string]bool{},
		vars:    map[string]*varInfo{},
		files:   map[string]*fileResult{},
		active:  map[string]bool{},
		look:    map[[2]string]bool{},
		scripts: map[string]int{},
	}
	top := &scope{
		parent: -1,
		top:    true,
		st:     &state{known: opts.Dir != "", path: initialPath(opts.Env), pathKnown: true},
		args:   params{known: true, zero: opts.Dialect},
		env:    newEnv(opts.Env),
		stdin:  stdinSrc{kind: "call"},
	}
	if opts.Dir != "" {
		top.st.cwds = []string{opts.Dir}
	}
	a.environment(top)
	a.unit(-1, text, "", lang, top, "")
	return a.tree
}

// environment judges the values of the constructed environment that are
// code (the agent's variables among them): GIT_SSH_COMMAND, PAGER,
// BASH_ENV, PS4, exported functions, git settings... One node holds them.
func (a *analyzer) environment(sc *scope) {
	var names []string
	for k := range a.opts.Env {
		if codeEnvVar(k) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	n := a.newNode(sc, KindAssign, syntax.Pos{})
	n.Name = "environment"
	c := sc.child("", nil)
	c.u = &unit{lang: a.lang}
	for _, k := range names {
		n.Assigns = append(n.Assigns, k+"="+a.opts.Env[k])
		a.specialVar(n, k, Arg{Value: a.opts.Env[k]}, c)
	}
	a.flushGitEnv(n, c)
}

// codeEnvVar reports whether specialVar judges the variable name.
func codeEnvVar(name string) bool {
	return cmdVars[name] || promptVars[name] || credFuncVar(name) != "" || name == "BASH_ENV" || name == "ENV" ||
		name == "SHELLOPTS" || name == "BASHOPTS" || name == "LD_PRELOAD" || name == "LD_AUDIT" ||
		name == "DYLD_INSERT_LIBRARIES" || name == "GIT_CONFIG_PARAMETERS" ||
		name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_CONFIG" ||
		strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// analyzer holds the state of one analysis.
type analyzer struct {
	opts Options
	tree *Tree
	lang syntax.LangVariant

	funcs   map[string]bool   // functions defined in the text
	aliases map[string]string // aliases defined in the text
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

// parse parses text in lang with a parser kept for the analysis.
func (a *analyzer) parse(text string, lang syntax.LangVariant) (*syntax.File, error) {
	p := a.parsers[lang]
	if p == nil {
		p = syntax.NewParser(syntax.Variant(lang))
		if a.parsers == nil {
			a.parsers = map[syntax.LangVariant]*syntax.Parser{}
		}
		a.parsers[lang] = p
	}
	return p.Parse(strings.NewReader(text), "")
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
				if p.Param != nil && !a.arithSafe(p.Param.Value, sc, 0) {
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
