package argvcred

// This file finds credentials on command lines (credential_in_argv, a
// hard denial). A process's arguments can be read by every process of the
// user (/proc/PID/cmdline, ps), so a credential must reach a command only
// through its environment, a file, or its standard input.
//
// A variable carries a credential when it is one of the variables
// Gatehouse fills from the keychain (the mapped names, GATEHOUSE_CRED_*,
// the agent's variables that reference one), or is assigned from one:
// plain, prefix and declaration assignments (export, declare, local,
// readonly, typeset, nameref), ${X:=...}, for loops, read and mapfile from a
// here-string, here-document, pipe or file holding one, printf -v. Taint
// is followed flow-insensitively across the text, the shell code it
// passes to sh -c, bash -c and eval, here-documents fed to a shell, and
// the scripts analysis pinned: an assignment anywhere taints the name
// everywhere. Positional parameters are tainted when a function, set or
// source is given a credential. $GATEHOUSE_CRED_DIR names the credential
// files: what a command substitution reads from it is a credential too.
//
// It is denied when such a value would become an argument of a process:
// a word of an external command (argv[0] included), directly or through a
// command substitution; the code of eval or trap; the input of xargs or
// of a shell reading code; an unquoted here-document fed to a shell; the
// value of a variable programs run as a command line (GIT_SSH_COMMAND,
// EDITOR, an exported function, a git command setting). Deferred code
// (credentials_deferred.go) is checked like the text: trap strings, those
// variables' static values, prompts, scripts the text writes and runs,
// and the recipes and scripts of task-runner files.
// Builtins (echo, printf, read, test...), assignments, redirections,
// here-strings and process substitutions keep the value off every
// command line, and are allowed.

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// Code is the blocked_by code of a credential on a
// command line. No setting relaxes it.
const Code = "credential_in_argv"

// credDirEnv names the directory of an execution's credential files.
const credDirEnv = "GATEHOUSE_CRED_DIR"

// credDirPath is where credential files are inside the sandbox.
const credDirPath = "/run/gatehouse/cred"

