package analysis

// This file parses shell code, once per text: the tree keeps every unit it
// parsed (the command text, the scripts, the strings it runs), and the
// credential check reads them from there instead of parsing again.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// testOnlyParse, when set, is called with every text parsed as shell code.
var testOnlyParse func(text string)

// unitKey names a parsed unit: the same text in the same language.
type unitKey struct {
	lang syntax.LangVariant
	text string
}

// ParsedUnit returns the unit of shell code the tree parsed for text in
// lang (the command, a script, a string it runs), or nil.
func (t *Tree) ParsedUnit(lang syntax.LangVariant, text string) *syntax.File {
	if t == nil {
		return nil
	}
	return t.units[unitKey{lang, text}]
}

// parseShell parses text in lang with p (a new parser when nil).
func parseShell(p *syntax.Parser, lang syntax.LangVariant, text string) (*syntax.File, error) {
	if testOnlyParse != nil {
		testOnlyParse(text)
	}
	if p == nil {
		p = syntax.NewParser(syntax.Variant(lang))
	}
	return p.Parse(strings.NewReader(text), "")
}
