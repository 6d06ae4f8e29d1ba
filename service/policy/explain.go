package policy

import (
	"fmt"
	"io"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// WriteText writes the tree t and its verdict d for a person: the decision, then every node
// indented under its parent with its flags, notes and matched rules, then
// the scripts that were read.
func WriteText(w io.Writer, t *analysis.Tree, d Verdict) {
	fmt.Fprintf(w, "decision: %s", d.Action)
	if d.Code != "" {
		fmt.Fprintf(w, " (%s)", d.Code)
	}
	fmt.Fprintln(w)
	if d.Reason != "" {
		fmt.Fprintf(w, "reason:   %s\n", d.Reason)
	}
	fmt.Fprintf(w, "dialect:  %s\n", t.Dialect)
	if t.ParseError != nil {
		fmt.Fprintf(w, "parse error: %s\n", t.ParseError)
		return
	}
	fmt.Fprintln(w, "\ncommands:")
	if len(t.Nodes) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	depth := make([]int, len(t.Nodes))
	for _, n := range t.Nodes {
		if n.Parent >= 0 && n.Parent < len(depth) {
			depth[n.ID] = depth[n.Parent] + 1
		}
		ind := strings.Repeat("    ", depth[n.ID])
		line := nodeText(n)
		if n.Kind != analysis.KindCommand {
			line = "[" + n.Kind + "] " + line
		}
		if n.Via != "" {
			line = "via " + n.Via + ": " + line
		}
		fmt.Fprintf(w, "  %s#%d %s  (%s) -> %s\n", ind, n.ID, line, n.Pos(), orAllow(n.Action))
		sub := ind + "      "
		if n.Path != "" && n.Path != n.Name {
			fmt.Fprintf(w, "  %spath: %s\n", sub, n.Path)
		}
		if len(n.Context) > 0 {
			fmt.Fprintf(w, "  %sin: %s\n", sub, strings.Join(n.Context, " > "))
		}
		for _, r := range n.Redirs {
			dyn := ""
			if r.Dynamic {
				dyn = " (dynamic)"
			}
			fmt.Fprintf(w, "  %sredirect: %s%s %s%s\n", sub, r.Fd, r.Op, r.Target, dyn)
		}
		if len(n.Flags) > 0 {
			fs := make([]string, len(n.Flags))
			for i, f := range n.Flags {
				fs[i] = string(f)
			}
			fmt.Fprintf(w, "  %sflags: %s\n", sub, strings.Join(fs, ", "))
		}
		for _, note := range n.Notes {
			fmt.Fprintf(w, "  %snote: %s\n", sub, note)
		}
		for _, m := range n.Matches {
			if m.Origin == OriginDefaultAction && m.Action == "allow" {
				continue
			}
			fmt.Fprintf(w, "  %srule: %s (%s) -> %s\n", sub, m.Rule, m.Origin, m.Action)
		}
	}
	if len(t.Scripts) > 0 {
		fmt.Fprintln(w, "\nscripts read (pinned when the command runs):")
		for _, s := range t.Scripts {
			fmt.Fprintf(w, "  %s  sha256:%s  %d bytes  %s\n", s.Path, s.SHA256, s.Size, s.Lang)
		}
	}
}
