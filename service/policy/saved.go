package policy

// This file holds the saved rules: the rules an approval's "always" or
// "deny always" answer saved, in a file Gatehouse owns in the user's state
// directory (SavedRulesName). They are user-tier rules that come before the
// user file's own, so a saved allow decides a command a user rule would
// ask about; a managed rule still comes first, and a saved rule is checked
// against the managed file like a user rule. `gatehouse rules list` shows
// them, `gatehouse rules rm` removes one.
//
// The same file keeps the egress destinations an approval's "always"
// allowed (policy.egress_allowlist: added to every agent's list, within
// the managed bound) and "deny always" refused (policy.egress_denylist,
// added to the user's), and those a preset allowed for one agent
// (policy.egress_allowlist_by_agent: added to that agent's list, within
// the managed bound).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/pattern"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// SavedRulesName is the saved rules' file name in the state directory.
const SavedRulesName = "rules.yaml"

const savedHeader = `# Rules Gatehouse saved when a person answered an approval "always" or
# "deny always". List them with 'gatehouse rules list', remove one with
# 'gatehouse rules rm NAME'. This file may hold policy.rules, and the
# destinations approvals allowed (policy.egress_allowlist, or for one agent
# policy.egress_allowlist_by_agent) or denied (policy.egress_denylist) always.
`

// savedFields are the fields the saved rules file may set.
var savedFields = []string{"policy.rules", "policy.egress_allowlist", "policy.egress_allowlist_by_agent", "policy.egress_denylist"}

// readSaved reads the saved rules file as a layer that may set
// savedFields only.
func readSaved(file, home string, errs *[]error) (*layer, error) {
	l, err := readLayer(file, false, home, errs)
	if l == nil || err != nil {
		return l, err
	}
	for p, line := range l.set {
		if !slices.Contains(savedFields, p) {
			*errs = append(*errs, &FieldError{File: file, Line: line, Field: p,
				Err: errors.New("the saved rules file holds policy.rules, policy.egress_allowlist, policy.egress_allowlist_by_agent and policy.egress_denylist only; move this setting to your config file")})
		}
	}
	return l, nil
}

// savedDoc is the saved rules file's shape.
type savedDoc struct {
	Policy struct {
		Rules          []Rule              `yaml:"rules"`
		EgressAllow    []string            `yaml:"egress_allowlist,omitempty,flow"`
		EgressByAgent  map[string][]string `yaml:"egress_allowlist_by_agent,omitempty"`
		EgressDenylist []string            `yaml:"egress_denylist,omitempty,flow"`
	} `yaml:"policy"`
}

// Saved is what the saved rules file holds.
type Saved struct {
	Rules Rules
	// EgressAllow and EgressDeny are the destinations approvals allowed
	// and denied always, as allowlist entries (host:port).
	EgressAllow, EgressDeny []string
	// EgressAllowByAgent are the destinations allowed for one agent only
	// (a preset answer, egress allow --preset --agent).
	EgressAllowByAgent EgressByAgent
}

// ReadSaved returns what the saved rules file at path holds, nothing when
// it does not exist.
func ReadSaved(path string) (Saved, error) {
	rs, err := ReadSavedRules(path)
	if err != nil {
		return Saved{}, err
	}
	out := Saved{Rules: rs}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return Saved{}, err
	}
	l, _ := parseLayer(path, data, "")
	out.EgressAllow = l.vals.Policy.EgressAllowlist
	out.EgressDeny = l.vals.Policy.EgressDenylist
	out.EgressAllowByAgent = l.vals.Policy.EgressAllowlistByAgent
	return out, nil
}

// WriteSaved replaces the saved rules file at path with s, through a new
// file renamed over it (0600).
func WriteSaved(path string, s Saved) error {
	var doc savedDoc
	doc.Policy.Rules = s.Rules
	if doc.Policy.Rules == nil {
		doc.Policy.Rules = Rules{}
	}
	doc.Policy.EgressAllow, doc.Policy.EgressDenylist = s.EgressAllow, s.EgressDeny
	for agent, list := range s.EgressAllowByAgent {
		if len(list) > 0 {
			if doc.Policy.EgressByAgent == nil {
				doc.Policy.EgressByAgent = map[string][]string{}
			}
			doc.Policy.EgressByAgent[agent] = list
		}
	}
	return writeSavedDoc(path, doc)
}

// ReadSavedRules returns the rules in the saved rules file at path, none
// when it does not exist. A file that does not parse is an error naming
// it.
func ReadSavedRules(path string) (Rules, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Rules{}, nil
	}
	if err != nil {
		return nil, err
	}
	l, errs := parseLayer(path, data, "")
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	rs := l.vals.Policy.Rules
	if rs == nil {
		rs = Rules{}
	}
	rs.markSaved()
	return rs, nil
}

// WriteSavedRules replaces the saved rules in the file at path with rs,
// keeping the egress destinations it holds, through a new file renamed
// over it (0600).
func WriteSavedRules(path string, rs Rules) error {
	s, err := ReadSaved(path)
	if err != nil {
		s = Saved{} // a file that does not parse is replaced, as before
	}
	s.Rules = rs
	return WriteSaved(path, s)
}

