package analysis

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
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// CodeCredentialInArgv is the blocked_by code of a credential on a
// command line. No setting relaxes it.
const CodeCredentialInArgv = "credential_in_argv"

// credDirEnv names the directory of an execution's credential files.
const credDirEnv = "GATEHOUSE_CRED_DIR"

// credDirPath is where credential files are inside the sandbox.
const credDirPath = "/run/gatehouse/cred"

// credPrefixRE matches the variables that carry referenced credentials.
var credPrefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^GATEHOUSE_CRED_[A-Z0-9_]+$`) })

// CredentialOptions describe the credentials a command gets.
type CredentialOptions struct {
	// Dialect is bash or sh.
	Dialect string
	// Vars are the variables filled with a credential, besides
	// GATEHOUSE_CRED_<ID> (always one).
	Vars []string
	// Stdin is the call's standard input; when a shell in the text reads
	// its code from there (bash, bash -s), it is checked too.
	Stdin string
}

// A CredentialUse is a credential that would be on a command line.
type CredentialUse struct {
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
func (u *CredentialUse) Reason() string {
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
	lang  syntax.LangVariant
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

// CredentialInArgv returns the first credential that text, or a pinned
// shell script, would put on a command line; nil when there is none. Text
// that does not parse yields nil (analysis denies it anyway).
func CredentialInArgv(text string, scripts []*Script, opts CredentialOptions) *CredentialUse {
	lang, ok := LangOf(opts.Dialect)
	if !ok {
		lang = syntax.LangBash
	}
	c := &credChecker{lang: lang, val: map[string]bool{}, dir: map[string]bool{credDirEnv: true}, funcs: map[string]bool{},
		gitKeys: map[string][]string{}, written: map[string]*syntax.Word{}}
	for _, v := range opts.Vars {
		c.val[v] = true
	}
	c.add("", text, 0)
	for _, s := range scripts {
		switch {
		case s.Lang == "bash" || s.Lang == "sh":
			c.add(s.Path, string(s.Data()), 0)
		case len(s.code) > 0:
			// A task runner's file: the recipes or scripts it runs.
			for _, code := range s.code {
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
			code = code || gitCodeKey(k, p.code) || strings.HasPrefix(k, "alias.") && strings.HasPrefix(p.code, "!")
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
			return &CredentialUse{Var: v, Command: "a script the command writes", How: "shell code", Line: int(w.Pos().Line()), Col: int(w.Pos().Col())}
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
			code = code || gitCodeKey(k, "!") || strings.HasPrefix(k, "alias.")
		}
		return code
	}
	return cmdVars[name] || credFuncVar(name) != "" || name == "GIT_CONFIG_PARAMETERS"
}

// add parses text as a unit, with the shell code it holds (sh -c strings,
// eval of static text, quoted here-documents fed to a shell).
func (c *credChecker) add(src, text string, depth int) {
	if len(c.units) >= credMaxUnits || depth > credMaxDepth {
		return
	}
	f, err := syntax.NewParser(syntax.Variant(c.lang)).Parse(strings.NewReader(text), "")
	if err != nil {
		return
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

// propagate taints what is assigned from a tainted value; it reports
// whether anything changed.
func (c *credChecker) propagate() bool {
	changed := false
	set := func(m map[string]bool, name string) {
		if name != "" && !m[name] {
			m[name] = true
			changed = true
		}
	}
	assign := func(name string, w *syntax.Word) {
		if w == nil {
			return
		}
		if c.wordVal(w) != "" {
			set(c.val, name)
		}
		if c.wordDir(w) {
			set(c.dir, name)
		}
	}
	for _, u := range c.units {
		syntax.Walk(u.file, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Assign:
				if n.Name == nil {
					return true
				}
				assign(n.Name.Value, n.Value)
				if n.Array != nil {
					for _, e := range n.Array.Elems {
						assign(n.Name.Value, e.Value)
					}
				}
			case *syntax.DeclClause:
				nameref := n.Variant != nil && n.Variant.Value == "nameref"
				for _, a := range n.Args {
					if a.Naked && a.Name == nil && a.Value != nil && strings.HasPrefix(a.Value.Lit(), "-") && strings.Contains(a.Value.Lit(), "n") {
						nameref = true
					}
				}
				for _, a := range n.Args {
					if nameref && a.Name != nil && a.Value != nil {
						target := a.Value.Lit()
						if c.val[target] {
							set(c.val, a.Name.Value)
						}
						if c.dir[target] {
							set(c.dir, a.Name.Value)
						}
					}
				}
			case *syntax.ParamExp:
				if n.Param != nil && n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
					assign(n.Param.Value, n.Exp.Word)
				}
			case *syntax.ForClause:
				if it, ok := n.Loop.(*syntax.WordIter); ok && it.Name != nil {
					for _, w := range it.Items {
						assign(it.Name.Value, w)
					}
				}
			case *syntax.Stmt:
				c.propagateStmt(n, set)
				// while read X; do ...; done < "$GATEHOUSE_CRED_DIR/f"
				if _, simple := n.Cmd.(*syntax.CallExpr); !simple && c.inputVal(n) != "" {
					for _, name := range credReadsIn(n) {
						set(c.val, name)
					}
				}
			case *syntax.BinaryCmd:
				// printf %s "$T" | read X, ... | while read X: the input
				// of the reads is tainted.
				if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && c.stmtVal(n.X) != "" {
					for _, name := range credReadsIn(n.Y) {
						set(c.val, name)
					}
				}
			}
			return true
		})
	}
	return changed
}

// propagateStmt handles the commands that assign: read and mapfile from a
// tainted input, printf -v, and function calls, set and source given a
// tainted argument (positional parameters).
func (c *credChecker) propagateStmt(st *syntax.Stmt, set func(map[string]bool, string)) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return
	}
	name := credCmdName(call.Args[0])
	switch {
	case name == "read" || name == "mapfile" || name == "readarray":
		if c.inputVal(st) != "" {
			for _, v := range credReadNames(call) {
				set(c.val, v)
			}
		}
	case name == "printf":
		for i, a := range call.Args {
			if a.Lit() == "-v" && i+1 < len(call.Args) {
				for _, b := range call.Args[i+2:] {
					if c.wordVal(b) != "" {
						set(c.val, call.Args[i+1].Lit())
					}
				}
			}
		}
	case c.funcs[name] || name == "set" || name == "source" || name == ".":
		if !c.pos {
			for _, a := range call.Args[1:] {
				if c.wordVal(a) != "" {
					c.pos = true
					set(c.val, "@") // records the change
				}
			}
		}
	}
}

// credReadsIn returns the variables the reads in n assign.
func credReadsIn(n syntax.Node) []string {
	var out []string
	syntax.Walk(n, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			out = append(out, credReadNames(call)...)
		}
		return true
	})
	return out
}

// credReadNames returns the variables read or mapfile assign.
func credReadNames(call *syntax.CallExpr) []string {
	if len(call.Args) == 0 {
		return nil
	}
	withValue := "pdnNtui" // read's options that take a value
	switch credCmdName(call.Args[0]) {
	case "read":
	case "mapfile", "readarray":
		withValue = "dnOsuCc"
	default:
		return nil
	}
	var out []string
	skip := false
	for _, a := range call.Args[1:] {
		s := a.Lit()
		switch {
		case skip:
			skip = false
		case strings.HasPrefix(s, "-"):
			if len(s) == 2 && strings.ContainsAny(s[1:], withValue) {
				skip = true
			}
			if strings.HasPrefix(s, "-a") && len(s) > 2 {
				out = append(out, s[2:])
			}
		case credVarRE().MatchString(s):
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = []string{"REPLY", "MAPFILE"}
	}
	return out
}

var credVarRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// inputVal returns a tainted variable that reaches st's standard input
// through a here-string, a here-document, or a file: a process
// substitution using one, or a file in the credential directory.
func (c *credChecker) inputVal(st *syntax.Stmt) string {
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.WordHdoc:
			if v := c.wordVal(r.Word); v != "" {
				return v
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				if v := c.wordVal(r.Hdoc); v != "" {
					return v
				}
			}
		case syntax.RdrIn:
			if v := c.wordVal(r.Word); v != "" {
				return v
			}
			if c.wordDir(r.Word) {
				return credDirEnv
			}
			for _, p := range r.Word.Parts {
				if ps, ok := p.(*syntax.ProcSubst); ok {
					if v := c.stmtsVal(ps.Stmts); v != "" {
						return v
					}
				}
			}
		}
	}
	return ""
}

// isTainted reports whether the parameter name carries a credential.
func (c *credChecker) isTainted(name string) bool {
	if c.val[name] || credPrefixRE().MatchString(name) && name != credDirEnv {
		return true
	}
	if c.pos && (name == "@" || name == "*" || len(name) == 1 && name[0] >= '1' && name[0] <= '9') {
		return true
	}
	return false
}

// paramVal returns the tainted variable a parameter expansion yields the
// value of, or "".
func (c *credChecker) paramVal(p *syntax.ParamExp) string {
	if p.Param == nil {
		return ""
	}
	if p.Length || p.Names != 0 {
		return "" // ${#T}, ${!T*}: a length or names, not the value
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AlternateUnset || p.Exp.Op == syntax.AlternateUnsetOrNull) {
		return c.wordVal(p.Exp.Word) // ${T:+word} yields word, not T
	}
	if c.isTainted(p.Param.Value) {
		return p.Param.Value
	}
	if p.Exp != nil {
		return c.wordVal(p.Exp.Word)
	}
	return ""
}

// wordVal returns a tainted variable whose value (or part of it) the word
// expands to, or "".
func (c *credChecker) wordVal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	return c.partsVal(w.Parts)
}

func (c *credChecker) partsVal(parts []syntax.WordPart) string {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.ParamExp:
			if v := c.paramVal(p); v != "" {
				return v
			}
		case *syntax.DblQuoted:
			if v := c.partsVal(p.Parts); v != "" {
				return v
			}
		case *syntax.CmdSubst:
			if v := c.stmtsVal(p.Stmts); v != "" {
				return v
			}
		}
	}
	return ""
}

// wordDir reports whether the word names the credential directory.
func (c *credChecker) wordDir(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param != nil && c.dir[n.Param.Value] {
				found = true
			}
		case *syntax.Lit:
			if strings.Contains(n.Value, credDirPath) {
				found = true
			}
		case *syntax.SglQuoted:
			if strings.Contains(n.Value, credDirPath) {
				found = true
			}
		}
		return !found
	})
	return found
}

// stmtsVal returns a tainted variable (or the credential directory) the
// commands use, so that their output may hold a credential; "" when none.
func (c *credChecker) stmtsVal(stmts []*syntax.Stmt) string {
	found := ""
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.ParamExp:
				if v := c.paramVal(n); v != "" {
					found = v
				} else if n.Param != nil && c.dir[n.Param.Value] && !n.Length {
					found = n.Param.Value
				}
			case *syntax.Lit:
				if strings.Contains(n.Value, credDirPath) {
					found = credDirEnv
				}
			}
			return found == ""
		})
		if found != "" {
			break
		}
	}
	return found
}

func (c *credChecker) stmtVal(st *syntax.Stmt) string {
	if st == nil {
		return ""
	}
	return c.stmtsVal([]*syntax.Stmt{st})
}

// check returns the first credential unit u puts on a command line.
func (c *credChecker) check(u *credUnit) *CredentialUse {
	var use *CredentialUse
	at := func(n syntax.Node, v, cmd, how string) {
		if use == nil {
			use = &CredentialUse{Var: v, Command: cmd, How: how, Source: u.src, Line: int(n.Pos().Line()), Col: int(n.Pos().Col())}
		}
	}
	syntax.Walk(u.file, func(n syntax.Node) bool {
		if use != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign:
			// GIT_SSH_COMMAND="ssh -i $T": the value is a command line.
			if n.Name != nil && n.Value != nil && c.codeValue(n.Name.Value) {
				if v := c.wordVal(n.Value); v != "" {
					at(n.Value, v, "$"+n.Name.Value, "code variable")
				}
			}
		case *syntax.Stmt:
			if call, ok := n.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				c.checkCall(n, call.Args, at)
			}
		case *syntax.BinaryCmd:
			if n.Op != syntax.Pipe && n.Op != syntax.PipeAll {
				return true
			}
			// echo "$T" | xargs curl, echo "curl $T" | sh
			if call, ok := n.Y.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				name := credCmdName(call.Args[0])
				if credCodeReader(name) {
					if v := c.stmtVal(n.X); v != "" {
						how := "xargs"
						if credIsShell(name) {
							how = "shell code"
						}
						at(call.Args[0], v, name, how)
					}
				}
			}
		}
		return true
	})
	return use
}

// checkCall checks one simple command's words.
func (c *credChecker) checkCall(st *syntax.Stmt, args []*syntax.Word, at func(syntax.Node, string, string, string)) {
	name := credCmdName(args[0])
	switch {
	case name == "exec" || name == "command":
		// The rest is a command of its own.
		rest := args[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0].Lit(), "-") {
			if rest[0].Lit() == "-a" && len(rest) > 1 {
				rest = rest[1:]
			}
			if rest[0].Lit() == "-v" || rest[0].Lit() == "-V" {
				return // command -v: a lookup, nothing runs
			}
			rest = rest[1:]
		}
		if len(rest) > 0 {
			c.checkCall(st, rest, at)
		}
		return
	case name == "eval" || name == "trap" || name == "alias":
		for _, a := range args[1:] {
			if v := c.wordVal(a); v != "" {
				at(a, v, name, name)
				return
			}
		}
		return
	case name == "source" || name == ".":
		// source <(printf 'curl %s' "$T") runs code built from it.
		for _, a := range args[1:] {
			for _, p := range a.Parts {
				if ps, ok := p.(*syntax.ProcSubst); ok {
					if v := c.stmtsVal(ps.Stmts); v != "" {
						at(a, v, name, "shell code")
						return
					}
				}
			}
		}
		return
	case name != "" && !strings.Contains(name, "/") && (c.funcs[name] || credBuiltins[name]):
		return
	}
	if name == "" {
		name = credWordText(args[0])
	}
	// Words of an external command: a parameter expansion, or a command
	// substitution whose output may hold a credential. A process
	// substitution passes a file name, not the value.
	for _, a := range args {
		if v := c.wordVal(a); v != "" {
			how := "argument"
			if c.viaSubst(a) {
				how = "command substitution"
			}
			at(a, v, name, how)
			return
		}
	}
	// xargs <<<"$T", sh <<<"curl $T", sh <<EOF ... $T ... EOF
	if credCodeReader(name) {
		if v := c.inputVal(st); v != "" {
			how := "xargs"
			if credIsShell(name) {
				how = "shell code"
			}
			at(args[0], v, name, how)
		}
	}
}

// viaSubst reports whether the word carries a credential only through a
// command substitution (its output).
func (c *credChecker) viaSubst(w *syntax.Word) bool {
	var direct func(parts []syntax.WordPart) string
	direct = func(parts []syntax.WordPart) string {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.ParamExp:
				if v := c.paramVal(p); v != "" {
					return v
				}
			case *syntax.DblQuoted:
				if v := direct(p.Parts); v != "" {
					return v
				}
			}
		}
		return ""
	}
	return direct(w.Parts) == ""
}

// credCmdName returns the command name a word holds, as written (a path for
// /usr/bin/curl); "" when it is only known at run time.
func credCmdName(w *syntax.Word) string {
	s, ok := credStaticWord(w)
	if !ok {
		return ""
	}
	return s
}

func credBaseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// credStaticWord returns the value of a word without expansions.
func credStaticWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var add func(parts []syntax.WordPart) bool
	add = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(credUnescape(strings.ReplaceAll(p.Value, "\\\n", "")))
			case *syntax.SglQuoted:
				if p.Dollar {
					b.WriteString(ansiC(p.Value))
				} else {
					b.WriteString(p.Value)
				}
			case *syntax.DblQuoted:
				if p.Dollar || !add(p.Parts) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	if !add(w.Parts) {
		return "", false
	}
	return b.String(), true
}

func credUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// credWordText is the word as written, for messages.
func credWordText(w *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return b.String()
}

var credShellNames = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "busybox"}

func credIsShell(name string) bool { return slices.Contains(credShellNames, credBaseName(name)) }

// credCodeReader reports whether a command turns its input into arguments or
// code.
func credCodeReader(name string) bool {
	b := credBaseName(name)
	return b == "xargs" || b == "parallel" || credIsShell(b)
}

// credBuiltins run inside the shell: their arguments are on no command
// line. eval, trap, exec and command are handled apart.
var credBuiltins = map[string]bool{
	":": true, ".": true, "[": true, "bg": true, "bind": true, "break": true,
	"builtin": true, "caller": true, "cd": true, "compgen": true, "complete": true, "compopt": true,
	"continue": true, "declare": true, "dirs": true, "disown": true, "echo": true, "enable": true,
	"exit": true, "export": true, "false": true, "fc": true, "fg": true, "getopts": true, "hash": true,
	"help": true, "history": true, "jobs": true, "kill": true, "let": true, "local": true, "logout": true,
	"mapfile": true, "popd": true, "printf": true, "pushd": true, "pwd": true, "read": true,
	"readarray": true, "readonly": true, "return": true, "set": true, "shift": true, "shopt": true,
	"suspend": true, "test": true, "times": true, "true": true, "type": true,
	"typeset": true, "ulimit": true, "umask": true, "unalias": true, "unset": true, "wait": true,
}
