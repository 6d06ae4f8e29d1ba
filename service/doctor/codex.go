package doctor

import (
	"os"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/hook/codex"
)

// codexRequirements is where Codex reads the requirements IT manages (a
// test's own file in tests).
var codexRequirements = "/etc/codex/requirements.toml"

// readCodex reads Codex CLI's hooks and configuration in ~/.codex (a
// $CODEX_HOME elsewhere is not seen) and the managed requirements.toml,
// and says how they drifted (hook/codex Drift): the hook present, trusted
// (Codex skips an untrusted hook without a word), turned on, as install
// writes it, its program executable, and no other hook beside it on the
// shell. Whether the hook reaches the service is the service check's.
func readCodex(o Options) Agent {
	a := Agent{Name: "codex", Label: "codex", Files: []string{codexRequirements}, Drift: []AgentFinding{}}
	if o.Home == "" {
		return a
	}
	home := filepath.Join(o.Home, ".codex")
	a.Files = append(a.Files, filepath.Join(home, codex.HooksFile), filepath.Join(home, codex.ConfigFile))
	if _, err := os.Stat(codexRequirements); err == nil {
		a.Used = true
	}
	if fi, err := os.Stat(home); err == nil && fi.IsDir() {
		a.Used = true
	}
	if !a.Used {
		return a
	}
	a.Installed = true
	for _, f := range codex.ReadDrift(home, codexRequirements) {
		if f.Code == "hook_missing" {
			a.Installed = false
		}
		a.Drift = append(a.Drift, AgentFinding(f))
	}
	return a
}
