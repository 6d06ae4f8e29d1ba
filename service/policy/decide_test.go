package policy

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

func TestRuleMatches(t *testing.T) {
	t.Parallel()
	// git push -fu origin $RANDOM -- -x, at the top and inside sudo.
	o := analysis.Options{
		Dialect: "bash", Dir: "/w", Env: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin"},
		LookPath: func(dir, name string) bool { return dir == "/usr/bin" && (name == "git" || name == "sudo") },
	}
	tree := analysis.Analyze(`git push -fu origin "$RANDOM" -- -x; sudo git push -fu origin "$RANDOM" -- -x`, o)
	n := tree.Nodes[0]
	if n.Name != "git" || n.Path != "/usr/bin/git" || !n.TopLevel() || len(n.Argv) != 7 || !n.Argv[4].Dynamic {
		t.Fatalf("node %+v", n)
	}
	for _, tc := range []struct {
		r    Rule
		want bool
	}{
		{Rule{}, true},
		{Rule{Command: []string{"git"}}, true},
		{Rule{Command: []string{"g*"}}, true},
		{Rule{Command: []string{"/usr/bin/git"}}, true},
		{Rule{Command: []string{"/usr/local/*"}}, false},
		{Rule{Command: []string{"gitk"}}, false},
		{Rule{Args: []ArgMatch{{Flag: []string{"-f"}}}}, true},       // in a cluster
		{Rule{Args: []ArgMatch{{Flag: []string{"-x"}}}}, false},      // after --
		{Rule{Args: []ArgMatch{{Flag: []string{"--force"}}}}, false}, // long flags are not clustered
		{Rule{Args: []ArgMatch{{Seq: []string{"push", "-fu", "origin"}}}}, true},
		{Rule{Args: []ArgMatch{{Seq: []string{"origin", "*"}}}}, false}, // a dynamic argument never matches
		{Rule{Args: []ArgMatch{{Glob: []string{"ori*"}}}}, true},
		{Rule{Args: []ArgMatch{{Regex: "RANDOM"}}}, false},
		{Rule{Args: []ArgMatch{{Regex: "^or"}, {Seq: []string{"push"}}}}, true},
		{Rule{Where: "top_level"}, true},
		{Rule{Flags: []string{"dynamic"}}, false},
	} {
		if got := RuleMatches(&tc.r, n); got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.r, got, tc.want)
		}
	}
	if n := tree.Nodes[2]; n.Name != "git" || n.TopLevel() || RuleMatches(&Rule{Where: "top_level"}, n) {
		t.Errorf("top_level matched a nested node")
	}
}

// Every shape analysis marks is denied by one built-in rule named for
// it; the names rules may use as flags are analysis's own.
func TestBuiltinsNameTheirShapes(t *testing.T) {
	t.Parallel()
	by := map[analysis.Shape]string{}
	for _, b := range BuiltinRules {
		if string(b.Shape) != b.Name {
			t.Errorf("built-in rule %s denies shape %q", b.Name, b.Shape)
		}
		if other, dup := by[b.Shape]; dup {
			t.Errorf("shape %s denied by %s and %s", b.Shape, other, b.Name)
		}
		by[b.Shape] = b.Name
	}
	for _, s := range analysis.AllShapes {
		if by[s] == "" {
			t.Errorf("shape %s has no built-in rule", s)
		}
	}
	if len(by) != len(analysis.AllShapes) {
		t.Errorf("%d built-in rules for %d shapes", len(by), len(analysis.AllShapes))
	}
}
