package policy

// This file holds policy.rules: the ordered list of rules that command
// analysis applies to every node of a command tree. It decodes the list
// itself (Rules implements NodeDecoder), so that every error names the rule
// and the line it is on, and it judges each rule's values; the matching
// lives in service/analysis.
//
// A rule in YAML:
//
//	- name: no-force-push          # required, unique: [A-Za-z0-9][A-Za-z0-9_.:-]*
//	  action: deny                 # required: allow | ask | deny
//	  reason: shared history       # shown to the agent
//	  command: [git]               # basename, full path or shell pattern; any of them
//	  args:                        # every entry must hold
//	    - flag: [--force, -f]      #   one of these flags is present
//	    - seq: [push]              #   these arguments appear in a row
//	    - glob: ["main", "release/*"]  # one argument matches one pattern
//	    - regex: "^--force"        #   one argument matches the expression
//	  where: any                   # any | top_level
//	  script: ["*/gradlew"]        # the node comes from a script matching one of these
//	  flags: [dynamic]             # analysis flags the node must carry
//
// A rule that names the flag dynamic decides the nodes it matches instead
// of policy.dynamic_action.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/pattern"

	"github.com/gatehouse-dev/gatehouse/internal/scale"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// Actions a rule (and default_action, dynamic_action) may take, from the
// widest to the narrowest.
const (
	ActionAllow = "allow"
	ActionAsk   = "ask"
	ActionDeny  = "deny"
)

// Actions is the vocabulary of actions, widest first: validation lists it
// in this order, and a narrower action wins a decision and may replace a
// managed one.
var Actions = scale.Of(scale.Step{ActionAllow}, scale.Step{ActionAsk}, scale.Step{ActionDeny})

// actionRank is a's rank in Actions; 0, the widest, for an unknown value.
func actionRank(a string) int {
	r, _ := Actions.Rank(a)
	return r
}

// Values of a rule's where.
const (
	WhereAny      = "any"
	WhereTopLevel = "top_level"
)

// RuleFlags are the analysis flags a rule may require (analysis.AllFlags);
// command analysis sets them on the nodes of a command tree.
var RuleFlags = func() []string {
	out := make([]string, len(analysis.AllFlags))
	for i, f := range analysis.AllFlags {
		out[i] = string(f)
	}
	return out
}()

// maxRules bounds the rules one file may hold; maxRuleReason bounds a
// reason.
const (
	maxRules      = 1000
	maxRuleReason = 1000
)

