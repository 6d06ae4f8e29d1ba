package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace root at, in or above a place whose files run later on the
// host is refused at load, naming the field, as one at the home directory
// is; and the executor's judge refuses one that a symlink moved there
// since.
func TestWorkspaceRootRefusedAtAutorunPlaces(t *testing.T) {
	t.Parallel()
	home := symlinkHome(t)
	for _, rel := range []string{".config/autostart", ".local/bin", ".config/systemd/user", ".cache/gatehouse", ".config/environment.d", "Library/LaunchAgents"} {
		if err := os.MkdirAll(filepath.Join(home, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		_, got := loadIn(t, home, "", "policy:\n  workspace_roots: [~/"+rel+"]\n")
		if !strings.Contains(got, "policy.workspace_roots[0]") || !strings.Contains(got, "run later on the host") {
			t.Errorf("~/%s: got %q, want a refusal of policy.workspace_roots[0]", rel, got)
		}
	}
	if _, got := loadIn(t, home, "", "policy:\n  workspace_roots: [~/.kde]\n"); !strings.Contains(got, `above "~/.kde/Autostart"`) {
		t.Errorf("~/.kde: got %q", got)
	}

	// Accepted at load, then moved by a symlink into ~/.local/bin.
	l, got := loadIn(t, home, "", "policy:\n  workspace_roots: [~/src/proj]\n")
	if got != "" {
		t.Fatal(got)
	}
	proj := filepath.Join(home, "src", "proj")
	if err := os.Rename(proj, proj+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".local", "bin"), proj); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Config.RootJudge(home, nil).Roots(); err == nil || !strings.Contains(err.Error(), "run later on the host") {
		t.Errorf("a root moved into ~/.local/bin: %v", err)
	}
}
