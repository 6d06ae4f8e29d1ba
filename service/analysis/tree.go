package analysis

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Flag is a fact analysis found about a node; rules can require flags
// (AllFlags are the names a rule may use).
type Flag string

const (
	// FlagDynamic: what the node runs cannot be known before it runs (a
	// command name from an expansion, eval or bash -c of a run-time
	// string, code read from a pipe, a name shadowed by an alias or a
	// function, arithmetic evaluating an unknown value...).
	FlagDynamic Flag = "dynamic"
	// FlagDynamicArgs: an argument or redirection target is only known at
	// run time.
	FlagDynamicArgs Flag = "dynamic_args"
	// FlagWriteThenRun: the node runs a file the same command writes.
	FlagWriteThenRun Flag = "write_then_run"
	// FlagNonShellCode: the node runs code in another language (python -c,
	// node -e, a perl script...), which is hashed but not understood.
	FlagNonShellCode Flag = "non_shell_code"
	// FlagScriptOutsideRoots: the node runs a script that lies outside
	// the script inspection roots, or in the deny-read set: it is not read.
	FlagScriptOutsideRoots Flag = "script_outside_roots"
	// FlagScriptUnreadable: the node runs a script that is missing,
	// unreadable, too large, not a regular file, or whose location is not
	// known.
	FlagScriptUnreadable Flag = "script_unreadable"
	// FlagScriptInspected: the node runs a script that was read, judged
	// and is pinned.
	FlagScriptInspected Flag = "script_inspected"
)

// AllFlags lists every flag, in the order explain prints them.
var AllFlags = []Flag{FlagDynamic, FlagDynamicArgs, FlagWriteThenRun, FlagNonShellCode,
	FlagScriptOutsideRoots, FlagScriptUnreadable, FlagScriptInspected}

// Kinds of node.
const (
	KindCommand  = "command"  // a simple command (or a wrapper's payload)
	KindAssign   = "assign"   // assignments without a command: x=1, x=$(cmd)
	KindArith    = "arith"    // ((...)), let, for ((...))
	KindCompound = "compound" // a compound command carrying redirections
)

// A Tree is the analysis of one command text. It is not safe for
// concurrent use while policy.Decide fills in matches.
type Tree struct {
	// Dialect is the language the text was parsed in: bash or sh.
	Dialect string `json:"dialect"`
	// ParseError is set when the text (or text nested in it: a bash -c
	// string, a script) does not parse; the tree is then incomplete.
	ParseError *ParseError `json:"parse_error,omitempty"`
	// Nodes are in the order analysis met them; Parent indexes this list.
	Nodes []*Node `json:"nodes"`
	// Scripts are the files analysis read, in the order it read them.
	Scripts []*Script `json:"scripts"`
	// Truncated says analysis stopped at a limit (nodes, depth); the
	// nodes it did not reach are represented by a dynamic node.
	Truncated bool `json:"truncated,omitempty"`

	opts Options
	// units are the shell texts the analysis parsed (parse.go).
	units map[unitKey]*syntax.File
}

// A ParseError is text the parser could not read.
type ParseError struct {
	// Source is "" for the command text, else what the text came from:
	// "bash -c", "eval", a script's path, "stdin"...
	Source string `json:"source,omitempty"`
	Line   int    `json:"line"`
	Col    int    `json:"col"`
	Msg    string `json:"message"`
}

func (e *ParseError) Error() string {
	where := "command"
	if e.Source != "" {
		where = e.Source
	}
	return fmt.Sprintf("%s:%d:%d: %s", where, e.Line, e.Col, e.Msg)
}

