package card

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// fold puts s on one line.
func fold(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
}

// WriteText writes c's fields as "label: value" lines (the values
// aligned in a column when align is set, for a terminal), each note on a
// line of its own under its value, then the kept streams. A value of
// several lines (a command) is folded onto one, its newlines shown as
// " ⏎ ". esc shows a value as the face may print it (nil: as it is, for a
// writer that escapes, like termesc.Writer).
func (c *Card) WriteText(w io.Writer, esc func(string) string, align bool) error {
	if esc == nil {
		esc = func(s string) string { return s }
	}
	out, sep, indent := w, " ", "  "
	var tw *tabwriter.Writer
	if align {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		out, sep, indent = tw, "\t", "\t  "
	}
	for _, f := range c.Fields {
		fmt.Fprintf(out, "%s:%s%s\n", f.Label, sep, fold(esc(f.Value)))
		for _, n := range f.Notes {
			fmt.Fprintf(out, "%s%s\n", indent, esc(n))
		}
	}
	if tw != nil {
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, s := range c.Streams {
		if !s.Kept {
			fmt.Fprintf(w, "\n--- %s: not kept (exec.audit.keep_output) ---\n", s.Name)
			continue
		}
		note := ""
		if s.Note != "" {
			note = ", " + s.Note
		}
		fmt.Fprintf(w, "\n--- %s (redacted%s) ---\n", s.Name, note)
		w.Write(s.Text)
		if len(s.Text) > 0 && s.Text[len(s.Text)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
	return nil
}
