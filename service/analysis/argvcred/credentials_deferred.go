package argvcred

// This file finds the code a command hands on to run later or elsewhere,
// for the credential check: trap strings, variables whose values programs
// run (GIT_SSH_COMMAND, PAGER, PROMPT_COMMAND, PS4, exported functions,
// git settings from the environment), and scripts the command writes and
// then runs. Each is checked like the command itself.

import (
	"encoding/json"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// credCodeVar reports whether programs run the value of the variable name
// as code.
func credCodeVar(name string) bool {
	return analysis.CommandVar(name) || analysis.PromptVar(name) || name == "GIT_CONFIG_PARAMETERS" ||
		strings.HasPrefix(name, "GIT_CONFIG_VALUE_") || analysis.FuncVar(name) != ""
}

// deferred handles the assignment name=w: a static value that is code is
// added as a unit.
func (c *credChecker) deferred(name string, w *syntax.Word, depth int) {
	if w == nil {
		return
	}
	if strings.HasPrefix(name, "GIT_CONFIG_KEY_") {
		if s, ok := credStaticWord(w); ok {
			idx := strings.TrimPrefix(name, "GIT_CONFIG_KEY_")
			c.gitKeys[idx] = append(c.gitKeys[idx], s)
		}
		return
	}
	if !credCodeVar(name) {
		return
	}
	if s, ok := credStaticWord(w); ok {
		c.deferredText(name, s, depth)
	}
}

// deferredText handles name=text with text known.
func (c *credChecker) deferredText(name, text string, depth int) {
	switch {
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
		idx := strings.TrimPrefix(name, "GIT_CONFIG_KEY_")
		c.gitKeys[idx] = append(c.gitKeys[idx], text)
	case strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		c.gitValues = append(c.gitValues, credPending{idx: strings.TrimPrefix(name, "GIT_CONFIG_VALUE_"), code: text, depth: depth + 1})
	case name == "GIT_CONFIG_PARAMETERS":
		f, err := analysis.ParseShell(syntax.LangPOSIX, text)
		if err != nil {
			return
		}
		syntax.Walk(f, func(n syntax.Node) bool {
			if w, ok := n.(*syntax.Word); ok {
				if s, ok := credStaticWord(w); ok {
					if k, v, ok := strings.Cut(s, "="); ok && analysis.GitCodeKey(strings.ToLower(k), v) {
						c.add("GIT_CONFIG_PARAMETERS", strings.TrimPrefix(v, "!"), depth+1)
					}
				}
				return false
			}
			return true
		})
	case analysis.PromptVar(name):
		// Prompt strings are expanded: their command substitutions run.
		w, err := syntax.NewParser().Document(strings.NewReader(text))
		if err != nil || w == nil {
			return
		}
		var stmts []*syntax.Stmt
		syntax.Walk(w, func(n syntax.Node) bool {
			if cs, ok := n.(*syntax.CmdSubst); ok {
				stmts = append(stmts, cs.Stmts...)
				return false
			}
			return true
		})
		if len(stmts) > 0 {
			c.addFile("$"+name, &syntax.File{Stmts: stmts}, depth+1)
		}
	case analysis.FuncVar(name) != "":
		c.add("$"+name, analysis.FuncVar(name)+" "+text, depth+1)
	case analysis.CommandVar(name):
		c.add("$"+name, text, depth+1)
	}
}

// collectWrites records the files f writes with known or expanded text:
// echo/printf > f, cat > f <<EOF, tee f <<EOF.
func (c *credChecker) collectWrites(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		name := credBaseName(credCmdName(call.Args[0]))
		var content *syntax.Word
		var targets []*syntax.Word
		for _, r := range st.Redirs {
			switch r.Op {
			case syntax.RdrOut, syntax.RdrClob, syntax.AppOut:
				if r.N == nil || r.N.Value == "1" {
					targets = append(targets, r.Word)
				}
			case syntax.Hdoc, syntax.DashHdoc:
				content = r.Hdoc
			case syntax.WordHdoc:
				content = r.Word
			}
		}
		switch name {
		case "echo", "printf":
			content = &syntax.Word{}
			var lits []string
			for i, a := range call.Args[1:] {
				if i > 0 {
					content.Parts = append(content.Parts, &syntax.Lit{Value: " "})
				}
				content.Parts = append(content.Parts, a.Parts...)
				if s, ok := credStaticWord(a); ok && len(lits) == i {
					lits = append(lits, s)
				}
			}
			if name == "printf" && len(lits) == len(call.Args)-1 && len(lits) > 0 {
				if out, ok := analysis.PrintfOutput(lits[0], lits[1:]); ok {
					content = &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: out}}}
				}
			}
		case "tee":
			for _, a := range call.Args[1:] {
				if !strings.HasPrefix(a.Lit(), "-") {
					targets = append(targets, a)
				}
			}
		case "cat":
			if len(call.Args) > 1 {
				content = nil
			}
		default:
			content = nil
		}
		if content == nil {
			return true
		}
		for _, t := range targets {
			if p, ok := credStaticWord(t); ok {
				c.written[path.Clean(p)] = content
			}
		}
		return true
	})
}

