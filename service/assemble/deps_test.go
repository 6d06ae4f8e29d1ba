package assemble

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNothingOfApp keeps the service's assembly on the service's
// side: it links no package of app/ (the CLI, the tray), on any platform,
// so the service starts without the CLI's closures (docs/service.md).
func TestImportsNothingOfApp(t *testing.T) {
	// go test puts its own go command first in PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	const app = "github.com/gatehouse-dev/gatehouse/app/"
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(gobin, "list", "-deps", "-test=false", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v", goos, err)
		}
		pkgs := strings.Fields(string(out))
		if len(pkgs) < 10 {
			t.Fatalf("GOOS=%s go list -deps listed %d packages; the check would see nothing", goos, len(pkgs))
		}
		for _, pkg := range pkgs {
			if strings.HasPrefix(pkg, app) {
				t.Errorf("GOOS=%s: service/assemble links %s; what the service needs to run belongs on the service's side", goos, pkg)
			}
		}
	}
}
