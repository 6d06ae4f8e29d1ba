package policy

import (
	"strings"
	"testing"
)

func TestNarrowPolicyKnobs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, managed, user, want string // want "" means accepted
	}{
		{"routing widened", "policy:\n  builtin_exec_routing: governed_shell\n", "policy:\n  builtin_exec_routing: framework\n", "policy.builtin_exec_routing"},
		{"analysis off", "policy:\n  command_analysis_mode: enforce\n", "policy:\n  command_analysis_mode: off\n", "policy.command_analysis_mode"},
		{"default allow under ask", "policy:\n  default_action: ask\n", "policy:\n  default_action: allow\n", "policy.default_action"},
		{"default deny under ask", "policy:\n  default_action: ask\n", "policy:\n  default_action: deny\n", ""},
		{"notify off", "exec:\n  notify:\n    output_redacted: true\n", "exec:\n  notify:\n    output_redacted: false\n", "exec.notify.output_redacted"},
		{"retention locked", "exec:\n  audit:\n    retention_days: 30\n", "exec:\n  audit:\n    retention_days: 10\n", "exec.audit.retention_days"},
		{"port added", "exec:\n  egress:\n    allowed_ports: [443]\n", "exec:\n  egress:\n    allowed_ports: [443, 22]\n", "exec.egress.allowed_ports[1]"},
		{"host outside", "policy:\n  egress_allowlist: [\"*.example.com\"]\n", "policy:\n  egress_allowlist: [evil.com]\n", "policy.egress_allowlist[0]"},
		{"host inside", "policy:\n  egress_allowlist: [\"*.example.com\"]\n", "policy:\n  egress_allowlist: [api.example.com, example.com, \"*.x.example.com\"]\n", ""},
		{"port on managed entry", "policy:\n  egress_allowlist: [\"github.com:443\"]\n", "policy:\n  egress_allowlist: [\"github.com:22\"]\n", "policy.egress_allowlist[0]"},
		{"star", "policy:\n  egress_allowlist: [\"*\"]\n", "policy:\n  egress_allowlist: [a.b]\n", ""},
		{"bad port", "", "exec:\n  egress:\n    allowed_ports: [0]\n", "exec.egress.allowed_ports[0]: 0 is not a port"},
		{"bad action", "", "policy:\n  default_action: maybe\n", `policy.default_action: "maybe" is not one of allow, ask, deny`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, got := loadFiles(t, tc.managed, tc.user)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("got %q, want it accepted", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("got %q, want an error about %q", got, tc.want)
			}
		})
	}
}
