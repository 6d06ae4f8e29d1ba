package seatbelt

// Pinned scripts without bind mounts: the judged bytes of each script are
// copied to a private directory by the pipeline (sandbox.Spec.Pins); here
// the command line is rewritten to run the copies, and the copies are
// hashed once more just before the start. Coverage is partial
// (pin_coverage: partial): a script named by a literal word of the judged
// text runs from its copy; one reached another way (by another script, a
// variable, a glob, ~, a symlink to it) runs from its path, which the
// pipeline checked right before the start and nothing keeps from changing
// afterwards. A copy runs with $0 naming the copy, so a script that finds
// its siblings through $0 looks for them in the wrong directory.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Rewrite returns command with every word that names a pinned script
// (Pin.Path, a literal word taken relative to dir) replaced by its copy
// (Pin.Source), quoted for the shell, and the paths it rewrote. Words are
// the arguments of simple commands, the command name among them, and the
// targets of input redirections. Nothing else of the text changes. dialect
// is "bash" or "sh". A command that does not parse is returned unchanged
// (the analysis parsed it to judge it; this cannot happen to judged text).
func Rewrite(command, dir, dialect string, pins []sandbox.Pin) (string, []string, error) {
	if len(pins) == 0 {
		return command, nil, nil
	}
	lang := syntax.LangBash
	if dialect == "sh" {
		lang = syntax.LangPOSIX
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(command), "")
	if err != nil {
		return command, nil, fmt.Errorf("parsing the command to rewrite its pinned scripts: %w", err)
	}
	type edit struct {
		start, end int
		with       string
	}
	var edits []edit
	var rewrote []string
	check := func(w *syntax.Word) {
		v, ok := literal(w)
		if !ok || v == "" {
			return
		}
		p := v
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		for _, pin := range pins {
			if filepath.Clean(pin.Path) == p {
				edits = append(edits, edit{int(w.Pos().Offset()), int(w.End().Offset()), shellQuote(pin.Source)})
				if !slices.Contains(rewrote, pin.Path) {
					rewrote = append(rewrote, pin.Path)
				}
				return
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			for _, w := range x.Args {
				check(w)
			}
		case *syntax.Redirect:
			if x.Op == syntax.RdrIn && x.Word != nil {
				check(x.Word)
			}
		}
		return true
	})
	slices.SortFunc(edits, func(a, b edit) int { return b.start - a.start })
	out := command
	for _, e := range edits {
		out = out[:e.start] + e.with + out[e.end:]
	}
	return out, rewrote, nil
}

// literal returns the value of a word made only of plain text and quotes
// without expansions or escapes; ok is false for any other word.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, `\~*?[`) {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, `\`) {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// shellQuote quotes s for bash and sh alike.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// VerifyPins hashes each pinned copy again, just before the start: a copy
// that does not hold the judged bytes stops the execution.
func VerifyPins(pins []sandbox.Pin) error {
	for _, p := range pins {
		f, err := os.Open(p.Source)
		if err != nil {
			return fmt.Errorf("the pinned copy of %s cannot be read: %w", p.Path, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("the pinned copy of %s cannot be read: %w", p.Path, err)
		}
		if n != p.Size || hex.EncodeToString(h.Sum(nil)) != p.SHA256 {
			return fmt.Errorf("the pinned copy of %s does not hold the judged bytes", p.Path)
		}
	}
	return nil
}
