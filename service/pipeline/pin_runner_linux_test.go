package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// TestPinTaskRunnerFiles: a Makefile and a package.json whose recipes and
// scripts analysis judged are pinned like scripts: a writer replacing them
// after the decision changes nothing, the judged recipe runs.
func TestPinTaskRunnerFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, judged, swapped, cmd, want string }{
		{"Makefile", "all:\n\t@echo judged-make\n", "all:\n\t@echo swapped; touch swapped-ran\n", "make", "judged-make\n"},
		{"package.json", `{"scripts": {"hi": "echo judged-npm"}}`, `{"scripts": {"hi": "echo swapped; touch swapped-ran"}}`, "npm run --silent hi", "judged-npm\n"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			if tc.file == "package.json" {
				if _, err := exec.LookPath("npm"); err != nil {
					t.Skip("npm is not installed")
				}
			}
			f := bwrapFixture(t, nil)
			p := f.write("home/src/"+tc.file, tc.judged)
			f.hooks(&pinHooks{beforeStart: func() { os.WriteFile(p, []byte(tc.swapped), 0o644) }})
			o := f.run(tc.cmd)
			if !strings.HasSuffix(o.Result.Stdout, tc.want) {
				t.Errorf("stdout = %q (stderr %q), want the judged recipe's %q", o.Result.Stdout, o.Result.Stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(f.ws, "swapped-ran")); err == nil {
				t.Errorf("the swapped bytes ran")
			}
			if len(o.Event.PinnedScripts) != 1 || o.Event.PinnedScripts[0].Path != p || o.Event.PinnedScripts[0].SHA256 != analysis.SHA256([]byte(tc.judged)) {
				t.Errorf("pinned_scripts = %+v, want %s", o.Event.PinnedScripts, p)
			}
		})
	}
}
