package trust

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// docsItem returns the `code` spans after the first colon of the item of
// docs/workspaces.md's list that begins with lead.
func docsItem(t *testing.T, lead string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "workspaces.md"))
	if err != nil {
		t.Skipf("docs/workspaces.md is not beside this copy of the package: %v", err)
	}
	_, item, ok := strings.Cut(string(b), "\n- "+lead)
	if !ok {
		t.Fatalf("docs/workspaces.md has no item %q", lead)
	}
	item, _, _ = strings.Cut(item, "\n- ")
	_, item, _ = strings.Cut(item, ":")
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(item, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestDocsSystemDirs(t *testing.T) {
	if got := docsItem(t, "the system directories themselves"); !slices.Equal(got, systemDirs) {
		t.Errorf("docs/workspaces.md lists the system directories\n%q\nthe code has\n%q", got, systemDirs)
	}
	want := append(slices.Clone(systemTrees), "/lib…")
	if got := docsItem(t, "anything inside the read-only system trees"); !slices.Equal(got, want) {
		t.Errorf("docs/workspaces.md lists the read-only trees\n%q\nthe code has\n%q", got, want)
	}
}

func TestDocsAutorun(t *testing.T) {
	var want []string
	for _, p := range policy.AutorunHome {
		want = append(want, "~/"+p)
	}
	want = append(want, policy.AutorunSystem...)
	if got := docsItem(t, "the places whose files run later on the host"); !slices.Equal(got, want) {
		t.Errorf("docs/workspaces.md lists the autorun places\n%q\nthe code has\n%q", got, want)
	}
}
