package analysis

// This file is what analysis shares with the credential-on-argv check
// (service/analysis/argvcred) besides the tree's parsed units (parse.go):
// knowledge of the shell that both need, kept here once.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ParseShell parses text as shell code in lang.
func ParseShell(lang syntax.LangVariant, text string) (*syntax.File, error) {
	return parseShell(nil, lang, text)
}

// RunnerCode returns the shell texts a task runner's file hands to a shell
// (a Makefile's recipes, package.json scripts); nil for other files.
func (s *Script) RunnerCode() []string { return s.code }

// CommandVar reports whether the variable name holds a command programs
// run (GIT_SSH_COMMAND, PAGER, EDITOR...).
func CommandVar(name string) bool { return cmdVars[name] }

// PromptVar reports whether the variable name is a prompt the shell
// expands (PS0, PS1, PS2, PS4).
func PromptVar(name string) bool { return promptVars[name] }

// GitCodeKey reports whether the git setting k (lower case) with value v
// is a command git runs.
func GitCodeKey(k, v string) bool { return gitCodeKey(k, v) }

// PrintfOutput returns what printf prints for format and args, when it
// can be known.
func PrintfOutput(format string, args []string) (string, bool) { return printfOutput(format, args) }

// ANSIC returns the value of the $'...' string body s.
func ANSIC(s string) string { return ansiC(s) }

// MakeRecipes returns every recipe line of the Makefile text, in order.
func MakeRecipes(text string) []string {
	var out []string
	for _, r := range parseMakefile(text).rules {
		out = append(out, r.recipe...)
	}
	return out
}

// MakeClose returns the index of the parenthesis or brace closing the
// reference opened at s[open], or -1.
func MakeClose(s string, open int) int { return makeClose(s, open) }

// MakeName returns the variable a make reference's body names.
func MakeName(s string) string { return makeName(s) }

// FuncVar returns the function an exported-function variable
// (BASH_FUNC_name%%) defines, or "".
func FuncVar(name string) string {
	rest, ok := strings.CutPrefix(name, "BASH_FUNC_")
	if !ok {
		return ""
	}
	for _, suf := range []string{"%%", "()"} {
		if f, ok := strings.CutSuffix(rest, suf); ok && f != "" {
			return f
		}
	}
	return ""
}
