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

// WriteText writes c's fields as aligned "label: value" lines, each note
// on a line of its own under its value, then the kept streams. A value of
// several lines (a command) is folded onto one, its newlines shown as
// " ⏎ ". esc shows a value as the face may print it (nil: as it is, for a
// writer that escapes, like termesc.Writer).
func (c *Card) WriteText(w io.Writer, esc func(string) string) error {
	if esc == nil {
		esc = func(s string) string { return s }
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range c.Fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f.Label, fold(esc(f.Value)))
		for _, n := range f.Notes {
			fmt.Fprintf(tw, "\t  %s\n", esc(n))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
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
