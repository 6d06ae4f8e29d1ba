package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

// A managed egress_unknown: deny holds, and the user's wait is at most the
// managed one; a managed ask leaves the user free to deny.
func TestEgressUnknownNarrowing(t *testing.T) {
	t.Parallel()
	if _, got := loadFiles(t, "policy:\n  egress_unknown: deny\n", "policy:\n  egress_unknown: ask\n"); !strings.Contains(got,
		`config.yaml:2: policy.egress_unknown: "ask" widens the managed value "deny" (managed.yaml:2); only deny is allowed`) {
		t.Errorf("got %q", got)
	}
	if l, got := loadFiles(t, "policy:\n  egress_unknown: ask\n", "policy:\n  egress_unknown: deny\n"); got != "" || l.Config.Policy.EgressUnknown != EgressDeny {
		t.Errorf("got %q", got)
	}
	if _, got := loadFiles(t, "policy:\n  egress_approval_timeout_seconds: 30\n", "policy:\n  egress_approval_timeout_seconds: 90\n"); !strings.Contains(got,
		"config.yaml:2: policy.egress_approval_timeout_seconds: 90 widens the managed value 30") {
		t.Errorf("got %q", got)
	}
	if _, got := loadFiles(t, "", "policy:\n  egress_unknown: maybe\n  egress_approval_timeout_seconds: 1\n"); !strings.Contains(got, `policy.egress_unknown: "maybe" is not one of ask, deny`) ||
		!strings.Contains(got, "policy.egress_approval_timeout_seconds: 1 is out of range; want 5 to 600") {
		t.Errorf("got %q", got)
	}
}

// The saved rules file's egress entries: the allowlist's are added to
// every agent's list (not in place of the user's), within the managed
// bound; the denylist's are unioned with the user's. An entry outside the
// managed list is refused at its line.
func TestSavedEgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	saved := filepath.Join(dir, SavedRulesName)
	if err := WriteSaved(saved, Saved{EgressAllow: []string{"registry.npmjs.org:443"}, EgressDeny: []string{"evil.test:443"}}); err != nil {
		t.Fatal(err)
	}
	// Saving rules keeps the destinations.
	if err := WriteSavedRules(saved, Rules{}); err != nil {
		t.Fatal(err)
	}
	user := writeFile(t, dir, "config.yaml", "policy:\n  egress_allowlist: [github.com]\n  egress_denylist: [bad.test]\n  egress_allowlist_by_agent:\n    cli: [pypi.org]\n")
	l, err := Load(LoadOptions{Home: testHome, UserFile: user, SavedRulesFile: saved})
	if err != nil {
		t.Fatal(err)
	}
	c := &l.Config
	if got := strings.Join(c.Policy.EgressAllowlist, " "); got != "github.com" {
		t.Errorf("egress_allowlist %q", got)
	}
	if got := strings.Join(c.EgressSavedFor("cli"), " "); got != "registry.npmjs.org:443" {
		t.Errorf("saved for cli %q", got)
	}
	if got := strings.Join(c.Policy.EgressDenylist, " "); got != "evil.test:443 bad.test" {
		t.Errorf("egress_denylist %q", got)
	}

	// Under a managed list, an entry outside it does not load; per-agent
	// managed lists bound each agent's share.
	managed := writeFile(t, dir, "managed.yaml", "policy:\n  egress_allowlist: [\"*.github.com\"]\n  egress_allowlist_by_agent:\n    cli: [\"*.npmjs.org\"]\n")
	_, err = Load(LoadOptions{Home: testHome, ManagedFile: managed, SavedRulesFile: saved})
	if err == nil || !strings.Contains(err.Error(), SavedRulesName+`:8: policy.egress_allowlist[0]: "registry.npmjs.org:443" is not allowed by the managed policy.egress_allowlist ["*.github.com"]`) {
		t.Errorf("got %v", err)
	}
	os.WriteFile(managed, []byte("policy:\n  egress_allowlist_by_agent:\n    claude-code: [\"*.github.com\"]\n    cli: [\"*.npmjs.org\"]\n"), 0o600)
	l, err = Load(LoadOptions{Home: testHome, ManagedFile: managed, SavedRulesFile: saved})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config.EgressSavedFor("cli"); len(got) != 1 {
		t.Errorf("cli gets %v", got)
	}
	if got := l.Config.EgressSavedFor("claude-code"); len(got) != 0 {
		t.Errorf("claude-code gets %v, outside its managed list", got)
	}
	if m := l.Config.ManagedEgress; m.Allows("claude-code", "registry.npmjs.org:443") || !m.Allows("claude-code", "api.github.com:443") || !m.Allows("other", "x.test:1") {
		t.Errorf("managed bound %+v", m)
	}
}

// Every preset entry is an exact host:port the proxy parses, and
// docs/egress.md lists each preset with its entries, as the table has them.
func TestEgressPresets(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "egress.md"))
	if err != nil {
		t.Skipf("docs/egress.md is not beside this copy of the package: %v", err)
	}
	for _, p := range EgressPresets {
		for _, e := range p.Entries {
			pe, err := egress.ParseEntry(e)
			if _, wild := pe.Wildcard(); err != nil || pe.Port == 0 || wild || pe.Any() {
				t.Errorf("%s: %q: %v", p.Name, e, err)
			}
			if got, ok := EgressPresetOf(e); !ok || got.Name != p.Name {
				t.Errorf("%s: EgressPresetOf(%q) = %v", p.Name, e, got.Name)
			}
		}
		row := "| `" + p.Name + "` | " + p.What + " | `" + strings.Join(p.Entries, "`, `") + "` |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/egress.md has no row %q", row)
		}
	}
}
