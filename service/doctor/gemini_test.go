package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/hook/gemini"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Doctor reads Gemini CLI's settings when Gemini is set up here: the hook
// present and sound is no finding; removed, it is hook_missing; its
// program gone, hook_broken; and with the hook installed and no service,
// the service check is a problem, since every shell command is blocked.
func TestGeminiDrift(t *testing.T) {
	home := t.TempDir()
	o := Options{Home: home, GeminiSystem: filepath.Join(home, "no-system.json")}
	if a := readGemini(o); a.Used || len(a.Drift) != 0 {
		t.Errorf("without Gemini: %+v", a)
	}
	prog := filepath.Join(home, "gatehouse-hook")
	must(t, os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755))
	settings, _, err := gemini.MergeHook([]byte(`{"model": {"name": "m"}}`), gemini.HookCommand(prog))
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(home, ".gemini"), 0o700))
	file := gemini.UserPath(home)
	must(t, os.WriteFile(file, settings, 0o600))

	a := readGemini(o)
	if !a.Used || !a.Installed || len(a.Drift) != 0 {
		t.Errorf("installed: %+v", a)
	}
	noClaude := Claude{Drift: []claude.Finding{{Code: "hook_missing"}}}
	r := &Report{SandboxMode: "bubblewrap", ClaudeCode: noClaude, Agents: []Agent{a}}
	r.finish(Options{})
	if c, _ := r.Check(CheckService); c.State != api.DoctorProblem || !strings.Contains(c.Message, "the hook of gemini is installed") {
		t.Errorf("service check: %+v", c)
	}
	if !strings.Contains(factValue(r, "gemini cli"), file) {
		t.Errorf("facts: %+v", r.Facts)
	}

	must(t, os.Remove(prog))
	if a := readGemini(o); !a.Installed || len(a.Drift) != 1 || a.Drift[0].Code != "hook_broken" {
		t.Errorf("program gone: %+v", a)
	}
	unhooked, _, err := gemini.RemoveHook(settings)
	must(t, err)
	must(t, os.WriteFile(file, unhooked, 0o600))
	a = readGemini(o)
	if a.Installed || len(a.Drift) != 1 || a.Drift[0].Code != "hook_missing" {
		t.Errorf("removed: %+v", a)
	}
	r = &Report{SandboxMode: "bubblewrap", ClaudeCode: noClaude, Agents: []Agent{a}}
	r.finish(Options{})
	if c, _ := r.Check("gemini hook_missing"); c.State != api.DoctorWarning {
		t.Errorf("checks: %+v", r.Checks)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func factValue(r *Report, label string) string {
	for _, f := range r.Facts {
		if f.Label == label {
			return f.Value
		}
	}
	return ""
}
