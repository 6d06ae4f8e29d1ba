package policy

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
)

// An Entry is one leaf field of the effective configuration and where its
// value came from, as `gatehouse config show` prints it. It marshals to
// JSON as {"field": ..., "value": ..., "source": {"file": ..., "line": ...}};
// a default source is {}.
type Entry struct {
	Field  string `json:"field"`  // dotted path, e.g. "exec.limits.tmpfs_size"
	Value  any    `json:"value"`  // bool, int, ByteSize, string or []string
	Source Source `json:"source"` // where the value was set
}

// ValueString is e's value as YAML would read it back (as Show writes it).
func (e Entry) ValueString() string { return formatValue(e.Value) }

// Entries returns every leaf field of the effective configuration, in the
// order the fields are declared.
func (l *Loaded) Entries() []Entry {
	out := make([]Entry, len(leaves()))
	for i, lf := range leaves() {
		out[i] = Entry{Field: lf.path, Value: leafValue(&l.Config, lf.path), Source: l.Sources[lf.path]}
	}
	return out
}

// Show writes every leaf field of the effective configuration, one per
// line, with where its value came from:
//
//	exec.limits.tmpfs_size:  1GiB   # default
//	policy.workspace_roots:  [/work] # /home/u/.config/gatehouse/config.yaml:7
//
// Values are written as YAML would read them back.
func (l *Loaded) Show(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, e := range l.Entries() {
		fmt.Fprintf(tw, "%s:\t%s\t# %s%s\n", e.Field, e.ValueString(), e.Source, entryNote(e))
	}
	return tw.Flush()
}

// entryNote is what a reader of e's line should know that its value does
// not say: that *.example.com allows example.com itself too.
func entryNote(e Entry) string {
	var list []string
	switch v := e.Value.(type) {
	case []string:
		if e.Field == "policy.egress_allowlist" {
			list = v
		}
	case EgressByAgent:
		for _, agent := range slices.Sorted(maps.Keys(v)) {
			list = append(list, v[agent]...)
		}
	}
	var notes []string
	for _, entry := range list {
		if d, ok := strings.CutPrefix(entry, "*."); ok && !slices.Contains(notes, entry+" also allows "+d) {
			notes = append(notes, entry+" also allows "+d)
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

// formatValue writes v as a YAML flow value.
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return yamlString(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = yamlString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case []int:
		q := make([]string, len(v))
		for i, n := range v {
			q[i] = strconv.Itoa(n)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

// plainYAML matches strings YAML reads back unquoted as the same string.
var plainYAML = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z/~_.][A-Za-z0-9/~_.+-]*$`) })

// yamlString returns s unquoted when YAML reads it back as that string, and
// double-quoted otherwise.
func yamlString(s string) string {
	switch s {
	case "true", "false", "null", "True", "False", "Null", "TRUE", "FALSE", "NULL", "~", ".inf", ".nan", ".Inf", ".NaN", ".INF", ".NAN":
		return strconv.Quote(s)
	}
	if plainYAML().MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}
