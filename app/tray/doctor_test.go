package tray

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The tray's notification and report are the report's checks: the
// service being down is the first problem, with its remedy; warnings are
// never summed up as "ok"; the managed settings' remedy is said once.
func TestDoctorSummary(t *testing.T) {
	t.Parallel()
	ok := &api.DoctorReport{OK: true, Checks: []api.DoctorCheck{{Name: "service", State: api.DoctorOK, Message: "running"}}}
	title, body := DoctorSummary(ok, "/s/doctor-report.txt")
	if title != "Gatehouse doctor: ok" || !strings.Contains(body, "/s/doctor-report.txt") {
		t.Errorf("ok: %q %q", title, body)
	}

	down := &api.DoctorReport{Checks: []api.DoctorCheck{
		{Name: "service", State: api.DoctorProblem, Message: "the service is not running, and Claude Code's hook is installed", Remedy: "gatehouse service start"},
		{Name: "hook", State: api.DoctorOK, Message: "Claude Code runs Gatehouse's hook for Bash"},
		{Name: "commands", State: api.DoctorProblem, Message: "no sandbox: bwrap not found in PATH; install bubblewrap"},
		{Name: "credential", State: api.DoctorProblem, Message: "b"},
		{Name: "egress_ca", State: api.DoctorProblem, Message: "c"},
		{Name: "output_hook_missing", State: api.DoctorWarning, Message: "w"},
	}}
	title, body = DoctorSummary(down, "/r")
	if title != "Gatehouse doctor: 4 problems" {
		t.Errorf("title %q", title)
	}
	want := "• the service is not running, and Claude Code's hook is installed; fix: gatehouse service start\n• no sandbox: bwrap not found in PATH; install bubblewrap\n• b\n… and 1 more\nThe full report is in /r"
	if !strings.HasPrefix(body, want) {
		t.Errorf("body %q, want it to start %q", body, want)
	}

	warned := &api.DoctorReport{OK: true, Checks: []api.DoctorCheck{
		{Name: "service", State: api.DoctorWarning, Message: "not running", Remedy: "gatehouse service start"},
		{Name: "hook", State: api.DoctorWarning, Message: "Gatehouse's hook is in neither file", Remedy: "gatehouse install"},
	}}
	title, body = DoctorSummary(warned, "/r")
	if title != "Gatehouse doctor: no problem, 2 warnings" || !strings.HasPrefix(body, "• not running; fix: gatehouse service start\n• Gatehouse's hook") {
		t.Errorf("warnings: %q %q", title, body)
	}
}

func TestDoctorText(t *testing.T) {
	t.Parallel()
	r := &api.DoctorReport{OK: true,
		Checks: []api.DoctorCheck{
			{Name: "service", State: api.DoctorOK, Message: "running (version dev, pid 7)"},
			{Name: "hook", State: api.DoctorWarning, Message: "hook \x1b[2Jmissing", Remedy: "gatehouse install"},
		},
		Managed: []api.DoctorCheck{
			{Name: "managed_hooks_only_off", State: api.DoctorAdvice, Message: "allowManagedHooksOnly is off"},
			{Name: "claude_sandbox_off", State: api.DoctorAdvice, Message: "Claude Code's sandbox is off"},
		},
		ManagedRemedy: "sudo gatehouse managed-settings --install",
		Facts:         []api.DoctorFact{{Label: "backend", Value: "bubblewrap (requested auto)"}},
	}
	got := DoctorText(r, time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC))
	want := `gatehouse doctor, 2026-12-06 20:00:00

service:       ok: running (version dev, pid 7)
hook:          warning: hook \x1b[2Jmissing
       fix: gatehouse install

what IT's managed settings would add for every user of this machine (advice, not a problem):
managed_hooks_only_off: advice: allowManagedHooksOnly is off
claude_sandbox_off: advice: Claude Code's sandbox is off
       fix: sudo gatehouse managed-settings --install

what doctor read:
backend:       bubblewrap (requested auto)

ok: the governed shell can serve
`
	if got != want {
		t.Errorf("report:\n%q\nwant:\n%q", got, want)
	}
}
