package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docsList returns the `code` spans of the section of docs/executor.md
// under heading, up to the next paragraph that is not the list.
func docsList(t *testing.T, heading string) []string {
	t.Helper()
	p := filepath.Join("..", "docs", "executor.md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Skipf("docs/executor.md is not beside this copy of the package: %v", err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/executor.md has no %q", heading)
	}
	// The list is the second paragraph: the first says what it is.
	paras := strings.Split(strings.TrimSpace(rest), "\n\n")
	if len(paras) < 2 {
		t.Fatalf("docs/executor.md: no list under %q", heading)
	}
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(paras[1], -1) {
		out = append(out, m[1])
	}
	return out
}

func TestDocsListWriteDeny(t *testing.T) {
	if got := docsList(t, "### Write-deny names"); !slices.Equal(got, DefaultWriteDeny) {
		t.Errorf("docs/executor.md lists the write-deny names\n%q\nthe code has\n%q", got, DefaultWriteDeny)
	}
}

func TestDocsListSecretStores(t *testing.T) {
	if got := docsList(t, "### Deny-read set"); !slices.Equal(got, SecretStores) {
		t.Errorf("docs/executor.md lists the credential stores\n%q\nthe code has\n%q", got, SecretStores)
	}
}

func TestDocsListGitDirWriteDeny(t *testing.T) {
	var got []string
	b, err := os.ReadFile(filepath.Join("..", "docs", "executor.md"))
	if err != nil {
		t.Skipf("docs/executor.md is not beside this copy of the package: %v", err)
	}
	_, rest, _ := strings.Cut(string(b), "\n### Git directories\n")
	table := strings.Split(strings.TrimSpace(rest), "\n\n")[1]
	for _, line := range strings.Split(table, "\n")[2:] {
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			got = append(got, m[1])
		}
	}
	if !slices.Equal(got, GitDirWriteDeny) {
		t.Errorf("docs/executor.md lists the git directory files\n%q\nthe code has\n%q", got, GitDirWriteDeny)
	}
}
