package dashboard

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The doctor page renders the report the service's API serves: its
// checks with their remedies, what IT's managed settings would add apart
// from them, and a verdict that never says "No problem found" above a
// warning.
func TestDoctorPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	report := &api.DoctorReport{OK: true, At: time.Now(),
		Checks: []api.DoctorCheck{
			{Name: "service", State: api.DoctorOK, Message: "running (version dev, pid 7)"},
			{Name: "hook", State: api.DoctorWarning, Message: "Gatehouse's hook is in neither file", Remedy: "gatehouse install"},
			{Name: "commands", State: api.DoctorOK, Message: "a command can run now (sandbox mode bubblewrap)"},
			{Name: "output_hook_missing", State: api.DoctorWarning, Message: "no PostToolUse hook", Remedy: "gatehouse install"},
			{Name: "user_shadows_managed", State: api.DoctorWarning, Message: "settings.json sets sandbox.enabled", Remedy: "remove it"},
		},
		Managed: []api.DoctorCheck{
			{Name: "managed_hooks_only_off", State: api.DoctorAdvice, Message: "allowManagedHooksOnly is off"},
			{Name: "claude_sandbox_off", State: api.DoctorAdvice, Message: "Claude Code's own sandbox is off"},
		},
		ManagedRemedy: "sudo gatehouse managed-settings --install",
		Facts:         []api.DoctorFact{{Label: "backend", Value: "bubblewrap (requested auto)"}},
	}
	f.srv.opts.Doctor = func(ctx context.Context) (*api.DoctorReport, error) { return report, nil }
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/doctor", nil)
	if strings.Contains(body, "No problem found") {
		t.Errorf("the page says no problem was found above three warnings:\n%s", body)
	}
	for _, want := range []string{
		`class="verdict warn" id="verdict">No problem, 3 warnings: each says how to fix it`,
		`<tr class="warn" data-check="hook"><td class="glyph">!</td><td>hook</td><td>warning</td><td>Gatehouse&#39;s hook is in neither file</td><td>gatehouse install</td></tr>`,
		`<tr class="ok" data-check="service">`,
		`<tr class="advice" data-check="claude_sandbox_off">`,
		`<dt>backend</dt><dd>bubblewrap (requested auto)</dd>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the doctor page lacks\n%s\nin\n%s", want, body)
		}
	}
	if n := strings.Count(body, "sudo gatehouse managed-settings --install"); n != 1 {
		t.Errorf("the managed settings' remedy is said %d times, want once", n)
	}

	// A problem is said first, with the count of each.
	report.OK = false
	report.Checks[0] = api.DoctorCheck{Name: "service", State: api.DoctorProblem, Message: "the service is not running", Remedy: "gatehouse service start"}
	_, body = f.getBody(c, f.base+"/doctor", nil)
	if !strings.Contains(body, `class="verdict bad" id="verdict">1 problem found and 3 warnings: each says how to fix it`) {
		t.Errorf("the verdict of a problem:\n%s", body)
	}

	// All ok: no problem found.
	report.Checks = []api.DoctorCheck{{Name: "service", State: api.DoctorOK, Message: "running"}}
	report.Managed, report.OK = nil, true
	_, body = f.getBody(c, f.base+"/doctor", nil)
	if !strings.Contains(body, `class="verdict ok" id="verdict">No problem found`) {
		t.Errorf("the verdict of a clean report:\n%s", body)
	}
}