func writeSavedDoc(path string, doc savedDoc) error {
	var b bytes.Buffer
	b.WriteString(savedHeader)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".rules-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// RuleYAML returns r as the YAML a person reads: one mapping, a line a
// key, its lists written in flow style ([push, origin, feat]) so that a
// face with few lines (the tray) can show a rule whole. A value holding a
// control or format character (a bidi override, a zero-width space) is
// double-quoted with the character written as an escape ("\u202e"), as
// termesc shows it: the text shows what the rule matches and parses back
// to the same rule.
func RuleYAML(r *Rule) string {
	var n yaml.Node
	if err := n.Encode(r); err != nil {
		return r.Name
	}
	flowLists(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return r.Name
	}
	out := strings.TrimRight(b.String(), "\n")
	// Only inside the double-quoted values flowLists marked can such a
	// character stand; YAML reads \uXXXX there as the character.
	return escapeQuoted(out)
}

// hidden reports whether termesc shows c as an escape; YAML escapes the
// controls below 0x80 itself in a double-quoted value.
func hidden(c rune) bool {
	return c >= 0x80 && termesc.String(string(c)) != string(c)
}

// escapeQuoted writes every hidden character of s as a YAML escape.
func escapeQuoted(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case !hidden(c):
			b.WriteRune(c)
		case c > 0xffff:
			fmt.Fprintf(&b, "\\U%08x", c)
		default:
			fmt.Fprintf(&b, "\\u%04x", c)
		}
	}
	return b.String()
}

// flowLists writes every list below n in flow style, an item that holds
// a space or nothing in quotes, so that where one argument ends reads
// plainly, and every value that holds a hidden character double-quoted.
func flowLists(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && (c.Value == "" || strings.ContainsFunc(c.Value, unicode.IsSpace)) {
				c.Style = yaml.DoubleQuotedStyle
			}
		}
	}
	if n.Kind == yaml.ScalarNode && strings.ContainsFunc(n.Value, hidden) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		flowLists(c)
	}
}

// ParseRule reads one rule written in YAML or JSON (a mapping, or a list
// holding one), as `gatehouse approve --always --rule` takes it. Each
// problem names the key.
func ParseRule(text string) (*Rule, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("the rule is not YAML or JSON: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("the rule is empty; want a mapping with name, action and matchers")
	}
	n := resolve(doc.Content[0])
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) != 1 {
			return nil, fmt.Errorf("want one rule, got a list of %d", len(n.Content))
		}
		n = resolve(n.Content[0])
	}
	var problems []string
	r, ok := decodeRule(n, n.Line, func(_ int, key, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if key != "" {
			msg = key + ": " + msg
		}
		problems = append(problems, msg)
	})
	if !ok || len(problems) > 0 {
		return nil, fmt.Errorf("the rule is not valid: %s", strings.Join(problems, "; "))
	}
	return &r, nil
}

// ProposeRule returns the rule that matches the call the person saw and
// nothing more, with the given action: the node of t that decided v, its
// command by the path it resolves to (or its name), its arguments exactly
// (exact: the same ones, in the same order, and no others), top_level
// when the node is, and the dynamic flag when dynamic_action decided.
// Generalising it is the person's own edit. It returns nil when the
// deciding node is not a command a rule can name, or when an argument is
// only known at run time: no rule can say which value the person saw.
func ProposeRule(t *analysis.Tree, v Verdict, action string) *Rule {
	if t == nil || v.Node < 0 || v.Node >= len(t.Nodes) {
		return nil
	}
	n := t.Nodes[v.Node]
	if n.Kind != analysis.KindCommand || n.Name == "" {
		return nil
	}
	r := &Rule{Action: action}
	cmd := n.Name
	if n.Path != "" {
		cmd = n.Path
	}
	r.Command = []string{pattern.QuoteMeta(cmd, 0)}
	exact := ArgList{}
	for _, a := range n.Argv[min(1, len(n.Argv)):] {
		if a.Dynamic {
			return nil
		}
		exact = append(exact, pattern.QuoteMeta(a.Value, 0))
	}
	r.Args = []ArgMatch{{Exact: exact}}
	if n.TopLevel() {
		r.Where = WhereTopLevel
	}
	if v.Code == CodeDynamic || n.Has(analysis.FlagDynamic) {
		r.Flags = []string{string(analysis.FlagDynamic)}
	}
	verb := "approved"
	if action == ActionDeny {
		verb = "denied"
	}
	r.Name = SavedRuleName(verb, r)
	r.Reason = fmt.Sprintf("%s always by a person, for %s", verb, analysis.Abbrev(nodeText(n), 120))
	return r
}

// nameWord keeps a command name's safe characters for a rule name.
var nameWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_.-]+`) })

// SavedRuleName names a saved rule by its verb, command and a hash of
// what it matches, so that the same rule saved twice has one name.
func SavedRuleName(verb string, r *Rule) string {
	word := "command"
	if len(r.Command) > 0 {
		if w := nameWord().ReplaceAllString(filepath.Base(r.Command[0]), ""); w != "" {
			word = w
		}
	}
	if len(word) > 24 {
		word = word[:24]
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00%q\x00%s\x00%q", r.Action, r.Command, r.Args, r.Where, r.Flags)
	return verb + "-" + word + "-" + hex.EncodeToString(h.Sum(nil))[:8]
}
