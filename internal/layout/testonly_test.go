package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testOnly are the packages for tests only: the end-to-end suites' shared
// harness. Only tests and the end-to-end suites' own helper programs
// (under a directory named e2e) may import them.
var testOnly = []string{"github.com/gatehouse-dev/gatehouse/internal/e2etest"}

func TestTestHarnessStaysInTests(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "dist") {
				return filepath.SkipDir
			}
			if name == "e2e" || rel == "internal/e2etest" {
				return filepath.SkipDir // test-only trees
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, tp := range testOnly {
				if p == tp {
					t.Errorf("%s imports %s, which is for tests only", rel, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("checked %d Go files under %s; the walk missed the tree", checked, root)
	}
}
