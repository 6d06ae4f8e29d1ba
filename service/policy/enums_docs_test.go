package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The managed-narrowing table of docs/configuration.md and the settings
// table of the README state each enumerated field's values in the order of
// its scale, the one the code validates and ranks by.
func TestDocsEnums(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Skipf("%s is not beside this copy of the package: %v", name, err)
		}
		return string(b)
	}
	conf, readme := read("docs/configuration.md"), read("README.md")
	for field, sc := range enums {
		if strings.HasPrefix(field, "policy.default_action") || field == "policy.dynamic_action" {
			field = "policy.default_action`, `policy.dynamic_action"
		}
		if want := "| `" + field + "` | rank " + sc.Ranks(); !strings.Contains(conf, want) {
			t.Errorf("docs/configuration.md has no row %q", want)
		}
	}
	for _, field := range []string{"exec.sandbox.backend", "exec.sandbox.seccomp"} {
		names := enums[field].Names()
		want := "` | `" + strings.Join(names, "`, `") + "` |"
		if !strings.Contains(readme, "| `"+field+"` | `") || !strings.Contains(readme, want) {
			t.Errorf("README.md: the row of %s does not list %s", field, want)
		}
	}
}
