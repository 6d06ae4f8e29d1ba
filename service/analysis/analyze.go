// Package analysis turns a shell command into a tree of the commands it
// runs, as far as that is known before anything runs. It describes; it
// does not decide: service/policy judges the tree against the rules.
//
// The text is parsed with mvdan.cc/sh/v3 in the dialect of the configured
// shell. Every simple command becomes a Node with its resolved name and
// static argv; wrappers (sudo, env, nice, timeout, xargs, find -exec,
// bash -c, eval...) are unwrapped to their payloads; scripts the command
// runs are read (under the inspection roots only), parsed, hashed and
// merged into the tree; whatever is only known at run time is marked
// dynamic, never guessed. A last pass marks the shapes the built-in rules
// deny ([Shape]); policy.Decide then applies the built-in rules, the
// configured rules and the default and dynamic actions.
//
// Analysis never runs anything; it reads only the scripts a command names,
// within the roots it is given.
package analysis

import (
	"slices"
	"strings"

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
// is recorded in the tree (and policy.Decide denies it).
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
		opts:       opts,
		tree:       &Tree{Dialect: opts.Dialect, Nodes: []*Node{}, Scripts: []*Script{}, opts: opts},
		lang:       lang,
		funcs:      map[string]bool{},
		argRunners: map[string]bool{},
		aliases:    map[string]string{},
		tainted:    map[string]bool{},
		vars:       map[string]*varInfo{},
		files:      map[string]*fileResult{},
		active:     map[string]bool{},
		look:       map[[2]string]bool{},
		scripts:    map[string]int{},
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
	a.tree.markShapes()
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
	return cmdVars[name] || promptVars[name] || FuncVar(name) != "" || name == "BASH_ENV" || name == "ENV" ||
		name == "SHELLOPTS" || name == "BASHOPTS" || name == "LD_PRELOAD" || name == "LD_AUDIT" ||
		name == "DYLD_INSERT_LIBRARIES" || name == "GIT_CONFIG_PARAMETERS" ||
		name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_CONFIG" ||
		strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}
