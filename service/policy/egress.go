package policy

// This file holds the per-agent egress allowlists:
//
//	policy.egress_allowlist_by_agent  agent → [entry, ...]
//
// An agent listed there gets its own list in place of
// policy.egress_allowlist (an empty list is no egress for that agent);
// every other agent gets policy.egress_allowlist.

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

// EgressByAgent maps an agent to the egress allowlist its commands get.
type EgressByAgent map[string][]string

// Limits on the map.
const (
	maxEgressAgents  = 32
	maxEgressEntries = 256
)

// EgressAllowlistFor returns the allowlist a command of agent gets.
func (p *Policy) EgressAllowlistFor(agent string) (list []string, field string) {
	if l, ok := p.EgressAllowlistByAgent[agent]; ok {
		return l, "policy.egress_allowlist_by_agent." + agent
	}
	return p.EgressAllowlist, "policy.egress_allowlist"
}

func (m EgressByAgent) problems() []mapProblem {
	var out []mapProblem
	for _, k := range sortedKeys(m) {
		if !agentRE().MatchString(k) {
			out = append(out, mapProblem{k, "not an agent name, like claude-code, cli or an MCP client's name"})
		}
		entries := m[k]
		if len(entries) > maxEgressEntries {
			out = append(out, mapProblem{k, fmt.Sprintf("%d entries is too many; want at most %d", len(entries), maxEgressEntries)})
		}
		for i, e := range entries {
			if _, err := egress.ParseEntry(e); err != nil {
				out = append(out, mapProblem{fmt.Sprintf("%s[%d]", k, i), fmt.Sprintf("%q %v", e, err)})
			}
		}
	}
	if len(m) > maxEgressAgents {
		out = append(out, mapProblem{"", fmt.Sprintf("%d agents is too many; want at most %d", len(m), maxEgressAgents)})
	}
	return out
}

// DecodeNode decodes a mapping of agents to allowlists.
func (m *EgressByAgent) DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error {
	out, err := decodeListMap(n, errf, `a mapping like {cli: ["*.github.com"]}`, "an agent name", `a list of egress entries like ["*.github.com", "pypi.org:443"]`, "an egress entry",
		func(s map[string][]string) []mapProblem { return EgressByAgent(s).problems() })
	if err == nil {
		*m = out
	}
	return err
}

// String writes m as a YAML flow mapping, sorted by key.
func (m EgressByAgent) String() string { return flowListMap(m) }

// narrowEgressByAgent checks the user's per-agent lists against the
// managed file: each agent's entries must be covered by the managed list
// that agent would otherwise get (its managed per-agent list, or else the
// managed policy.egress_allowlist when the managed file sets one), and
// every managed per-agent list is kept (dropping one would hand that agent
// a list the managed file did not choose for it).
func narrowEgressByAgent(p string, user, managed *layer) []error {
	u := user.vals.Policy.EgressAllowlistByAgent
	var m EgressByAgent
	if managed.has(p) {
		m = managed.vals.Policy.EgressAllowlistByAgent
	}
	global, hasGlobal := managed.vals.Policy.EgressAllowlist, managed.has("policy.egress_allowlist")
	mp, _ := managedPorts(managed)
	up := userPorts(user, managed)
	us := user.source(p)
	var errs []error
	for _, agent := range sortedKeys(m) {
		if _, ok := u[agent]; !ok {
			errs = append(errs, errAt(us, p, "%s: the managed list %s (%s) is missing; keep it or narrow it",
				agent, quoteList(m[agent]), managed.source(p)))
		}
	}
	for _, agent := range sortedKeys(u) {
		bound, ms := global, managed.source("policy.egress_allowlist")
		if l, ok := m[agent]; ok {
			bound, ms = l, managed.source(p)
		} else if !hasGlobal {
			continue // the managed file says nothing about this agent
		}
		for i, e := range u[agent] {
			if !egressCovered(e, bound, up, mp) {
				errs = append(errs, errAt(us, p, "%s[%d]: %q is not allowed by the managed list %s (%s); use entries that list covers",
					agent, i, e, quoteList(bound), ms))
			}
		}
	}
	return errs
}

// mergeEgressByAgent returns cur with the user's lists laid over it: an
// agent the user names gets the user's list, the others keep theirs.
func mergeEgressByAgent(cur, user EgressByAgent) EgressByAgent {
	out := EgressByAgent{}
	for k, v := range cur {
		out[k] = slices.Clone(v)
	}
	for k, v := range user {
		out[k] = slices.Clone(v)
	}
	return out
}
