package seatbelt

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsListMachServices keeps the list in docs/executor.md equal to
// MachServices.
func TestDocsListMachServices(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "executor.md"))
	if err != nil {
		t.Skipf("docs/executor.md is not beside this copy of the package: %v", err)
	}
	_, rest, ok := strings.Cut(string(b), "\n### Mach services\n")
	if !ok {
		t.Fatal(`docs/executor.md has no "### Mach services"`)
	}
	paras := strings.Split(strings.TrimSpace(rest), "\n\n")
	if len(paras) < 2 {
		t.Fatal("docs/executor.md: no list under Mach services")
	}
	var got []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(paras[1], -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, MachServices) {
		t.Errorf("docs/executor.md lists the mach services\n%q\nthe code has\n%q", got, MachServices)
	}
}
