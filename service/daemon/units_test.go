package daemon

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the packaging files")

// The files in packaging/ are the unit templates rendered for a packaged
// binary at /usr/bin/gatehouse.
func TestPackagingFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		tmpl string
		vals map[string]string
	}{
		{"systemd/gatehouse.service", SystemdUnit, map[string]string{"Path": "/usr/bin/gatehouse"}},
		{"launchd/dev.gatehouse.agent.plist", LaunchdPlist, map[string]string{
			"Path": "/usr/local/bin/gatehouse", "Name": Name("darwin"),
			"StandardOutPath":   "/tmp/dev.gatehouse.agent.out.log",
			"StandardErrorPath": "/tmp/dev.gatehouse.agent.err.log",
		}},
	} {
		got := render(tc.tmpl, tc.vals, []string{"serve"}, strconv.Quote)
		path := filepath.Join("..", "..", "packaging", tc.file)
		if *update {
			os.WriteFile(path, []byte(got), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs from the rendered template (go test -update):\n%s", path, got)
		}
		if strings.Contains(got, "{{") {
			t.Errorf("%s: unexpanded template:\n%s", tc.file, got)
		}
	}
	if !strings.Contains(SystemdUnit, "\nDelegate=yes\n") {
		t.Error("the systemd unit must delegate a cgroup to the service")
	}
}

func TestUnitPath(t *testing.T) {
	if got := UnitPath("linux", "/home/u"); got != "/home/u/.config/systemd/user/gatehouse.service" {
		t.Errorf("linux: %s", got)
	}
	if got := UnitPath("darwin", "/Users/u"); got != "/Users/u/Library/LaunchAgents/dev.gatehouse.agent.plist" {
		t.Errorf("darwin: %s", got)
	}
}
