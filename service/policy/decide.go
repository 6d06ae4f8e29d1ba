package policy

// This file decides a command's tree: for each node the built-in rules that match,
// the first matching managed rule, the first matching user rule, and the
// default and dynamic actions; the strictest answer of the strictest node
// decides.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// Decision codes: why a command was not allowed.
const (
	CodeParseError    = "parse_error"
	CodePolicyRule    = "policy_rule"
	CodeDefaultAction = "default_action"
	CodeDynamic       = "dynamic_command"
)

// Origins of a match.
const (
	OriginBuiltin       = "builtin"
	OriginManaged       = "managed"
	OriginUser          = "user"
	OriginSaved         = "saved"
	OriginDefaultAction = "default_action"
	OriginDynamicAction = "dynamic_action"
)

// A Verdict is the decision on a command's tree.
type Verdict struct {
	// Action is allow, ask or deny.
	Action string `json:"action"`
	// Code says why the command is not allowed: parse_error, policy_rule,
	// default_action or dynamic_command; "" when it is.
	Code string `json:"code,omitempty"`
	// Reason explains the decision to the agent.
	Reason string `json:"reason,omitempty"`
	// Rule names the deciding rule (or setting), and Origin where it came
	// from (builtin, managed, saved, user, default_action, dynamic_action).
	Rule   string `json:"rule,omitempty"`
	Origin string `json:"origin,omitempty"`
	// Node is the deciding node, -1 for none.
	Node int `json:"node"`
}

// Decide judges t under p and records on every node the rules that
// matched it and its own action.
func Decide(t *analysis.Tree, p *Policy) Verdict {
	if t.ParseError != nil {
		return Verdict{
			Action: ActionDeny, Code: CodeParseError, Node: -1,
			Reason: "the command does not parse (" + t.ParseError.Error() + "); nothing that cannot be analysed runs",
		}
	}
	best := Verdict{Action: ActionAllow, Node: -1}
	bestMatch := analysis.Match{}
	for _, n := range t.Nodes {
		n.Matches = matches(n, p)
		n.Action = ActionAllow
		var deciding analysis.Match
		for _, m := range n.Matches {
			if actionRank(m.Action) > actionRank(n.Action) {
				n.Action, deciding = m.Action, m
			}
		}
		if actionRank(n.Action) > actionRank(best.Action) {
			best = Verdict{Action: n.Action, Node: n.ID, Rule: deciding.Rule, Origin: deciding.Origin}
			bestMatch = deciding
		}
	}
	if best.Node >= 0 {
		n := t.Nodes[best.Node]
		best.Code, best.Reason = reason(n, bestMatch)
	}
	return best
}

// reason words the decision made by m on n.
func reason(n *analysis.Node, m analysis.Match) (code, text string) {
	what := fmt.Sprintf("%q (at %s)", analysis.Abbrev(nodeText(n), 160), n.Pos())
	switch m.Origin {
	case OriginDefaultAction:
		return CodeDefaultAction, fmt.Sprintf("no rule allows %s and policy.default_action is %s", what, m.Action)
	case OriginDynamicAction:
		why := n.DynamicWhy()
		if why == "" {
			why = "part of it is only known at run time"
		}
		return CodeDynamic, fmt.Sprintf("%s cannot be analysed before it runs: %s; policy.dynamic_action is %s", what, why, m.Action)
	}
	kind := "rule"
	switch m.Origin {
	case OriginBuiltin:
		kind = "built-in rule"
	case OriginManaged:
		kind = "managed rule"
	}
	text = fmt.Sprintf("%s %q matched %s", kind, m.Rule, what)
	if m.Reason != "" {
		text += ": " + m.Reason
	}
	return CodePolicyRule, text
}

// nodeText is the command of n for a message.
func nodeText(n *analysis.Node) string {
	if s := n.Text(); s != "" {
		return s
	}
	return n.Kind
}