// ruleName is the shape of a rule's name: safe to print in a reason.
var ruleName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`) })

// A Rule is one entry of policy.rules. A node of a command tree matches
// when every matcher that is set holds; a rule without matchers matches
// every node.
type Rule struct {
	Name   string `yaml:"name" json:"name"`
	Action string `yaml:"action" json:"action"`
	Reason string `yaml:"reason,omitempty" json:"reason,omitempty"`
	// Command matches the node's command: an entry with a "/" is compared
	// with the resolved path, one without with the basename; either may be
	// a shell pattern (*, ?, [...]). Any entry may match.
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Args must all hold over the node's static arguments.
	Args []ArgMatch `yaml:"args,omitempty" json:"args,omitempty"`
	// Where is any (the default) or top_level: not inside a wrapper's
	// payload, a script, a shell string, a substitution or a function.
	Where string `yaml:"where,omitempty" json:"where,omitempty"`
	// Script matches nodes that come from a script file whose path (with
	// symlinks resolved) matches one of these shell patterns: "*/gradlew".
	Script []string `yaml:"script,omitempty" json:"script,omitempty"`
	// Flags are analysis flags (RuleFlags) the node must all carry.
	Flags []string `yaml:"flags,omitempty" json:"flags,omitempty"`

	// managed marks a rule from the managed file. Managed and user rules
	// are separate tiers: a user rule cannot shadow a managed one.
	managed bool
	// saved marks a rule an approval saved (saved.go); it is in the
	// user's tier.
	saved bool
}

// An ArgMatch is one condition over a node's arguments (argv[1:]); exactly
// one of its fields is set. Arguments only known at run time never match.
type ArgMatch struct {
	// Exact holds when the arguments are these, in this order, and no
	// others; each is a shell pattern. An empty list (exact: []) holds
	// for a command given no arguments. It is what an approval proposes
	// (ProposeRule): the call the person saw, and nothing more.
	Exact ArgList `yaml:"exact,omitempty" json:"exact,omitzero"`
	// Flag holds when one of these flags is present: "--force" matches
	// --force and --force=x; a one-letter "-f" also matches a cluster like
	// -rf. Only arguments before "--" are flags.
	Flag []string `yaml:"flag,omitempty" json:"flag,omitempty"`
	// Seq holds when these arguments appear in a row; each is a shell
	// pattern.
	Seq []string `yaml:"seq,omitempty" json:"seq,omitempty"`
	// Glob holds when one argument matches one of these shell patterns
	// ("*" matches "/" too).
	Glob []string `yaml:"glob,omitempty" json:"glob,omitempty"`
	// Regex holds when one argument matches this Go regular expression
	// (unanchored: use ^ and $).
	Regex string `yaml:"regex,omitempty" json:"regex,omitempty"`
}

// An ArgList is a list of argument patterns in which an empty list is
// set (it says "no arguments") and only nil is unset.
type ArgList []string

// IsZero reports whether l is unset: nil, not merely empty.
func (l ArgList) IsZero() bool { return l == nil }

// Rules is the ordered list under policy.rules. Rules from the managed file
// come first and are marked (Managed); the user file's rules follow.
type Rules []Rule

// Managed reports whether r came from the managed file.
func (r *Rule) Managed() bool { return r.managed }

// sameRule reports whether a and b say the same thing, wherever they came
// from.
func sameRule(a, b *Rule) bool {
	return a.Name == b.Name && a.Action == b.Action && a.Reason == b.Reason &&
		a.Where == b.Where && slices.Equal(a.Command, b.Command) && slices.Equal(a.Script, b.Script) &&
		slices.Equal(a.Flags, b.Flags) && slices.EqualFunc(a.Args, b.Args, func(x, y ArgMatch) bool {
		return (x.Exact == nil) == (y.Exact == nil) && slices.Equal(x.Exact, y.Exact) &&
			slices.Equal(x.Flag, y.Flag) && slices.Equal(x.Seq, y.Seq) && slices.Equal(x.Glob, y.Glob) && x.Regex == y.Regex
	})
}

// Saved reports whether r is one an approval saved.
func (r *Rule) Saved() bool { return r.saved }

// Origin says where r came from: managed, saved or user.
func (r *Rule) Origin() string {
	switch {
	case r.managed:
		return OriginManaged
	case r.saved:
		return OriginSaved
	}
	return OriginUser
}

// markSaved marks every rule of rs as saved by an approval.
func (rs Rules) markSaved() {
	for i := range rs {
		rs[i].saved = true
	}
}

// markManaged marks every rule of rs as coming from the managed file.
func (rs Rules) markManaged() {
	for i := range rs {
		rs[i].managed = true
	}
}

// merge returns cur with the rules of add appended, leaving out rules cur
// already holds (a user file may repeat a managed rule word for word).
func (rs Rules) merge(add Rules) Rules {
	out := append(Rules{}, rs...)
	for i := range add {
		if !slices.ContainsFunc(out, func(r Rule) bool { return sameRule(&r, &add[i]) }) {
			out = append(out, add[i])
		}
	}
	return out
}

// DecodeNode decodes a YAML list of rules. Every problem is reported with
// the line it is on, as "[i].key: message".
func (rs *Rules) DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		*rs = Rules{}
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("want a list of rules, each a mapping with name, action and matchers; got %s", describe(n))
	}
	if len(n.Content) > maxRules {
		return fmt.Errorf("%d rules is too many; want at most %d", len(n.Content), maxRules)
	}
	out := Rules{}
	ok := true
	names := map[string]int{}
	for i, item := range n.Content {
		line := item.Line
		item = resolve(item)
		bad := func(l int, key, format string, args ...any) {
			ok = false
			errf(l, "[%d]%s: %s", i, key, fmt.Sprintf(format, args...))
		}
		r, good := decodeRule(item, line, func(l int, key, format string, args ...any) {
			if key != "" {
				key = "." + key
			}
			bad(l, key, format, args...)
		})
		if !good {
			continue
		}
		if first, dup := names[r.Name]; dup {
			bad(line, ".name", "%q is already the name of rule [%d]; names must be unique", r.Name, first)
			continue
		}
		names[r.Name] = i
		out = append(out, r)
	}
	if !ok {
		return errSkip
	}
	*rs = out
	return nil
}

// ruleKeys are the keys a rule mapping may hold, in the order messages
// list them.
var ruleKeys = []string{"name", "action", "reason", "command", "args", "where", "script", "flags"}

// decodeRule decodes one rule mapping; bad records each problem.
func decodeRule(n *yaml.Node, line int, bad func(line int, key, format string, args ...any)) (Rule, bool) {
	var r Rule
	if n.Kind != yaml.MappingNode {
		bad(line, "", "want a mapping with name, action and matchers, got %s", describe(n))
		return r, false
	}
	ok := true
	fail := func(l int, key, format string, args ...any) {
		ok = false
		bad(l, key, format, args...)
	}
	seen := map[string]bool{}
	lines := map[string]int{} // key → line of its value
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		lines[k.Value] = n.Content[i+1].Line
		if k.Kind != yaml.ScalarNode || !slices.Contains(ruleKeys, k.Value) {
			fail(k.Line, k.Value, "unknown key; a rule has %s", strings.Join(ruleKeys, ", "))
			continue
		}
		if seen[k.Value] {
			fail(k.Line, k.Value, "repeated key")
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "name", "action", "reason", "where":
			s, isStr := scalarString(v)
			if !isStr {
				fail(v.Line, k.Value, "want a string, got %s", describe(v))
				continue
			}
			switch k.Value {
			case "name":
				r.Name = s
			case "action":
				r.Action = s
			case "reason":
				r.Reason = s
			case "where":
				r.Where = s
			}
		case "command", "flags", "script":
			list, err := stringOrList(v)
			if err != nil {
				fail(v.Line, k.Value, "%v", err)
				continue
			}
			switch k.Value {
			case "command":
				r.Command = list
			case "script":
				r.Script = list
			default:
				r.Flags = list
			}
		case "args":
			args, good := decodeArgs(v, func(l int, key, format string, a ...any) {
				fail(l, "args"+key, format, a...)
			})
			if good {
				r.Args = args
			}
		}
	}
	if !ok {
		return r, false
	}
	if !seen["name"] {
		fail(line, "name", "missing; every rule needs a name, used in reasons and the audit record")
	}
	if !seen["action"] {
		fail(line, "action", "missing; want allow, ask or deny")
	}
	for _, p := range r.problems() {
		l := line
		if kl, ok := lines[strings.FieldsFunc(p.key, func(c rune) bool { return c == '[' || c == '.' })[0]]; ok {
			l = kl
		}
		fail(l, p.key, "%s", p.msg)
	}
	return r, ok
}

// decodeArgs decodes a rule's args: a list of single-key mappings.
func decodeArgs(n *yaml.Node, bad func(line int, key, format string, args ...any)) ([]ArgMatch, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		bad(n.Line, "", "want a list like [{flag: -f}, {seq: [push]}, {exact: [push, origin, main]}], got %s", describe(n))
		return nil, false
	}
	var out []ArgMatch
	ok := true
	for i, item := range n.Content {
		item = resolve(item)
		key := fmt.Sprintf("[%d]", i)
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			bad(item.Line, key, "want a mapping with one of exact, flag, seq, glob or regex, got %s", describe(item))
			ok = false
			continue
		}
		k, v := item.Content[0], resolve(item.Content[1])
		var m ArgMatch
		switch k.Value {
		case "exact":
			list, err := stringOrList(v)
			if err != nil || v.Kind != yaml.SequenceNode {
				bad(v.Line, key+".exact", "want the list of arguments, [] for none, got %s", describe(v))
				ok = false
				continue
			}
			m.Exact = append(ArgList{}, list...)
		case "flag", "seq", "glob":
			list, err := stringOrList(v)
			if err != nil {
				bad(v.Line, key+"."+k.Value, "%v", err)
				ok = false
				continue
			}
			if len(list) == 0 {
				bad(v.Line, key+"."+k.Value, "is empty")
				ok = false
				continue
			}
			switch k.Value {
			case "flag":
				m.Flag = list
			case "seq":
				m.Seq = list
			default:
				m.Glob = list
			}
		case "regex":
			s, isStr := scalarString(v)
			if !isStr {
				bad(v.Line, key+".regex", "want a string, got %s", describe(v))
				ok = false
				continue
			}
			m.Regex = s
		default:
			bad(k.Line, key+"."+k.Value, "unknown matcher; want exact, flag, seq, glob or regex")
			ok = false
			continue
		}
		out = append(out, m)
	}
	return out, ok
}

// scalarString returns the text of a non-null scalar.
func scalarString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == nullTag {
		return "", false
	}
	return n.Value, true
}

// stringOrList decodes a string or a list of strings; an empty list is nil.
func stringOrList(n *yaml.Node) ([]string, error) {
	if s, ok := scalarString(n); ok {
		return []string{s}, nil
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("want a string or a list of strings, got %s", describe(n))
	}
	var out []string
	for _, item := range n.Content {
		item = resolve(item)
		s, ok := scalarString(item)
		if !ok {
			return nil, fmt.Errorf("want a list of strings, got %s in it", describe(item))
		}
		out = append(out, s)
	}
	return out, nil
}

// A ruleProblem is one thing wrong with a rule's values.
type ruleProblem struct{ key, msg string }

// problems judges r's values.
func (r *Rule) problems() []ruleProblem {
	var out []ruleProblem
	add := func(key, format string, args ...any) {
		out = append(out, ruleProblem{key, fmt.Sprintf(format, args...)})
	}
	if !ruleName().MatchString(r.Name) {
		add("name", "%q is not a rule name; want letters, digits and _.:- (at most 64), starting with a letter or digit", r.Name)
	}
	if !Actions.Has(r.Action) {
		add("action", "%q is not one of %s", r.Action, Actions)
	}
	if len(r.Reason) > maxRuleReason {
		add("reason", "is %d bytes; the limit is %d", len(r.Reason), maxRuleReason)
	}
	if r.Where != "" && r.Where != WhereAny && r.Where != WhereTopLevel {
		add("where", "%q is not one of any, top_level", r.Where)
	}
	for i, c := range r.Command {
		if c == "" {
			add(fmt.Sprintf("command[%d]", i), "is empty")
		} else if _, err := CompileGlob(c); err != nil {
			add(fmt.Sprintf("command[%d]", i), "%q is not a valid pattern: %v", c, err)
		}
	}
	for i, s := range r.Script {
		if _, err := CompileGlob(s); err != nil || s == "" {
			add(fmt.Sprintf("script[%d]", i), "%q is not a valid pattern", s)
		}
	}
	for i, f := range r.Flags {
		if !slices.Contains(RuleFlags, f) {
			add(fmt.Sprintf("flags[%d]", i), "%q is not an analysis flag; want one of %s", f, strings.Join(RuleFlags, ", "))
		}
	}
	for i, m := range r.Args {
		key := fmt.Sprintf("args[%d]", i)
		set := 0
		if m.Exact != nil {
			set++
		}
		for _, l := range [][]string{m.Flag, m.Seq, m.Glob} {
			if len(l) > 0 {
				set++
			}
		}
		if m.Regex != "" {
			set++
		}
		if set != 1 {
			add(key, "want exactly one of exact, flag, seq, glob or regex")
			continue
		}
		for _, f := range m.Flag {
			if !strings.HasPrefix(f, "-") || f == "-" || f == "--" {
				add(key+".flag", "%q is not a flag; want -x or --name", f)
			}
		}
		for _, g := range slices.Concat(m.Exact, m.Seq, m.Glob) {
			if _, err := CompileGlob(g); err != nil {
				add(key, "%q is not a valid pattern: %v", g, err)
			}
		}
		if m.Regex != "" {
			if _, err := regexp.Compile(m.Regex); err != nil {
				add(key+".regex", "%q does not compile: %v", m.Regex, err)
			}
		}
	}
	return out
}

// CompileGlob compiles a shell pattern that matches a whole string; "*"
// and "?" match "/" too, as in a shell's case statement.
func CompileGlob(pat string) (*regexp.Regexp, error) {
	expr, err := pattern.Regexp(pat, pattern.EntireString|pattern.NoGlobStar)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(expr, "(?s") { // no meta: the pattern is literal
		expr = "^" + regexp.QuoteMeta(pat) + "$"
	}
	return regexp.Compile(expr)
}

// validateRules checks rs as validation does for a Config built in code.
func (v *validator) validateRules(p string, rs Rules) {
	names := map[string]bool{}
	for i := range rs {
		for _, pr := range rs[i].problems() {
			v.failf(p, "[%d].%s: %s", i, pr.key, pr.msg)
		}
		if names[rs[i].Name] {
			v.failf(p, "[%d].name: %q is used by another rule; names must be unique", i, rs[i].Name)
		}
		names[rs[i].Name] = true
	}
}

// narrowRules checks the user file's rules against the managed file: a
// user rule may not reuse a managed rule's name for something else, and
// under a managed default_action of ask or deny a user rule may not allow
// (the managed default is what stands between the user's allow and the
// command).
func narrowRules(p string, user, managed *layer) []error {
	var errs []error
	ms := managed.source("policy.default_action")
	strict := managed.has("policy.default_action") && managed.vals.Policy.DefaultAction != ActionAllow
	for i, r := range user.vals.Policy.Rules {
		for j := range managed.vals.Policy.Rules {
			m := &managed.vals.Policy.Rules[j]
			if m.Name == r.Name && !sameRule(m, &r) {
				errs = append(errs, errAt(user.source(p), p, "[%d].name: %q is the name of a managed rule (%s); use another name", i, r.Name, managed.source(p)))
			}
		}
		if strict && r.Action == ActionAllow {
			errs = append(errs, errAt(user.source(p), p, "[%d].action: allow widens the managed default_action %q (%s); user rules may only ask or deny",
				i, managed.vals.Policy.DefaultAction, ms))
		}
		// A rule about dynamic commands decides them in place of
		// dynamic_action, so under a managed dynamic_action it may only be
		// as strict or stricter.
		if md := managed.vals.Policy.DynamicAction; managed.has("policy.dynamic_action") && slices.Contains(r.Flags, "dynamic") &&
			actionRank(r.Action) < actionRank(md) {
			errs = append(errs, errAt(user.source(p), p, "[%d].action: %s widens the managed dynamic_action %q (%s): a rule with flags [dynamic] decides dynamic commands in its place; use %s",
				i, r.Action, md, managed.source("policy.dynamic_action"), orList(stricterActions(md))))
		}
	}
	return errs
}

// stricterActions returns the actions at least as strict as a.
func stricterActions(a string) []string {
	var out []string
	for _, v := range Actions.Names() {
		if actionRank(v) >= actionRank(a) {
			out = append(out, v)
		}
	}
	return out
}

// narrowDisabledBuiltins checks that the user disables only built-in rules
// the managed list lets them disable.
func narrowDisabledBuiltins(p string, user, managed *layer) []error {
	m := managed.vals.Policy.DisabledBuiltinRules
	allowed := "use names from that list"
	if len(m) == 0 {
		allowed = "the managed file keeps every built-in rule on"
	}
	var errs []error
	for i, u := range user.vals.Policy.DisabledBuiltinRules {
		if !slices.Contains(m, u) {
			errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
				"%q is not in the managed list %s (%s); %s", u, quoteList(m), managed.source(p), allowed))
		}
	}
	return errs
}

// String writes rs as a YAML flow sequence, as Show prints values.
func (rs Rules) String() string {
	var b strings.Builder
	b.WriteString("[")
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{name: %s, action: %s", yamlString(r.Name), r.Action)
		if r.Reason != "" {
			fmt.Fprintf(&b, ", reason: %s", yamlString(r.Reason))
		}
		if len(r.Command) > 0 {
			fmt.Fprintf(&b, ", command: %s", formatValue(r.Command))
		}
		if len(r.Args) > 0 {
			b.WriteString(", args: [")
			for j, m := range r.Args {
				if j > 0 {
					b.WriteString(", ")
				}
				switch {
				case m.Exact != nil:
					fmt.Fprintf(&b, "{exact: %s}", formatValue([]string(m.Exact)))
				case len(m.Flag) > 0:
					fmt.Fprintf(&b, "{flag: %s}", formatValue(m.Flag))
				case len(m.Seq) > 0:
					fmt.Fprintf(&b, "{seq: %s}", formatValue(m.Seq))
				case len(m.Glob) > 0:
					fmt.Fprintf(&b, "{glob: %s}", formatValue(m.Glob))
				default:
					fmt.Fprintf(&b, "{regex: %s}", yamlString(m.Regex))
				}
			}
			b.WriteString("]")
		}
		if r.Where != "" {
			fmt.Fprintf(&b, ", where: %s", r.Where)
		}
		if len(r.Script) > 0 {
			fmt.Fprintf(&b, ", script: %s", formatValue(r.Script))
		}
		if len(r.Flags) > 0 {
			fmt.Fprintf(&b, ", flags: %s", formatValue(r.Flags))
		}
		b.WriteString("}")
	}
	b.WriteString("]")
	return b.String()
}
