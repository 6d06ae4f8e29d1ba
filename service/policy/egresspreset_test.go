package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A preset saved for one agent goes into the saved rules file's
// policy.egress_allowlist_by_agent: that agent's commands get its entries,
// no other agent's do; saved again, nothing is added. Under a managed
// bound that does not allow them all for that agent, nothing is saved and
// the error names the managed file; an entry outside the bound in the file
// does not load, at its field.
func TestAllowEgressPresetForAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	saved := filepath.Join(dir, SavedRulesName)
	var s Saved
	p, added, err := AllowEgressPreset(&s, nil, "pypi", "claude-code")
	if err != nil || p.Name != "pypi" || !slices.Equal(added, []string{"pypi.org:443", "files.pythonhosted.org:443"}) {
		t.Fatalf("got %v %v %v", p.Name, added, err)
	}
	if len(s.EgressAllow) != 0 {
		t.Errorf("every agent's list got %v", s.EgressAllow)
	}
	if _, added, _ := AllowEgressPreset(&s, nil, "pypi", "claude-code"); len(added) != 0 {
		t.Errorf("saved twice: added %v", added)
	}
	if _, added, _ := AllowEgressPreset(&s, nil, "npm", ""); !slices.Equal(added, []string{"registry.npmjs.org:443"}) || !slices.Equal(s.EgressAllow, added) {
		t.Errorf("for every agent: %v %v", added, s.EgressAllow)
	}
	if err := WriteSaved(saved, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSaved(saved)
	if err != nil || !slices.Equal(back.EgressAllowByAgent["claude-code"], []string{"pypi.org:443", "files.pythonhosted.org:443"}) {
		t.Fatalf("read back %+v %v", back, err)
	}
	l, err := Load(LoadOptions{Home: testHome, SavedRulesFile: saved})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Config.EgressSavedFor("claude-code"), " "); got != "registry.npmjs.org:443 pypi.org:443 files.pythonhosted.org:443" {
		t.Errorf("claude-code gets %q", got)
	}
	if got := strings.Join(l.Config.EgressSavedFor("cli"), " "); got != "registry.npmjs.org:443" {
		t.Errorf("cli gets %q", got)
	}

	if _, _, err := AllowEgressPreset(&s, nil, "nosuch", "cli"); err == nil || !strings.Contains(err.Error(), `no egress preset is called "nosuch"; want one of npm, pypi`) {
		t.Errorf("unknown preset: %v", err)
	}
	if _, _, err := AllowEgressPreset(&s, nil, "npm", "bad agent"); err == nil {
		t.Error("a bad agent name was taken")
	}

	managed := writeFile(t, dir, "managed.yaml", "policy:\n  egress_allowlist: [\"*.npmjs.org\"]\n  egress_allowlist_by_agent:\n    claude-code: [\"*.npmjs.org\", \"pypi.org\"]\n")
	ml, err := Load(LoadOptions{Home: testHome, ManagedFile: managed})
	if err != nil {
		t.Fatal(err)
	}
	var s2 Saved
	_, _, err = AllowEgressPreset(&s2, ml.Config.ManagedEgress, "pypi", "claude-code")
	if err == nil || err.Error() != "files.pythonhosted.org:443 is not allowed by the managed policy.egress_allowlist_by_agent.claude-code ("+managed+"); nothing was saved" {
		t.Errorf("managed: %v", err)
	}
	if len(s2.EgressAllowByAgent)+len(s2.EgressAllow) != 0 {
		t.Errorf("saved %+v under the bound", s2)
	}
	_, err = Load(LoadOptions{Home: testHome, ManagedFile: managed, SavedRulesFile: saved})
	if err == nil || !strings.Contains(err.Error(), `policy.egress_allowlist_by_agent.claude-code[1]: "files.pythonhosted.org:443" is not allowed by the managed policy.egress_allowlist_by_agent.claude-code`) {
		t.Errorf("load under the bound: %v", err)
	}
	os.Remove(saved)
}
