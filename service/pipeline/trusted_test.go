//go:build linux || darwin

package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// The guard that judges trusted roots is built when the first one is
// judged, not before: roots trusted after the executor's first calls are
// still judged by it.
func TestTrustedRootsJudgedWhenFirstTrusted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.TempDir(), nil)
	store := trust.Open(filepath.Join(f.dir, "trusted.json"))
	f.ex.opts.Trusted = store
	if got := f.ex.WorkspaceRoots(); !slices.Equal(got, []string{f.ws}) {
		t.Fatalf("roots before any is trusted: got %q, want %q", got, []string{f.ws})
	}

	other := filepath.Join(f.dir, "other")
	private := filepath.Join(f.home, ".config", "gatehouse", "inside")
	for _, d := range []string{other, private} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		// A guard that refuses nothing: the executor's own must judge.
		if _, err := store.Add(d, "cli", trust.Guard{}); err != nil {
			t.Fatalf("trusting %s: %v", d, err)
		}
	}
	got := f.ex.WorkspaceRoots()
	if !slices.Contains(got, other) {
		t.Errorf("roots %q: the trusted %s is missing", got, other)
	}
	if slices.Contains(got, private) {
		t.Errorf("roots %q: %s, inside Gatehouse's own directory, is in force", got, private)
	}
}
