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
		{"dashboard on under managed off", "exec:\n  dashboard:\n    enabled: false\n", "exec:\n  dashboard:\n    enabled: true\n", "exec.dashboard.enabled"},
		{"dashboard off under managed on", "exec:\n  dashboard:\n    enabled: true\n", "exec:\n  dashboard:\n    enabled: false\n", ""},
		{"dashboard port locked", "exec:\n  dashboard:\n    port: 8765\n", "exec:\n  dashboard:\n    port: 8000\n", "exec.dashboard.port: 8000 differs from the managed value 8765"},
		{"dashboard port out of range", "", "exec:\n  dashboard:\n    port: 70000\n", "exec.dashboard.port: 70000 is out of range; want 0 to 65535"},
		{"bad port", "", "exec:\n  egress:\n    allowed_ports: [0]\n", "exec.egress.allowed_ports[0]: 0 is not a port"},

		// A bare managed host means the managed ports (the default 443 and
		// 80 when it names none); a user port must lie in them.
		{"port on a bare managed host", "policy:\n  egress_allowlist: [127.0.0.1]\n", "policy:\n  egress_allowlist: [\"127.0.0.1:18081\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "127.0.0.1:18081" is not allowed by the managed list ["127.0.0.1"] (managed.yaml:2)`},
		{"default port on a bare managed host", "policy:\n  egress_allowlist: [127.0.0.1]\n", "policy:\n  egress_allowlist: [\"127.0.0.1:443\"]\n", ""},
		{"managed port on a bare managed host", "exec:\n  egress:\n    allowed_ports: [8443]\npolicy:\n  egress_allowlist: [127.0.0.1]\n", "policy:\n  egress_allowlist: [\"127.0.0.1:8443\"]\n", ""},
		{"port outside the managed default", "policy:\n  egress_allowlist: [example.com]\n", "exec:\n  egress:\n    allowed_ports: [443, 18081]\n",
			`config.yaml:3: exec.egress.allowed_ports[1]: 18081 is not in the managed list [443 80] (default); use ports from that list`},
		{"port inside the managed default", "policy:\n  egress_allowlist: [example.com]\n", "exec:\n  egress:\n    allowed_ports: [443]\n", ""},
		{"ports free without managed egress", "policy:\n  exec_timeout_seconds: 60\n", "exec:\n  egress:\n    allowed_ports: [18081]\n", ""},
		{"port outside the managed default for an agent list", "policy:\n  egress_allowlist_by_agent: {cli: [example.com]}\n", "exec:\n  egress:\n    allowed_ports: [22]\n",
			"exec.egress.allowed_ports[0]: 22 is not in the managed list [443 80] (default)"},
		{"agent port on a bare managed host", "policy:\n  egress_allowlist: [127.0.0.1]\n", "policy:\n  egress_allowlist_by_agent: {cli: [\"127.0.0.1:18081\"]}\n",
			`cli[0]: "127.0.0.1:18081" is not allowed by the managed list ["127.0.0.1"]`},
		{"bare user host under a managed port", "policy:\n  egress_allowlist: [\"x.example.com:443\"]\n", "policy:\n  egress_allowlist: [x.example.com]\n", "policy.egress_allowlist[0]"},
		{"bare user host under managed ports", "policy:\n  egress_allowlist: [\"x.example.com:443\", \"x.example.com:80\"]\n", "policy:\n  egress_allowlist: [x.example.com]\n", ""},
		{"bare user host narrowed to a managed port", "policy:\n  egress_allowlist: [\"x.example.com:443\"]\n", "exec:\n  egress:\n    allowed_ports: [443]\npolicy:\n  egress_allowlist: [x.example.com]\n", ""},

		// A rule about dynamic commands decides them in place of a managed
		// dynamic_action.
		{"dynamic rule under a managed dynamic_action", "policy:\n  dynamic_action: deny\n", "policy:\n  rules:\n    - {name: dyn, action: allow, flags: [dynamic]}\n",
			`config.yaml:2: policy.rules: [0].action: allow widens the managed dynamic_action "deny" (managed.yaml:2): a rule with flags [dynamic] decides dynamic commands in its place; use deny`},
		{"dynamic ask rule under a managed ask", "policy:\n  dynamic_action: ask\n", "policy:\n  rules:\n    - {name: dyn, action: ask, flags: [dynamic]}\n", ""},
		{"other rule under a managed dynamic_action", "policy:\n  dynamic_action: deny\n", "policy:\n  rules:\n    - {name: ls, action: allow, command: [ls]}\n", ""},

		// The bubblewrap binary is what the managed sandbox settings are about.
		{"bwrap_path under a managed backend", "exec:\n  sandbox:\n    backend: bubblewrap\n", "exec:\n  sandbox:\n    bwrap_path: /home/u/bin/bwrap\n",
			`config.yaml:3: exec.sandbox.bwrap_path: "/home/u/bin/bwrap" may not replace bubblewrap under the managed exec.sandbox.backend (managed.yaml:3); only the managed file may set exec.sandbox.bwrap_path`},
		{"bwrap_path under managed sandbox_required", "policy:\n  sandbox_required: true\n", "exec:\n  sandbox:\n    bwrap_path: /opt/bwrap\n", "exec.sandbox.bwrap_path"},
		{"bwrap_path left empty", "policy:\n  sandbox_required: true\n", "exec:\n  sandbox:\n    bwrap_path: \"\"\n", ""},
		{"bwrap_path free without managed sandbox settings", "policy:\n  exec_timeout_seconds: 60\n", "exec:\n  sandbox:\n    bwrap_path: /opt/bwrap\n", ""},
		// So is the init: it installs the seccomp filter.
		{"init_path under a managed seccomp", "exec:\n  sandbox:\n    seccomp: required\n", "exec:\n  sandbox:\n    init_path: /home/u/bin/gatehouse-init\n",
			`config.yaml:3: exec.sandbox.init_path: "/home/u/bin/gatehouse-init" may not replace Gatehouse's sandbox init under the managed exec.sandbox.seccomp (managed.yaml:3); only the managed file may set exec.sandbox.init_path`},
		{"init_path left empty", "policy:\n  sandbox_required: true\n", "exec:\n  sandbox:\n    init_path: \"\"\n", ""},
		{"init_path free without managed sandbox settings", "policy:\n  exec_timeout_seconds: 60\n", "exec:\n  sandbox:\n    init_path: /opt/gatehouse-init\n", ""},

		// Entries compared by meaning, as the proxy matches them.
		{"star does not cover an IP literal", "policy:\n  egress_allowlist: [\"*\"]\n", "policy:\n  egress_allowlist: [127.0.0.1]\n", "policy.egress_allowlist[0]"},
		{"star does not cover localhost", "policy:\n  egress_allowlist: [\"*\"]\n", "policy:\n  egress_allowlist: [localhost]\n", "policy.egress_allowlist[0]"},
		{"case does not matter", "policy:\n  egress_allowlist: [github.com]\n", "policy:\n  egress_allowlist: [GitHub.com]\n", ""},
		{"address forms do not matter", "policy:\n  egress_allowlist: [\"[::1]\"]\n", "policy:\n  egress_allowlist: [\"0:0::1\"]\n", ""},
		{"mapped address is another address", "policy:\n  egress_allowlist: [127.0.0.1]\n", "policy:\n  egress_allowlist: [\"::ffff:127.0.0.1\"]\n", "policy.egress_allowlist[0]"},
		{"wildcard under wildcard", "policy:\n  egress_allowlist: [\"*.example.com\"]\n", "policy:\n  egress_allowlist: [\"*.a.example.com\", \"*.example.com\"]\n", ""},
		{"wider wildcard", "policy:\n  egress_allowlist: [\"*.a.example.com\"]\n", "policy:\n  egress_allowlist: [\"*.example.com\"]\n", "policy.egress_allowlist[0]"},
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