// runsWritten adds the script a command runs when the text wrote it: sh f,
// bash f, . f, source f, ./f.
func (c *credChecker) runsWritten(call *syntax.CallExpr, depth int) {
	if len(c.written) == 0 {
		return
	}
	name := credCmdName(call.Args[0])
	var file string
	switch b := credBaseName(name); {
	case b == "make" || b == "gmake":
		// A Makefile the text writes: every recipe, variables as shell
		// variables (make takes them from the environment).
		for _, f := range []string{"GNUmakefile", "makefile", "Makefile"} {
			if w, ok := c.written[f]; ok {
				if text, ok := credStaticWord(w); ok {
					for _, l := range analysis.MakeRecipes(text) {
						c.add("written "+f, makeShellText(l), depth+1)
					}
				}
			}
		}
		return
	case b == "npm" || b == "yarn" || b == "pnpm":
		if w, ok := c.written["package.json"]; ok {
			if text, ok := credStaticWord(w); ok {
				var pkg struct {
					Scripts map[string]string `json:"scripts"`
				}
				if json.Unmarshal([]byte(text), &pkg) == nil {
					for _, s := range pkg.Scripts {
						c.add("written package.json", s, depth+1)
					}
				}
			}
		}
		return
	case credIsShell(b) || b == "source" || b == ".":
		for _, a := range call.Args[1:] {
			s, ok := credStaticWord(a)
			if !ok {
				return
			}
			if !strings.HasPrefix(s, "-") {
				file = s
				break
			}
			if strings.Contains(s, "c") && !strings.HasPrefix(s, "--") {
				return // -c CODE, checked as a string
			}
		}
	case strings.Contains(name, "/"):
		file = name
	}
	if file == "" {
		return
	}
	w, ok := c.written[path.Clean(file)]
	if !ok {
		return
	}
	if code, ok := credStaticWord(w); ok {
		c.add("written "+file, code, depth+1)
		return
	}
	c.runs = append(c.runs, w)
}

// makeShellText turns a recipe line into the shell text make would run,
// with make variables as shell variables: $$ is $, $(X) and ${X} are ${X}.
func makeShellText(l string) string {
	l = strings.TrimLeft(l, " \t@-+")
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		if l[i] != '$' || i+1 >= len(l) {
			b.WriteByte(l[i])
			continue
		}
		i++
		switch l[i] {
		case '$':
			b.WriteByte('$')
		case '(', '{':
			end := analysis.MakeClose(l, i)
			if end < 0 {
				return b.String()
			}
			b.WriteString("${" + analysis.MakeName(l[i+1:end]) + "}")
			i = end
		default:
			b.WriteString("${" + analysis.MakeName(l[i:i+1]) + "}")
		}
	}
	return b.String()
}
