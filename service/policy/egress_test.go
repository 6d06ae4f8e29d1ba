package policy

import (
	"reflect"
	"strings"
	"testing"
)

func TestEgressByAgentLoad(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", `policy:
  egress_allowlist: ["*.github.com"]
  egress_allowlist_by_agent:
    cli: ["pypi.org:443", "*.github.com"]
    claude-code: []
`)
	if errText != "" {
		t.Fatal(errText)
	}
	p := &l.Config.Policy
	for _, tc := range []struct {
		agent, field string
		want         []string
	}{
		{"cli", "policy.egress_allowlist_by_agent.cli", []string{"pypi.org:443", "*.github.com"}},
		{"claude-code", "policy.egress_allowlist_by_agent.claude-code", []string{}},
		{"my-mcp", "policy.egress_allowlist", []string{"*.github.com"}},
	} {
		got, field := p.EgressAllowlistFor(tc.agent)
		if !reflect.DeepEqual(got, tc.want) || field != tc.field {
			t.Errorf("EgressAllowlistFor(%q) = %q, %s; want %q, %s", tc.agent, got, field, tc.want, tc.field)
		}
	}
	var b strings.Builder
	l.Show(&b)
	if !regexpLine(b.String(), "policy.egress_allowlist_by_agent:", `{claude-code: [], cli: ["pypi.org:443", "*.github.com"]}`) {
		t.Errorf("Show:\n%s", b.String())
	}
}

func TestEgressByAgentInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, user, want string }{
		{"not a mapping", "policy:\n  egress_allowlist_by_agent: [cli]\n",
			`config.yaml:2: policy.egress_allowlist_by_agent: want a mapping like {cli: ["*.github.com"]}`},
		{"not a list", "policy:\n  egress_allowlist_by_agent:\n    cli: github.com\n",
			`config.yaml:3: policy.egress_allowlist_by_agent: cli: want a list of egress entries like ["*.github.com", "pypi.org:443"], got "github.com"`},
		{"bad agent", "policy:\n  egress_allowlist_by_agent:\n    \"two words\": []\n",
			`config.yaml:3: policy.egress_allowlist_by_agent: two words: not an agent name`},
		{"bad entry", "policy:\n  egress_allowlist_by_agent:\n    cli: [github.com, \"*.com\"]\n",
			`config.yaml:3: policy.egress_allowlist_by_agent: cli[1]: "*.com"`},
		{"bad port", "policy:\n  egress_allowlist_by_agent:\n    cli: [\"github.com:99999\"]\n",
			`policy.egress_allowlist_by_agent: cli[0]: "github.com:99999"`},
	} {
		_, got := loadFiles(t, "", tc.user)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestEgressByAgentNarrow(t *testing.T) {
	t.Parallel()
	// The managed file bounds every agent through its global list, and
	// claude-code through its own.
	const managed = `policy:
  egress_allowlist: ["*.github.com", pypi.org]
  egress_allowlist_by_agent:
    claude-code: [api.github.com]
`
	for _, tc := range []struct{ name, user, want string }{
		{"narrows", "policy:\n  egress_allowlist_by_agent:\n    claude-code: []\n    cli: [pypi.org]\n", ""},
		{"adds an agent within the global list", "policy:\n  egress_allowlist_by_agent:\n    claude-code: [api.github.com]\n    my-mcp: [\"*.github.com\"]\n", ""},
		{"agent list wider than the global list",
			"policy:\n  egress_allowlist_by_agent:\n    claude-code: [api.github.com]\n    cli: [\"*\"]\n",
			`config.yaml:2: policy.egress_allowlist_by_agent: cli[0]: "*" is not allowed by the managed list ["*.github.com", "pypi.org"] (managed.yaml:2)`},
		{"agent list wider than its managed list",
			"policy:\n  egress_allowlist_by_agent:\n    claude-code: [pypi.org]\n",
			`policy.egress_allowlist_by_agent: claude-code[0]: "pypi.org" is not allowed by the managed list ["api.github.com"] (managed.yaml:3)`},
		{"managed agent dropped",
			"policy:\n  egress_allowlist_by_agent:\n    cli: []\n",
			`policy.egress_allowlist_by_agent: claude-code: the managed list ["api.github.com"] (managed.yaml:3) is missing; keep it or narrow it`},
	} {
		l, got := loadFiles(t, managed, tc.user)
		if tc.want == "" {
			if got != "" {
				t.Errorf("%s: %s", tc.name, got)
			} else if _, ok := l.Config.Policy.EgressAllowlistByAgent["claude-code"]; !ok {
				t.Errorf("%s: the managed agent's list is gone: %v", tc.name, l.Config.Policy.EgressAllowlistByAgent)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}

	// A managed global list alone bounds per-agent lists the user adds.
	if _, got := loadFiles(t, "policy:\n  egress_allowlist: [pypi.org]\n",
		"policy:\n  egress_allowlist_by_agent:\n    cli: [evil.example]\n"); !strings.Contains(got, `cli[0]: "evil.example" is not allowed by the managed list ["pypi.org"]`) {
		t.Errorf("global bound: got %q", got)
	}
	// An agent the user does not name keeps the managed list.
	l, got := loadFiles(t, managed, "policy:\n  egress_allowlist_by_agent:\n    claude-code: [api.github.com]\n    cli: []\n")
	if got != "" {
		t.Fatal(got)
	}
	if want := (EgressByAgent{"claude-code": {"api.github.com"}, "cli": {}}); !reflect.DeepEqual(l.Config.Policy.EgressAllowlistByAgent, want) {
		t.Errorf("merged = %v, want %v", l.Config.Policy.EgressAllowlistByAgent, want)
	}
	// Without a managed file the user's lists are free.
	if _, got := loadFiles(t, "", "policy:\n  egress_allowlist_by_agent:\n    cli: [\"*\"]\n"); got != "" {
		t.Error(got)
	}
}
