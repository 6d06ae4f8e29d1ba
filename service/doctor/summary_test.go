package doctor

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The checks come truth first (service, hook, commands), the first reason
// no command can run is the commands check, and what only the managed
// settings add is advice apart, its remedy once.
func TestFinishOrder(t *testing.T) {
	t.Parallel()
	r := &Report{SandboxMode: "bubblewrap", ClaudeCode: Claude{Used: true, Drift: []claude.Finding{
		{Code: "managed_hooks_only_off", Detail: "m", Remedy: claude.RemedyManaged},
		{Code: "output_hook_missing", Detail: "o", Remedy: "gatehouse install"},
		{Code: "claude_sandbox_off", Detail: "s", Remedy: claude.RemedyManaged},
	}}}
	r.problem("credential", false, "credential missing")
	r.problem("sandbox", true, "no sandbox: bwrap not found")
	r.problem("init", true, "no init")
	r.finish(Options{})
	var got []string
	for _, c := range r.Checks {
		got = append(got, c.Name+"/"+string(c.State))
	}
	want := []string{"service/problem", "hook/ok", "commands/problem", "credential/problem", "init/problem", "output_hook_missing/warning"}
	if len(got) != len(want) {
		t.Fatalf("checks %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("checks %q, want %q", got, want)
		}
	}
	if c, _ := r.Check(CheckCommands); c.Message != "no sandbox: bwrap not found" {
		t.Errorf("commands: %+v", c)
	}
	if len(r.Managed) != 2 || r.Managed[0].Remedy != "" || r.ManagedRemedy != claude.RemedyManaged || r.Managed[1].State != api.DoctorAdvice {
		t.Errorf("managed: %+v, remedy %q", r.Managed, r.ManagedRemedy)
	}
	if r.OK || len(r.Problems) != 4 || r.Problems[0] != r.Checks[0].Message {
		t.Errorf("ok %v, problems %q", r.OK, r.Problems)
	}

	// Claude Code not set up here: no advice; no hook, no service: a warning.
	r = &Report{ClaudeCode: Claude{Drift: []claude.Finding{{Code: "hook_missing", Detail: "h", Remedy: "gatehouse install"}, {Code: "claude_sandbox_off", Detail: "s", Remedy: claude.RemedyManaged}}}}
	r.finish(Options{})
	if c, _ := r.Check(CheckService); c.State != api.DoctorWarning || c.Remedy != RemedyStart {
		t.Errorf("service: %+v", c)
	}
	if c, _ := r.Check(CheckHook); c.State != api.DoctorWarning || c.Message != "h" {
		t.Errorf("hook: %+v", c)
	}
	if len(r.Managed) != 0 || !r.OK {
		t.Errorf("managed %+v, ok %v", r.Managed, r.OK)
	}

	// The service runs.
	r = &Report{}
	r.finish(Options{Service: &api.Status{Version: "v1", PID: 7}})
	if c, _ := r.Check(CheckService); c.State != api.DoctorOK || c.Message != "running (version v1, pid 7)" {
		t.Errorf("service: %+v", c)
	}

	// A service that holds its socket but does not answer is a problem.
	r = &Report{ClaudeCode: Claude{Drift: []claude.Finding{{Code: "hook_missing"}}}}
	r.finish(Options{ServiceError: "context deadline exceeded"})
	if c, _ := r.Check(CheckService); c.State != api.DoctorProblem || c.Remedy != RemedyRestart || r.OK {
		t.Errorf("service: %+v", c)
	}
}
