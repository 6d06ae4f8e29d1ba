package doctor

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/gatehouse-dev/gatehouse/hook/gemini"
)

// readGemini reads Gemini CLI's system settings (Options.GeminiSystem, or
// where Gemini reads them on this OS) and the user's
// (~/.gemini/settings.json), and says how they drifted (hook/gemini
// Drift): the hook present, its program executable, wrapped to block when
// it fails, and hooks not turned off. Whether the hook reaches the
// service is the service check's: with the hook installed, a service that
// is not running is a problem.
func readGemini(o Options) Agent {
	system := o.GeminiSystem
	if system == "" {
		system = gemini.ManagedPath(runtime.GOOS, func(string) string { return "" })
	}
	a := Agent{Name: "gemini", Label: "gemini cli", Files: []string{system}, Drift: []AgentFinding{}}
	user := ""
	if o.Home != "" {
		user = gemini.UserPath(o.Home)
		a.Files = append(a.Files, user)
	}
	for _, f := range a.Files {
		if _, err := os.Stat(f); err == nil {
			a.Used = true
		}
	}
	if user != "" {
		if fi, err := os.Stat(filepath.Dir(user)); err == nil && fi.IsDir() {
			a.Used = true
		}
	}
	if !a.Used {
		return a
	}
	a.Installed = true
	for _, f := range gemini.ReadDrift(system, user) {
		if f.Code == "hook_missing" {
			a.Installed = false
		}
		a.Drift = append(a.Drift, AgentFinding(f))
	}
	return a
}
