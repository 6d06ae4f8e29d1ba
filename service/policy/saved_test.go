package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

func savedTree(cmd string) *analysis.Tree {
	return analysis.Analyze(cmd, analysis.Options{
		Dialect: "bash", Dir: "/w", Env: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin"},
		LookPath: func(dir, name string) bool { return dir == "/usr/bin" && (name == "git" || name == "sudo") },
	})
}

// The proposed rule matches the deciding node and, narrowly, little else:
// the command by its path, every static argument in a row (glob
// characters quoted), top_level.
func TestProposeRule(t *testing.T) {
	t.Parallel()
	p := &Policy{Rules: Rules{{Name: "ask-push", Action: ActionAsk, Command: []string{"git"}, Args: []ArgMatch{{Seq: []string{"push"}}}}}, DynamicAction: ActionAsk}
	tree := savedTree(`git push origin 'feat*'`)
	v := Decide(tree, p)
	if v.Action != ActionAsk || v.Origin != OriginUser {
		t.Fatalf("verdict %+v", v)
	}
	r := ProposeRule(tree, v, ActionAllow)
	if r == nil || r.Command[0] != "/usr/bin/git" || len(r.Args) != 1 || strings.Join(r.Args[0].Seq, " ") != `push origin feat\*` || r.Where != WhereTopLevel || !strings.HasPrefix(r.Name, "approved-git-") {
		t.Fatalf("proposed %+v", r)
	}
	if !RuleMatches(r, tree.Nodes[v.Node]) {
		t.Error("the proposed rule does not match its own node")
	}
	for _, other := range []string{"git push origin featx", "git push other feat*", "sudo git push origin 'feat*'"} {
		ot := savedTree(other)
		for _, n := range ot.Nodes {
			if RuleMatches(r, n) {
				t.Errorf("the proposed rule matches %q (node %s)", other, n.Text())
			}
		}
	}
	// Saved before the user's rules, it decides the command.
	p.Rules = append(Rules{*r}, p.Rules...)
	p.Rules[0].saved = true
	if v := Decide(savedTree(`git push origin 'feat*'`), p); v.Action != ActionAllow {
		t.Errorf("with the saved rule: %+v", v)
	}
	// The same rule has the same name; YAML parses back to it.
	if again := ProposeRule(tree, v, ActionAllow); again != nil && again.Name != r.Name {
		t.Errorf("names %s, %s", r.Name, again.Name)
	}
	back, err := ParseRule(RuleYAML(r))
	if err != nil || !sameRule(back, r) {
		t.Errorf("round trip: %+v %v", back, err)
	}
}

func TestParseRule(t *testing.T) {
	t.Parallel()
	if r, err := ParseRule(`{"name": "x", "action": "allow", "command": ["make"]}`); err != nil || r.Name != "x" {
		t.Errorf("json: %+v %v", r, err)
	}
	if r, err := ParseRule("- name: y\n  action: deny\n  command: [rm]\n"); err != nil || r.Name != "y" {
		t.Errorf("list: %+v %v", r, err)
	}
	for _, bad := range []string{"", "[", "name: x", "{name: x, action: allow, comand: [make]}", "[{name: a, action: allow}, {name: b, action: allow}]"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The saved rules file loads between the managed file and the user's:
// its rules are saved, user-tier rules before the user's; it may hold
// nothing else; a managed rule still decides.
func TestSavedRulesLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	saved := filepath.Join(dir, "state", SavedRulesName)
	r := Rule{Name: "approved-git-1", Action: ActionAllow, Command: []string{"git"}, Args: []ArgMatch{{Seq: []string{"push"}}}}
	if err := WriteSavedRules(saved, Rules{r}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(saved); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved file: %v %v", fi, err)
	}
	user := writeFile(t, dir, "config.yaml", "policy:\n  rules:\n    - {name: ask-push, action: ask, command: [git], args: [{seq: [push]}]}\n")
	managed := writeFile(t, dir, "managed.yaml", "policy:\n  rules:\n    - {name: no-force, action: deny, command: [git], args: [{flag: [--force]}]}\n")
	l, err := Load(LoadOptions{Home: testHome, UserFile: user, ManagedFile: managed, SavedRulesFile: saved})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, x := range l.Config.Policy.Rules {
		order = append(order, x.Origin()+":"+x.Name)
	}
	if got := strings.Join(order, " "); got != "managed:no-force saved:approved-git-1 user:ask-push" {
		t.Errorf("order %s", got)
	}
	if v := Decide(savedTree("git push origin x"), &l.Config.Policy); v.Action != ActionAllow {
		t.Errorf("saved allow: %+v", v)
	}
	if v := Decide(savedTree("git push --force origin x"), &l.Config.Policy); v.Action != ActionDeny || v.Origin != OriginManaged {
		t.Errorf("managed deny: %+v", v)
	}
	if len(l.Files) != 3 || l.Files[1] != saved {
		t.Errorf("files %v", l.Files)
	}
	rs, err := ReadSavedRules(saved)
	if err != nil || len(rs) != 1 || !rs[0].Saved() {
		t.Errorf("read back %+v %v", rs, err)
	}

	// Anything but policy.rules is refused, naming the file and line.
	os.WriteFile(saved, []byte("policy:\n  default_action: allow\n"), 0o600)
	_, err = Load(LoadOptions{Home: testHome, SavedRulesFile: saved})
	if err == nil || !strings.Contains(err.Error(), SavedRulesName+":2: policy.default_action: the saved rules file holds policy.rules only") {
		t.Errorf("got %v", err)
	}
	// Missing: nothing saved.
	if rs, err := ReadSavedRules(filepath.Join(dir, "none.yaml")); err != nil || len(rs) != 0 {
		t.Errorf("missing: %v %v", rs, err)
	}
}
