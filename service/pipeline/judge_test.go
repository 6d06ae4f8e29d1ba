package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// The plan's deny-read set, resolved through the step's judge, is the set
// resolved on its own: symlinked stores, a key ~/.ssh/config names, a link
// inside a hidden directory.
func TestSpecDenyReadThroughJudge(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	for _, d := range []string{"src", ".ssh", "vault/aws", "keys", ".config"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	os.Symlink(filepath.Join(home, "vault/aws"), filepath.Join(home, ".aws"))
	os.Symlink(filepath.Join(home, "vault"), filepath.Join(home, ".config/gcloud"))
	os.Symlink(filepath.Join(home, "keys/deploy"), filepath.Join(home, ".ssh/deploy"))
	os.WriteFile(filepath.Join(home, "keys/deploy"), nil, 0o600)
	os.WriteFile(filepath.Join(home, ".ssh/config"), []byte("Host *\n  IdentityFile ~/keys/id_work\n"), 0o600)
	l, err := policy.Load(policy.LoadOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	private := []string{filepath.Join(home, ".config/gatehouse"), filepath.Join(home, ".local/state/gatehouse")}
	ex, err := New(&l.Config, Options{Home: home, PrivatePaths: private})
	if err != nil {
		t.Fatal(err)
	}
	judge := ex.rootJudge()
	roots, err := ex.workspaceRootsBy(judge, "cli")
	if err != nil {
		t.Fatal(err)
	}
	s := ex.spec(&api.ExecRequest{Command: "true", Agent: "cli"}, roots[0], roots, judge, "id", 10, backendChoice{backend: "bubblewrap"})
	want := ex.denyRead()
	if !reflect.DeepEqual(s.DenyRead, want) {
		t.Errorf("through the judge:\n%q\nresolved on its own:\n%q", s.DenyRead, want)
	}
	for _, p := range []string{"vault/aws", "vault", "keys/deploy", "keys/id_work"} {
		if !slices.Contains(want, filepath.Join(home, p)) {
			t.Errorf("%s is not hidden", p)
		}
	}
}
