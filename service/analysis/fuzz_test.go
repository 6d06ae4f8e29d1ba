package analysis

import (
	"encoding/json"
	"testing"
	"time"

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
	fx := corpusFixture(f)
	pol := defaultPolicy()
	f.Fuzz(func(t *testing.T, cmd string) {
		opts := corpusOptions(t, fx, "")
		type result struct {
			tree *Tree
			d    Decision
		}
		done := make(chan result, 1)
		go func() {
			tr := Analyze(cmd, opts)
			done <- result{tr, Judge(tr, pol)}
		}()
		var r1 result
		select {
		case r1 = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("analysis of %q did not finish in 10s", cmd)
		}
		t2 := Analyze(cmd, opts)
		d2 := Judge(t2, pol)
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
				if n.Has(FlagDynamic) {
					t.Fatalf("%q: allowed with a dynamic node #%d (%s)", cmd, n.ID, n.Notes)
				}
			}
		}
	})
}
