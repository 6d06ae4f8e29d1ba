package policy

// This file holds the egress presets: the exact hosts each common package
// ecosystem's tools reach to fetch packages, so that one step allows them
// (`gatehouse egress allow --preset npm`), and an egress request for one of
// them can say so. Each entry is host:443, as an "always" answer saves it.

import (
	"fmt"
	"slices"
	"strings"
)

// An EgressPreset names an ecosystem and the allowlist entries its tools
// need.
type EgressPreset struct {
	Name, What string
	Entries    []string
}

// EgressPresets is the table, by name.
var EgressPresets = []EgressPreset{
	{"npm", "the npm registry", []string{"registry.npmjs.org:443"}},
	{"pypi", "the Python Package Index", []string{"pypi.org:443", "files.pythonhosted.org:443"}},
	{"go", "the Go module proxy and checksum database", []string{"proxy.golang.org:443", "sum.golang.org:443"}},
	{"crates", "crates.io", []string{"index.crates.io:443", "static.crates.io:443", "crates.io:443"}},
	{"github", "GitHub (git over https, the API, downloads)", []string{"github.com:443", "api.github.com:443", "codeload.github.com:443", "objects.githubusercontent.com:443", "raw.githubusercontent.com:443"}},
	{"rubygems", "RubyGems", []string{"rubygems.org:443", "index.rubygems.org:443"}},
}

// EgressPresetNamed returns the preset called name.
func EgressPresetNamed(name string) (EgressPreset, bool) {
	i := slices.IndexFunc(EgressPresets, func(p EgressPreset) bool { return p.Name == name })
	if i < 0 {
		return EgressPreset{}, false
	}
	return EgressPresets[i], true
}

// EgressPresetOf returns the preset whose entries hold entry (host:port),
// if any.
func EgressPresetOf(entry string) (EgressPreset, bool) {
	entry = strings.ToLower(entry)
	for _, p := range EgressPresets {
		if slices.Contains(p.Entries, entry) {
			return p, true
		}
	}
	return EgressPreset{}, false
}

// EgressPresetNames lists the presets' names, in table order.
func EgressPresetNames() []string {
	out := make([]string, len(EgressPresets))
	for i, p := range EgressPresets {
		out[i] = p.Name
	}
	return out
}

// AllowEgressPreset adds the entries of the preset called name to s (what
// the saved rules file holds) that it lacks: for agent alone
// (policy.egress_allowlist_by_agent there), or for every agent when agent
// is "" (policy.egress_allowlist). It returns the preset and the entries
// added, none when s had them all. When m (the managed bound, nil for
// none) does not allow every entry for that agent, nothing is added and
// the error names the managed file. `gatehouse egress allow --preset` and
// an egress request's preset answer both save a preset through it.
func AllowEgressPreset(s *Saved, m *ManagedEgress, name, agent string) (EgressPreset, []string, error) {
	p, ok := EgressPresetNamed(name)
	if !ok {
		return p, nil, fmt.Errorf("no egress preset is called %q; want one of %s", name, strings.Join(EgressPresetNames(), ", "))
	}
	if agent != "" && !agentRE().MatchString(agent) {
		return p, nil, fmt.Errorf("%q is not an agent name, like claude-code, cli or an MCP client's name", agent)
	}
	for _, e := range p.Entries {
		if !m.Allows(agent, e) {
			_, field, _ := m.Bound(agent)
			return p, nil, fmt.Errorf("%s is not allowed by the managed %s (%s); nothing was saved", e, field, m.File)
		}
	}
	list := s.EgressAllow
	if agent != "" {
		list = s.EgressAllowByAgent[agent]
	}
	var added []string
	for _, e := range p.Entries {
		if !slices.Contains(list, e) {
			list = append(list, e)
			added = append(added, e)
		}
	}
	switch {
	case len(added) == 0:
	case agent == "":
		s.EgressAllow = list
	default:
		if s.EgressAllowByAgent == nil {
			s.EgressAllowByAgent = EgressByAgent{}
		}
		s.EgressAllowByAgent[agent] = list
	}
	return p, added, nil
}
