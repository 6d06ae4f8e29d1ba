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

// The proposed rule matches the deciding node and nothing else: the
// command by its path, its arguments exactly (glob characters quoted),
// top_level.
func TestProposeRule(t *testing.T) {
	t.Parallel()
	p := &Policy{Rules: Rules{{Name: "ask-push", Action: ActionAsk, Command: []string{"git"}, Args: []ArgMatch{{Seq: []string{"push"}}}}}, DynamicAction: ActionAsk}
	tree := savedTree(`git push origin 'feat*'`)
	v := Decide(tree, p)
	if v.Action != ActionAsk || v.Origin != OriginUser {
		t.Fatalf("verdict %+v", v)
	}
	r := ProposeRule(tree, v, ActionAllow)
	if r == nil || r.Command[0] != "/usr/bin/git" || len(r.Args) != 1 || strings.Join(r.Args[0].Exact, " ") != `push origin feat\*` || r.Where != WhereTopLevel || !strings.HasPrefix(r.Name, "approved-git-") {
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

// What was approved runs, and nothing more: a call that adds an argument
// anywhere, changes one, or has one only known at run time is not
// covered by the rule an approval proposes.
func TestProposeRuleExact(t *testing.T) {
	t.Parallel()
	p := &Policy{Rules: Rules{{Name: "ask-git", Action: ActionAsk, Command: []string{"git"}}}}
	propose := func(cmd string) *Rule {
		t.Helper()
		tree := savedTree(cmd)
		v := Decide(tree, p)
		if v.Action != ActionAsk {
			t.Fatalf("%s: verdict %+v", cmd, v)
		}
		return ProposeRule(tree, v, ActionAllow)
	}
	matches := func(r *Rule, cmd string) bool {
		for _, n := range savedTree(cmd).Nodes {
			if RuleMatches(r, n) {
				return true
			}
		}
		return false
	}
	r := propose("git push origin feat")
	if r == nil || !matches(r, "git push origin feat") || !matches(r, "cd /w && git push origin feat") {
		t.Fatalf("proposed %+v does not match the call", r)
	}
	for _, other := range []string{
		"git push origin feat --force",
		"git -c core.sshCommand='sh -c id' push origin feat --delete",
		"git push origin feat2 +refs/heads/feat2:refs/heads/other",
		"git push origin feat feat2",
		"git --force push origin feat",
		"git push origin",
		"git push origin 'feat*'",
	} {
		if matches(r, other) {
			t.Errorf("the rule approved for `git push origin feat` matches %q", other)
		}
	}
	// A command given no arguments: exact: [], which holds for none.
	st := propose("git")
	if st == nil || len(st.Args) != 1 || st.Args[0].Exact == nil || len(st.Args[0].Exact) != 0 || !matches(st, "git") || matches(st, "git status") {
		t.Errorf("proposed for a bare git: %+v", st)
	}
	if y := RuleYAML(st); !strings.Contains(y, "exact: []") {
		t.Errorf("YAML of a bare git's rule does not say exact: []:\n%s", y)
	}
	if back, err := ParseRule(RuleYAML(st)); err != nil || !sameRule(back, st) || matches(back, "git status") {
		t.Errorf("round trip of exact: []: %+v %v", back, err)
	}
	// An argument only known at run time: no rule can say which value
	// was seen, so none is proposed.
	if d := propose(`git push origin "$(cat branch)"`); d != nil {
		t.Errorf("proposed %+v for a dynamic argument", d)
	}
	// The person's own edit may generalise: seq, glob or patterns.
	gen, err := ParseRule("{name: push-feat, action: allow, command: [git], args: [{exact: [push, origin, 'feat*']}]}")
	if err != nil || !matches(gen, "git push origin feat2") || matches(gen, "git push origin feat2 --force") {
		t.Errorf("an edited exact rule: %+v %v", gen, err)
	}
	if _, err := ParseRule("{name: x, action: allow, args: [{exact: push}]}"); err == nil || !strings.Contains(err.Error(), "args[0].exact") {
		t.Errorf("exact given a string: %v", err)
	}
	if _, err := ParseRule("{name: x, action: allow, args: [{exact: [push], seq: [x]}]}"); err == nil {
		t.Error("a matcher with exact and seq parsed")
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
	if err == nil || !strings.Contains(err.Error(), SavedRulesName+":2: policy.default_action: the saved rules file holds policy.rules, policy.egress_allowlist, policy.egress_allowlist_by_agent and policy.egress_denylist only") {
		t.Errorf("got %v", err)
	}
	// Missing: nothing saved.
	if rs, err := ReadSavedRules(filepath.Join(dir, "none.yaml")); err != nil || len(rs) != 0 {
		t.Errorf("missing: %v %v", rs, err)
	}
}

// The rule a person reads shows a bidi control or a zero-width space as
// an escape, never raw, and parses back to the same rule: what is shown
// is what is matched.
func TestRuleYAMLShowsHiddenCharacters(t *testing.T) {
	t.Parallel()
	p := &Policy{Rules: Rules{{Name: "ask-cat", Action: ActionAsk, Command: []string{"cat"}}}}
	tree := savedTree("cat 'notes\u202etxt.exe' 'a\u200bb' 'tab\there' 'x\U000e0041'")
	v := Decide(tree, p)
	r := ProposeRule(tree, v, ActionAllow)
	if r == nil {
		t.Fatalf("no rule for %+v", v)
	}
	y := RuleYAML(r)
	for _, c := range y {
		if c == '\t' || c >= 0x80 && c != '…' {
			t.Errorf("the rule's YAML holds %U raw:\n%s", c, y)
		}
	}
	if !strings.Contains(y, `\u202e`) || !strings.Contains(y, `\u200b`) || !strings.Contains(strings.ToLower(y), `\u000e0041`) {
		t.Errorf("the rule's YAML does not show the characters escaped:\n%s", y)
	}
	back, err := ParseRule(y)
	if err != nil || !sameRule(back, r) || !RuleMatches(back, tree.Nodes[v.Node]) {
		t.Errorf("round trip: %+v %v\n%s", back, err, y)
	}
}
