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

	"github.com/gatehouse-dev/gatehouse/internal/scale"
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

// The values of policy.egress_unknown: what a connection to a destination
// no allowlist entry covers gets.
const (
	// EgressAsk holds it for a person's answer, when the service is there
	// to ask one; without it, it is refused as under deny.
	EgressAsk = "ask"
	// EgressDeny refuses it.
	EgressDeny = "deny"
)

// EgressUnknownModes are the values of policy.egress_unknown, the widest
// first: a managed deny holds.
var EgressUnknownModes = scale.Of(scale.Step{EgressAsk}, scale.Step{EgressDeny})

// ManagedEgress is the managed file's bound on what an egress approval may
// grant: an "always", "session" or "once" answer allows only what the
// managed list the agent's commands get allows.
type ManagedEgress struct {
	// File is the managed file.
	File string
	// Allowlist is the managed policy.egress_allowlist, when HasAllowlist.
	Allowlist    []string
	HasAllowlist bool
	// ByAgent are the managed per-agent lists.
	ByAgent EgressByAgent
	// Ports are what a managed entry without ":port" allows.
	Ports []int
}

// managedEgress returns the managed file's egress bound, nil when it sets
// no allowlist.
func managedEgress(managed *layer) *ManagedEgress {
	if managed == nil || !managed.has("policy.egress_allowlist") && !managed.has("policy.egress_allowlist_by_agent") {
		return nil
	}
	ports, _ := managedPorts(managed)
	m := &ManagedEgress{File: managed.file, Ports: slices.Clone(ports), ByAgent: EgressByAgent{}}
	if managed.has("policy.egress_allowlist") {
		m.Allowlist, m.HasAllowlist = slices.Clone(managed.vals.Policy.EgressAllowlist), true
	}
	if managed.has("policy.egress_allowlist_by_agent") {
		for k, v := range managed.vals.Policy.EgressAllowlistByAgent {
			m.ByAgent[k] = slices.Clone(v)
		}
	}
	return m
}

// Bound returns the managed list that bounds agent's approvals and the
// field it is, ok false when there is none.
func (m *ManagedEgress) Bound(agent string) (list []string, field string, ok bool) {
	if m == nil {
		return nil, "", false
	}
	if l, ok := m.ByAgent[agent]; ok {
		return l, "policy.egress_allowlist_by_agent." + agent, true
	}
	if m.HasAllowlist {
		return m.Allowlist, "policy.egress_allowlist", true
	}
	return nil, "", false
}

// Allows reports whether the managed file lets agent's commands reach
// what the allowlist entry allows (true when it sets no bound).
func (m *ManagedEgress) Allows(agent, entry string) bool {
	list, _, ok := m.Bound(agent)
	return !ok || egressCovered(entry, list, m.Ports, m.Ports)
}

// EgressSavedFor returns the saved allowlist entries ("always" answers,
// and those saved for agent alone) agent's commands get: those the
// managed bound allows for it.
func (c *Config) EgressSavedFor(agent string) []string {
	var out []string
	for _, e := range append(slices.Clone(c.Policy.EgressSaved), c.Policy.EgressSavedByAgent[agent]...) {
		if c.ManagedEgress.Allows(agent, e) && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// takeSavedEgress takes the saved rules file's policy.egress_allowlist
// and policy.egress_allowlist_by_agent out of its layer — entries added
// to every agent's list (or to one agent's), not lists that replace the
// ones in force — and returns them. Each must parse and, when the managed
// file bounds the agent's approvals, be covered by that bound.
func takeSavedEgress(saved, managed *layer) ([]string, EgressByAgent, []error) {
	const p, pa = "policy.egress_allowlist", "policy.egress_allowlist_by_agent"
	if saved == nil {
		return nil, nil, nil
	}
	var errs []error
	bound := managedEgress(managed)
	check := func(agent, s string, at Source, field string) {
		if _, err := egress.ParseEntry(s); err != nil {
			errs = append(errs, errAt(at, field, "%q %v", s, err))
			return
		}
		if l, f, ok := bound.Bound(agent); ok && !bound.Allows(agent, s) {
			errs = append(errs, errAt(at, field, "%q is not allowed by the managed %s %s (%s); remove it", s, f, quoteList(l), bound.File))
		}
	}
	var list []string
	if saved.has(p) {
		list = slices.Clone(saved.vals.Policy.EgressAllowlist)
		for i, s := range list {
			check("", s, saved.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i))
		}
		delete(saved.set, p)
		saved.vals.Policy.EgressAllowlist = nil
	}
	var byAgent EgressByAgent
	if saved.has(pa) {
		byAgent = EgressByAgent{}
		for _, agent := range sortedKeys(saved.vals.Policy.EgressAllowlistByAgent) {
			l := saved.vals.Policy.EgressAllowlistByAgent[agent]
			for i, s := range l {
				check(agent, s, saved.source(pa), fmt.Sprintf("%s.%s[%d]", pa, agent, i))
			}
			byAgent[agent] = slices.Clone(l)
		}
		delete(saved.set, pa)
		saved.vals.Policy.EgressAllowlistByAgent = nil
	}
	return list, byAgent, errs
}