// A Node is one command of the tree.
type Node struct {
	ID int `json:"id"`
	// Parent is the node this one is nested in (the wrapper of a payload,
	// the command whose word holds a substitution, the command running a
	// script); -1 at the top.
	Parent int `json:"parent"`
	// Via says how the parent leads here: "" at the top, a wrapper's name
	// ("sudo", "xargs", "find -exec"), "bash -c", "eval", "script",
	// "source", "here-doc", "stdin", "alias", "trap", "git alias"...
	Via  string `json:"via,omitempty"`
	Kind string `json:"kind"`
	// Source is where the node's text is: "" for the command text, else
	// as in ParseError. Line and Col are 1-based within it.
	Source string `json:"source,omitempty"`
	Line   int    `json:"line"`
	Col    int    `json:"col"`
	// Context lists the constructs around the node, outermost first:
	// pipeline, subshell, cmd_subst, proc_subst, function, background,
	// condition, loop, negated, coproc.
	Context []string `json:"context,omitempty"`

	// Name is argv[0] as the shell resolves it, a basename ("rm" for
	// /bin/rm); "" when it is only known at run time.
	Name string `json:"name,omitempty"`
	// Path is where Name resolves: through PATH, or against the working
	// directory for a name with a slash; "" for builtins, functions and
	// names not found.
	Path string `json:"path,omitempty"`
	// Builtin says Name is a shell builtin or keyword; Function that it is
	// a function defined in the text.
	Builtin  bool     `json:"builtin,omitempty"`
	Function bool     `json:"function,omitempty"`
	Argv     []Arg    `json:"argv,omitempty"`
	Assigns  []string `json:"assigns,omitempty"`
	Redirs   []Redir  `json:"redirs,omitempty"`
	Flags    []Flag   `json:"flags,omitempty"`
	// Notes explain flags and unwrapping in words.
	Notes []string `json:"notes,omitempty"`
	// Scripts index Tree.Scripts: the files this node runs or sources.
	Scripts []int `json:"scripts,omitempty"`

	// Matches are the rules that matched, filled in by policy.Decide.
	Matches []Match `json:"matches,omitempty"`
	// Action is the node's own decision, filled in by policy.Decide.
	Action string `json:"action,omitempty"`

	// codeFrom are nodes whose output becomes this node's code: the
	// commands feeding a shell's stdin, in a substitution that is eval'd
	// or passed to bash -c, in a process substitution run as a script.
	codeFrom []int
	// stdinFrom are the earlier commands of this node's pipeline, whose
	// output is its stdin.
	stdinFrom []int
	// pipeline identifies the pipeline the node is an element of (0: none).
	pipeline int
	// topLevel: not nested in a wrapper, script, string, substitution or
	// function body.
	topLevel bool
	// shellReadsStdin: the node is a shell or interpreter whose code is its
	// stdin.
	runsCode bool
	// findDelete: find ... -delete.
	findDelete bool
	// funcSelfPipe: function definition whose body runs itself in a
	// background pipeline.
	funcSelfPipe bool
	// cwds are the working directories the node may run in.
	cwds []string
	// writesTo are the files the node writes (cp, tee, curl -o...).
	writesTo []string
	// writtenBy are the nodes that write the file this node runs.
	writtenBy []int
	// gitPush describes a git push.
	gitPush *gitPush
	// out is what the node writes to stdout, when known (echo, cat of a
	// here-document).
	out *Arg
	// dynamicWhy is the note that came with the dynamic flag.
	dynamicWhy string
	// script is the innermost script file the node comes from.
	script string
	// shapes are the built-in rules' shapes the node has (markShapes).
	shapes []Shape
}

// gitPush is what a git push does to which branches.
type gitPush struct {
	force, delete, plusRef, all bool
	refs                        []Arg
	branch                      string // the current branch
	branchKnown                 bool
}

// An Arg is one word of a command after expansion.
type Arg struct {
	// Value is the static value; for a dynamic word, the source text as
	// written.
	Value string `json:"value"`
	// Dynamic says the value is only known at run time.
	Dynamic bool `json:"dynamic,omitempty"`
	// Glob says the word has unquoted pattern characters the shell will
	// expand against file names.
	Glob bool `json:"glob,omitempty"`
	// ifEmpty is the value the word would have if every unknown
	// expansion in it were empty (for rm -rf "$X/"), valid when Dynamic
	// and hasIfEmpty.
	ifEmpty    string
	hasIfEmpty bool
	// subs are the substitutions in the word.
	subs []int
	// maybe, for a dynamic word whose only unknown parts are variables the
	// text assigns literal values, are the values it may take (one per
	// combination of those assignments); nil when not known. Analysis is
	// not flow-sensitive, so it never resolves the word to one of them: the
	// shapes of harm look at every one (f=~/.netrc; curl -d @"$f").
	maybe []string
}