// matches returns everything that applies to n.
func matches(n *analysis.Node, p *Policy) []analysis.Match {
	var out []analysis.Match
	for _, b := range BuiltinRules {
		if p.BuiltinEnabled(b.Name) && n.HasShape(b.Shape) {
			out = append(out, analysis.Match{Rule: b.Name, Origin: OriginBuiltin, Action: b.Action, Reason: b.Reason})
		}
	}
	tierMatched, dynamicDecided := false, false
	for _, managed := range []bool{true, false} {
		for i := range p.Rules {
			r := &p.Rules[i]
			if r.Managed() != managed || !RuleMatches(r, n) {
				continue
			}
			out = append(out, analysis.Match{Rule: r.Name, Origin: r.Origin(), Action: r.Action, Reason: r.Reason})
			tierMatched = true
			// A rule about dynamic nodes decides them instead of
			// dynamic_action (both tiers must name it: the managed
			// tier's own default is dynamic_action).
			if slices.Contains(r.Flags, string(analysis.FlagDynamic)) {
				dynamicDecided = true
			}
			break
		}
	}
	if !tierMatched && n.Kind == analysis.KindCommand {
		out = append(out, analysis.Match{Rule: "default_action", Origin: OriginDefaultAction, Action: orAllow(p.DefaultAction)})
	}
	if n.Has(analysis.FlagDynamic) && !dynamicDecided && p.DynamicAction != ActionAllow {
		out = append(out, analysis.Match{Rule: "dynamic_action", Origin: OriginDynamicAction, Action: orAsk(p.DynamicAction)})
	}
	return out
}

func orAllow(s string) string {
	if s == "" {
		return ActionAllow
	}
	return s
}

func orAsk(s string) string {
	if s == "" {
		return ActionAsk
	}
	return s
}

// RuleMatches reports whether rule r matches node n.
func RuleMatches(r *Rule, n *analysis.Node) bool {
	if r.Where == WhereTopLevel && !n.TopLevel() {
		return false
	}
	if len(r.Script) > 0 {
		ok := false
		for _, s := range r.Script {
			if sc := n.InScript(); sc != "" && globMatch(s, sc) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, f := range r.Flags {
		if !n.Has(analysis.Flag(f)) {
			return false
		}
	}
	if len(r.Command) > 0 {
		if n.Kind != analysis.KindCommand || n.Name == "" {
			return false
		}
		ok := false
		for _, c := range r.Command {
			target := n.Name
			if strings.Contains(c, "/") {
				target = n.Path
			}
			if target != "" && globMatch(c, target) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	var args []analysis.Arg
	if len(n.Argv) > 1 {
		args = n.Argv[1:]
	}
	for _, m := range r.Args {
		if !argMatch(m, args) {
			return false
		}
	}
	return true
}

// argMatch applies one argument matcher.
func argMatch(m ArgMatch, args []analysis.Arg) bool {
	switch {
	case m.Exact != nil:
		if len(args) != len(m.Exact) {
			return false
		}
		for i, pat := range m.Exact {
			if args[i].Dynamic || !globMatch(pat, args[i].Value) {
				return false
			}
		}
		return true
	case len(m.Flag) > 0:
		for _, x := range args {
			if x.Dynamic {
				continue
			}
			if x.Value == "--" {
				return false
			}
			for _, f := range m.Flag {
				if analysis.ArgHasFlag(x.Value, f) {
					return true
				}
			}
		}
	case len(m.Seq) > 0:
		for i := 0; i+len(m.Seq) <= len(args); i++ {
			ok := true
			for j, pat := range m.Seq {
				if args[i+j].Dynamic || !globMatch(pat, args[i+j].Value) {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	case len(m.Glob) > 0:
		for _, x := range args {
			if x.Dynamic {
				continue
			}
			for _, pat := range m.Glob {
				if globMatch(pat, x.Value) {
					return true
				}
			}
		}
	case m.Regex != "":
		re := compiled(m.Regex, true)
		for _, x := range args {
			if !x.Dynamic && re != nil && re.MatchString(x.Value) {
				return true
			}
		}
	}
	return false
}

// patterns caches compiled patterns and expressions.
var patterns sync.Map // string → *regexp.Regexp (nil when invalid)

// compiled returns the compiled shell pattern (regex false) or regular
// expression (regex true) s.
func compiled(s string, regex bool) *regexp.Regexp {
	key := "g" + s
	if regex {
		key = "r" + s
	}
	if v, ok := patterns.Load(key); ok {
		return v.(*regexp.Regexp)
	}
	var re *regexp.Regexp
	var err error
	if regex {
		re, err = regexp.Compile(s)
	} else {
		re, err = CompileGlob(s)
	}
	if err != nil {
		re = nil
	}
	patterns.Store(key, re)
	return re
}

// globMatch matches s against the shell pattern pat.
func globMatch(pat, s string) bool {
	if !strings.ContainsAny(pat, "*?[\\") {
		return pat == s
	}
	re := compiled(pat, false)
	return re != nil && re.MatchString(s)
}
