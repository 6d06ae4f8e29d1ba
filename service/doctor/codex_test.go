package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/hook/codex"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Doctor reads Codex's files when Codex is set up here: the hook installed
// and trusted is no finding, and with no service the service check is a
// problem; without its trust entry it is hook_untrusted (Codex would skip
// it); its program gone, hook_program; removed, hook_missing.
func TestCodexDrift(t *testing.T) {
	home := t.TempDir()
	codexRequirements = filepath.Join(home, "no-requirements.toml")
	o := Options{Home: home}
	if a := readCodex(o); a.Used || len(a.Drift) != 0 {
		t.Errorf("without Codex: %+v", a)
	}
	prog := filepath.Join(home, "gatehouse-hook")
	must(t, os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755))
	dir := filepath.Join(home, ".codex")
	must(t, os.MkdirAll(dir, 0o700))
	hooksFile, configFile := filepath.Join(dir, codex.HooksFile), filepath.Join(dir, codex.ConfigFile)
	cmd := codex.HookCommand(prog)
	hooks, _, idx, err := codex.MergeHook(nil, cmd)
	must(t, err)
	must(t, os.WriteFile(hooksFile, hooks, 0o600))
	trusted, _ := codex.SetTrust([]byte("model = \"o4\"\n"), codex.TrustKey(hooksFile, idx), codex.TrustHash(cmd))
	must(t, os.WriteFile(configFile, trusted, 0o600))

	a := readCodex(o)
	if !a.Used || !a.Installed || len(a.Drift) != 0 {
		t.Errorf("installed: %+v", a)
	}
	noClaude := Claude{Drift: []claude.Finding{{Code: "hook_missing"}}}
	r := &Report{SandboxMode: "bubblewrap", ClaudeCode: noClaude, Agents: []Agent{a}}
	r.finish(Options{})
	if c, _ := r.Check(CheckService); c.State != api.DoctorProblem || !strings.Contains(c.Message, "codex") {
		t.Errorf("service check: %+v", c)
	}
	if !strings.Contains(factValue(r, "codex"), hooksFile) {
		t.Errorf("facts: %+v", r.Facts)
	}

	must(t, os.WriteFile(configFile, []byte("model = \"o4\"\n"), 0o600))
	a = readCodex(o)
	if !a.Installed || len(a.Drift) != 1 || a.Drift[0].Code != "hook_untrusted" {
		t.Errorf("untrusted: %+v", a)
	}
	r = &Report{SandboxMode: "bubblewrap", ClaudeCode: noClaude, Agents: []Agent{a}}
	r.finish(Options{})
	if c, _ := r.Check("codex hook_untrusted"); c.State != api.DoctorWarning || !strings.Contains(c.Remedy, "gatehouse install --agent codex") {
		t.Errorf("checks: %+v", r.Checks)
	}

	must(t, os.WriteFile(configFile, trusted, 0o600))
	must(t, os.Remove(prog))
	if a := readCodex(o); !a.Installed || len(a.Drift) != 1 || a.Drift[0].Code != "hook_program" {
		t.Errorf("program gone: %+v", a)
	}
	unhooked, _, _, err := codex.RemoveHook(hooks)
	must(t, err)
	must(t, os.WriteFile(hooksFile, unhooked, 0o600))
	if a := readCodex(o); a.Installed || len(a.Drift) != 1 || a.Drift[0].Code != "hook_missing" {
		t.Errorf("removed: %+v", a)
	}
}
