package analysis_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// FuzzAnalyze checks, for any text, that analysis never panics or hangs,
// that the same text always yields the same tree and decision, and that a
// "safe" verdict (allow) implies the tree has no part analysis could not
// read (no dynamic node, no parse error). It is seeded from the corpus;
// crashers land in testdata/fuzz/FuzzAnalyze.
func FuzzAnalyze(f *testing.F) {
	for _, c := range readCorpus(f) {
		f.Add(c.cmd)
	}
	fx := analysis.CorpusFixture(f)
	pol := defaultPolicy()
	f.Fuzz(func(t *testing.T, cmd string) {
		opts := analysis.CorpusOptions(t, fx, "")
		type result struct {
			tree *analysis.Tree
			d    policy.Verdict
		}
		done := make(chan result, 1)
		go func() {
			tr := analysis.Analyze(cmd, opts)
			done <- result{tr, policy.Decide(tr, pol)}
		}()
		var r1 result
		select {
		case r1 = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("analysis of %q did not finish in 10s", cmd)
		}
		t2 := analysis.Analyze(cmd, opts)
		d2 := policy.Decide(t2, pol)
		if r1.d != d2 {
			t.Fatalf("%q: decisions differ between runs:\n%+v\n%+v", cmd, r1.d, d2)
		}
		j1, _ := json.Marshal(r1.tree)
		j2, _ := json.Marshal(t2)
		if string(j1) != string(j2) {
			t.Fatalf("%q: trees differ between runs", cmd)
		}
		if r1.d.Action == policy.ActionAllow {
			if r1.tree.ParseError != nil {
				t.Fatalf("%q: allowed with a parse error", cmd)
			}
			for _, n := range r1.tree.Nodes {
				if n.Has(analysis.FlagDynamic) {
					t.Fatalf("%q: allowed with a dynamic node #%d (%s)", cmd, n.ID, n.Notes)
				}
			}
		}
	})
}
