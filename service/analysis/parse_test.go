package analysis_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/analysis/argvcred"
)

// TestOneParsePerUnit analyses a command that runs pinned scripts (one of
// them three times), then checks it for credentials on argv with the
// tree (package argvcred): every unit of shell code is parsed once in all.
func TestOneParsePerUnit(t *testing.T) {
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	scripts := map[string]string{
		"a.sh": "#!/bin/bash\necho a\n./b.sh\n",
		"b.sh": "#!/bin/bash\nbash -c 'echo b'\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	parses := map[string]int{}
	analysis.SetTestOnlyParse(func(text string) {
		mu.Lock()
		parses[text]++
		mu.Unlock()
	})
	t.Cleanup(func() { analysis.SetTestOnlyParse(nil) })

	o := analysis.Opts(dir)
	o.ScriptRoots = []string{dir}
	text := `./a.sh && bash a.sh; . ./a.sh; echo "$GATEHOUSE_CRED_X" | wc -c`
	tree := analysis.Analyze(text, o)
	if len(tree.Scripts) != 2 || tree.ParseError != nil {
		t.Fatalf("scripts %d, parse error %v: want both scripts read", len(tree.Scripts), tree.ParseError)
	}
	if use := argvcred.Find(text, tree.Scripts, argvcred.Options{Dialect: "bash", Tree: tree}); use != nil {
		t.Fatalf("credential on argv: %+v", use)
	}
	for _, want := range []string{text, scripts["a.sh"], scripts["b.sh"], "echo b"} {
		if parses[want] != 1 {
			t.Errorf("%q parsed %d times, want once", want, parses[want])
		}
	}
	for got, n := range parses {
		if n != 1 {
			t.Errorf("%q parsed %d times, want once", got, n)
		}
	}
	// Without the tree the credential check parses the units itself.
	clear(parses)
	argvcred.Find(text, tree.Scripts, argvcred.Options{Dialect: "bash"})
	if parses[text] != 1 || parses[scripts["a.sh"]] != 1 {
		t.Errorf("without the tree: %v", parses)
	}
}