// credPrefixRE matches the variables that carry referenced credentials.
var credPrefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^GATEHOUSE_CRED_[A-Z0-9_]+$`) })

// Options describe the credentials a command gets.
type Options struct {
	// Dialect is bash or sh.
	Dialect string
	// Vars are the variables filled with a credential, besides
	// GATEHOUSE_CRED_<ID> (always one).
	Vars []string
	// Stdin is the call's standard input; when a shell in the text reads
	// its code from there (bash, bash -s), it is checked too.
	Stdin string
	// Tree is the analysis of the text, when there is one: the units it
	// parsed are read from it, not parsed again.
	Tree *analysis.Tree
}

// A Use is a credential that would be on a command line.
type Use struct {
	// Var is the variable carrying the credential, without "$".
	Var string `json:"var"`
	// Command is the command whose argument list it would be in.
	Command string `json:"command"`
	// How says which way: "argument", "command substitution", "eval",
	// "trap", "xargs", "shell code", "code variable" (Command is then
	// the variable whose value programs run: $GIT_SSH_COMMAND...).
	How string `json:"how"`
	// Source is where the text is: "" for the command, a script's path,
	// "bash -c", "eval", "here-document" or "stdin"; Line and Col are
	// within it.
	Source string `json:"source,omitempty"`
	Line   int    `json:"line"`
	Col    int    `json:"col"`
}

// Reason explains the denial, naming the variable, the command and the
// sanctioned forms.
func (u *Use) Reason() string {
	where := ""
	if u.Source != "" {
		where = " (" + u.Source + ")"
	}
	var what string
	switch u.How {
	case "command substitution":
		what = fmt.Sprintf("the output of a command substitution using $%s would be an argument of %s%s", u.Var, u.Command, where)
	case "eval", "trap":
		what = fmt.Sprintf("$%s would be in the code %s runs%s, and so on a command line", u.Var, u.How, where)
	case "code variable":
		what = fmt.Sprintf("$%s would be in %s, whose value programs run as a command line%s", u.Var, u.Command, where)
	case "xargs":
		what = fmt.Sprintf("$%s would reach %s through its input, which it turns into arguments%s", u.Var, u.Command, where)
	case "shell code":
		what = fmt.Sprintf("$%s would be expanded into the code %s reads%s, and so on a command line", u.Var, u.Command, where)
	default:
		what = fmt.Sprintf("$%s would be an argument of %s%s, where other processes can read it", u.Var, u.Command, where)
	}
	return "credential on a command line: " + what + ". Pass it without argv: as an assignment " +
		"(GH_TOKEN=$" + u.Var + " gh api ...), a redirection or here-string (curl -H @- <<<\"Authorization: Bearer $" + u.Var + "\"), " +
		"or from a builtin such as printf or echo writing into a pipe or file (curl -H @<(printf 'Authorization: Bearer %s' \"$" + u.Var + "\"))"
}

// Limits of the search.
const (
	credMaxUnits = 64
	credMaxDepth = 4
	credMaxPass  = 16
)

// credUnit is one piece of shell code: the text, a script, a string run by
// a shell.
type credUnit struct {
	src  string
	file *syntax.File
}

type credChecker struct {
	lang syntax.LangVariant
	// tree is the analysis of the text, whose parsed units are reused.
	tree  *analysis.Tree
	units []*credUnit
	// val are the variables carrying a credential; dir those carrying the
	// credential directory.
	val, dir map[string]bool
	// pos says the positional parameters may carry one.
	pos   bool
	funcs map[string]bool
	// stdinCode says a shell in the command text reads its code from
	// standard input.
	stdinCode bool
	// gitKeys are the static values given to GIT_CONFIG_KEY_<n>, by n;
	// gitValues the GIT_CONFIG_VALUE_<n> code waiting for its key.
	gitKeys   map[string][]string
	gitValues []credPending
	// written are the files the text writes with a here-document, echo or
	// printf, by path as written (cleaned); runs are the words of the ones
	// it then runs whose content is expanded when written.
	written map[string]*syntax.Word
	runs    []*syntax.Word
}

// credPending is deferred code waiting for the facts that say it runs.
type credPending struct {
	idx, code string
	depth     int
}

// Find returns the first credential that text, or a pinned
// shell script, would put on a command line; nil when there is none. Text
// that does not parse yields nil (analysis denies it anyway).
func Find(text string, scripts []*analysis.Script, opts Options) *Use {
	lang, ok := analysis.LangOf(opts.Dialect)
	if !ok {
		lang = syntax.LangBash
	}
	c := &credChecker{lang: lang, tree: opts.Tree, val: map[string]bool{}, dir: map[string]bool{credDirEnv: true}, funcs: map[string]bool{},
		gitKeys: map[string][]string{}, written: map[string]*syntax.Word{}}
	for _, v := range opts.Vars {
		c.val[v] = true
	}
	c.add("", text, 0)
	for _, s := range scripts {
		switch {
		case s.Lang == "bash" || s.Lang == "sh":
			c.add(s.Path, string(s.Data()), 0)
		case len(s.RunnerCode()) > 0:
			// A task runner's file: the recipes or scripts it runs.
			for _, code := range s.RunnerCode() {
				c.add(s.Path, code, 1)
			}
		}
	}
	// GIT_CONFIG_VALUE_<n> is code when its key is a command setting, or
	// not known.
	for _, p := range c.gitValues {
		keys := c.gitKeys[p.idx]
		code := len(keys) == 0
		for _, k := range keys {
			k = strings.ToLower(k)
			code = code || analysis.GitCodeKey(k, p.code) || strings.HasPrefix(k, "alias.") && strings.HasPrefix(p.code, "!")
		}
		if code {
			c.add("GIT_CONFIG_VALUE_"+p.idx, strings.TrimPrefix(p.code, "!"), p.depth)
		}
	}
	if opts.Stdin != "" && c.stdinCode {
		c.add("stdin", opts.Stdin, 0)
	}
	for _, u := range c.units {
		syntax.Walk(u.file, func(n syntax.Node) bool {
			if f, ok := n.(*syntax.FuncDecl); ok && f.Name != nil {
				c.funcs[f.Name.Value] = true
			}
			return true
		})
	}
	for range credMaxPass {
		if !c.propagate() {
			break
		}
	}
	for _, u := range c.units {
		if use := c.check(u); use != nil {
			return use
		}
	}
	// A script the text writes with a credential expanded into it, then
	// runs.
	for _, w := range c.runs {
		if v := c.wordVal(w); v != "" {
			return &Use{Var: v, Command: "a script the command writes", How: "shell code", Line: int(w.Pos().Line()), Col: int(w.Pos().Col())}
		}
	}
	return nil
}

// codeValue reports whether a credential expanded into the variable name
// ends up in a command line: the variables programs run, and a git
// setting's value when the setting is a command (or its key is not known).
func (c *credChecker) codeValue(name string) bool {
	if idx, ok := strings.CutPrefix(name, "GIT_CONFIG_VALUE_"); ok {
		keys := c.gitKeys[idx]
		code := len(keys) == 0
		for _, k := range keys {
			k = strings.ToLower(k)
			code = code || analysis.GitCodeKey(k, "!") || strings.HasPrefix(k, "alias.")
		}
		return code
	}
	return analysis.CommandVar(name) || analysis.FuncVar(name) != "" || name == "GIT_CONFIG_PARAMETERS"
}

// add parses text as a unit, with the shell code it holds (sh -c strings,
// eval of static text, quoted here-documents fed to a shell).
func (c *credChecker) add(src, text string, depth int) {
	if len(c.units) >= credMaxUnits || depth > credMaxDepth {
		return
	}
	f := c.tree.ParsedUnit(c.lang, text)
	if f == nil {
		var err error
		if f, err = analysis.ParseShell(c.lang, text); err != nil {
			return
		}
	}
	c.addFile(src, f, depth)
}

// addFile adds the parsed unit f and the code it holds.
func (c *credChecker) addFile(src string, f *syntax.File, depth int) {
	if len(c.units) >= credMaxUnits || depth > credMaxDepth {
		return
	}
	c.units = append(c.units, &credUnit{src: src, file: f})
	c.collectWrites(f)
	syntax.Walk(f, func(n syntax.Node) bool {
		if d, ok := n.(*syntax.DeclClause); ok {
			for _, as := range d.Args {
				if as.Name != nil && as.Value != nil {
					c.deferred(as.Name.Value, as.Value, depth)
				}
			}
			return true
		}
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok {
			return true
		}
		for _, as := range call.Assigns {
			if as.Name != nil && as.Value != nil {
				c.deferred(as.Name.Value, as.Value, depth)
			}
			if as.Name != nil && as.Array != nil && credCodeVar(as.Name.Value) {
				for _, e := range as.Array.Elems {
					c.deferred(as.Name.Value, e.Value, depth)
				}
			}
		}
		if len(call.Args) == 0 {
			return true
		}
		name := credCmdName(call.Args[0])
		switch credBaseName(name) {
		case "trap":
			// trap CODE SIG...: the code runs later, in this shell.
			args := call.Args[1:]
			if len(args) > 0 && args[0].Lit() == "--" {
				args = args[1:]
			}
			if len(args) >= 2 {
				if code, ok := credStaticWord(args[0]); ok && code != "-" {
					c.add("trap", code, depth+1)
				}
			}
		case "env", "sudo", "doas":
			// env NAME=VALUE...: code handed to the command's environment.
			for _, a := range call.Args[1:] {
				s, ok := credStaticWord(a)
				if !ok {
					continue
				}
				if k, v, ok := strings.Cut(s, "="); ok && k != "" && !strings.HasPrefix(k, "-") {
					c.deferredText(k, v, depth)
				}
			}
		}
		c.runsWritten(call, depth)
		if name == "eval" {
			var parts []string
			for _, a := range call.Args[1:] {
				s, ok := credStaticWord(a)
				if !ok {
					return true
				}
				parts = append(parts, s)
			}
			c.add("eval", strings.Join(parts, " "), depth+1)
			return true
		}
		// sh -c CODE, also behind wrappers (sudo sh -c, find -exec sh -c).
		shell := credIsShell(name)
		for i, a := range call.Args {
			s, _ := credStaticWord(a)
			if i > 0 && shell && i+1 < len(call.Args) && (s == "-c" || strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, "c")) {
				if code, ok := credStaticWord(call.Args[i+1]); ok {
					c.add(credBaseName(name)+" -c", code, depth+1)
				}
			}
			if credIsShell(credBaseName(s)) {
				shell = true
			}
		}
		// A shell without operands reads its code from standard input.
		if src == "" && credIsShell(name) && len(st.Redirs) == 0 {
			operands := false
			for _, a := range call.Args[1:] {
				if s, _ := credStaticWord(a); !strings.HasPrefix(s, "-") || s == "-c" {
					operands = true // a script, or -c CODE
				}
			}
			if !operands {
				c.stdinCode = true
			}
		}
		// A shell reading a quoted here-document runs it as code.
		if credIsShell(name) {
			for _, r := range st.Redirs {
				if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
					if code, ok := credStaticWord(r.Hdoc); ok {
						c.add("here-document", code, depth+1)
					}
				}
			}
		}
		return true
	})
}
