package relay

import (
	"os/exec"
	"strings"
	"testing"
)

// The relay runs inside Claude Code's sandbox and speaks to the service
// only through the relay contract in service/api: it links no other part
// of Gatehouse.
func TestRelayImportsOnlyTheAPI(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (GOOS=%s): %v", goos, err)
		}
		for _, p := range strings.Fields(string(out)) {
			switch {
			case !strings.HasPrefix(p, "github.com/gatehouse-dev/gatehouse/"):
			case p == "github.com/gatehouse-dev/gatehouse/hook/relay",
				p == "github.com/gatehouse-dev/gatehouse/service/api":
			default:
				t.Errorf("GOOS=%s: hook/relay depends on %s; it may use only service/api", goos, p)
			}
		}
	}
}