// A Redir is one redirection of a node.
type Redir struct {
	Op string `json:"op"`
	// Fd is the file descriptor written before the operator ("2" in 2>),
	// or "".
	Fd string `json:"fd,omitempty"`
	// Target is the file (resolved against the working directory when
	// static), or the source text when dynamic.
	Target  string `json:"target"`
	Dynamic bool   `json:"dynamic,omitempty"`
	// maybe are the values a dynamic target may take (Arg.maybe).
	maybe []string
}

// A Script is a file analysis read.
type Script struct {
	// Path is the file, symlinks resolved.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Lang is bash or sh for a shell script analysed as part of the tree;
	// another language (python, node, perl...) is hashed, not analysed.
	Lang string `json:"lang"`
	// Exec says the command runs the file by path, so its pinned copy must
	// be executable.
	Exec bool `json:"exec,omitempty"`

	data []byte
	// code are the shell texts a task runner's file hands to a shell
	// (Makefile recipes, package.json scripts), for the credential check.
	code []string
}

// Data returns the bytes that were read (and judged).
func (s *Script) Data() []byte { return s.data }

// A Match is one rule (or setting) that applied to a node, recorded by
// policy.Decide.
type Match struct {
	Rule string `json:"rule"`
	// Origin is builtin, managed, user, default_action or dynamic_action.
	Origin string `json:"origin"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// Has reports whether n carries flag f.
func (n *Node) Has(f Flag) bool {
	for _, g := range n.Flags {
		if g == f {
			return true
		}
	}
	return false
}

// InScript returns the innermost script file n comes from, "" for a
// command of the text itself.
func (n *Node) InScript() string { return n.script }

// DynamicWhy returns the note that came with n's dynamic flag, "" when
// there is none.
func (n *Node) DynamicWhy() string { return n.dynamicWhy }

// TopLevel reports whether n is a command of the text itself: not inside
// a wrapper's payload, a script, a shell string, a command or process
// substitution, or a function body.
func (n *Node) TopLevel() bool { return n.topLevel }

// Text returns argv as a shell-like line, for messages.
func (n *Node) Text() string {
	if len(n.Argv) == 0 {
		switch n.Kind {
		case KindAssign:
			return strings.Join(n.Assigns, " ")
		case KindArith:
			return n.Name
		}
		return n.Name
	}
	parts := make([]string, len(n.Argv))
	for i, a := range n.Argv {
		parts[i] = quoteArg(a)
	}
	s := strings.Join(parts, " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// quoteArg renders a for Text.
func quoteArg(a Arg) string {
	if a.Dynamic || a.Glob {
		return a.Value
	}
	if a.Value == "" {
		return "''"
	}
	if strings.ContainsAny(a.Value, " \t\n'\"\\$`;&|<>(){}*?[]#~!") {
		return "'" + strings.ReplaceAll(a.Value, "'", `'\''`) + "'"
	}
	return a.Value
}

// Pos returns "source:line:col" (without a source for the command text).
func (n *Node) Pos() string {
	if n.Source == "" {
		return fmt.Sprintf("%d:%d", n.Line, n.Col)
	}
	return fmt.Sprintf("%s:%d:%d", n.Source, n.Line, n.Col)
}

// ResolvedCommands returns each distinct command of the tree, in order: the
// resolved path when there is one, else the name; "<dynamic>" for a command
// only known at run time.
func (t *Tree) ResolvedCommands() []string {
	out := []string{}
	seen := map[string]bool{}
	for _, n := range t.Nodes {
		if n.Kind != KindCommand {
			continue
		}
		s := n.Path
		if s == "" {
			s = n.Name
		}
		if s == "" {
			s = "<dynamic>"
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Dynamic returns the nodes flagged dynamic: code analysis could not read.
func (t *Tree) Dynamic() []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if n.Has(FlagDynamic) {
			out = append(out, n)
		}
	}
	return out
}
