package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestShow(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "policy:\n  exec_timeout_seconds: 300\n",
		"exec:\n  limits:\n    tmpfs_size: 256MiB\n  sandbox:\n    write_deny: [.envrc, \"a b\"]\npolicy:\n  workspace_roots: [~/src/x]\n")
	if errText != "" {
		t.Fatal(errText)
	}
	var b strings.Builder
	if err := l.Show(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, f := range l.Files {
		got = strings.ReplaceAll(got, f[:strings.LastIndexByte(f, '/')+1], "")
	}
	want := `exec.enabled:                                    true            # default
exec.shell:                                      /bin/bash       # default
exec.default_cwd:                                /home/u/src     # default
exec.sandbox.backend:                            auto            # default
exec.sandbox.seccomp:                            required        # default
exec.sandbox.bwrap_path:                         ""              # default
exec.sandbox.init_path:                          ""              # default
exec.sandbox.allow_ptrace:                       false           # default
exec.sandbox.deny_read:                          []              # default
exec.sandbox.write_deny:                         [.envrc, "a b"] # config.yaml:5
exec.sandbox.cache_max:                          5GiB            # default
exec.sandbox.warm_pool:                          2               # default
exec.sandbox.session_idle_seconds:               1800            # default
exec.sandbox.read:                               host            # default
exec.sandbox.read_allow:                         []              # default
exec.sandbox.settings_file:                      ""              # default
exec.limits.max_timeout_seconds:                 3600            # default
exec.limits.stdin_max_bytes:                     1MiB            # default
exec.limits.output_max_bytes:                    1MiB            # default
exec.limits.memory_max:                          4GiB            # default
exec.limits.pids_max:                            1024            # default
exec.limits.tmpfs_size:                          256MiB          # config.yaml:3
exec.limits.file_size_max:                       4GiB            # default
exec.limits.max_concurrent:                      8               # default
exec.limits.ticket_ttl_seconds:                  60              # default
exec.limits.max_pending_tickets:                 256             # default
exec.env.agent_settable:                         []              # default
exec.egress.allowed_ports:                       [443, 80]       # default
exec.egress.denied_cidrs:                        []              # default
exec.egress.upstream_ca_files:                   []              # default
exec.credentials.env:                            {}              # default
exec.credentials.files:                          {}              # default
exec.audit.retention_days:                       90              # default
exec.audit.retention_events:                     100000          # default
exec.audit.keep_output:                          true            # default
exec.audit.output_max_bytes:                     64KiB           # default
exec.audit.export.otlp.endpoint:                 ""              # default
exec.audit.export.otlp.protocol:                 http/protobuf   # default
exec.audit.export.otlp.headers:                  {}              # default
exec.audit.export.otlp.ca_file:                  ""              # default
exec.audit.export.otlp.batch_size:               256             # default
exec.audit.export.otlp.timeout_seconds:          10              # default
exec.audit.export.otlp.retry_initial_backoff_ms: 1000            # default
exec.audit.export.otlp.retry_max_backoff_ms:     60000           # default
exec.notify.sandbox_degraded:                    true            # default
exec.notify.output_redacted:                     true            # default
exec.output.terminal_controls:                   escape          # default
exec.output.explain_refusals:                    true            # default
exec.dashboard.enabled:                          true            # default
exec.dashboard.port:                             0               # default
policy.sandbox_required:                         true            # default
policy.audit_required:                           true            # default
policy.exec_timeout_seconds:                     300             # managed.yaml:2
policy.approval_timeout_seconds:                 120             # default
policy.workspace_roots:                          [/home/u/src/x] # config.yaml:7
policy.script_inspection_roots:                  []              # default
policy.builtin_exec_routing:                     governed_shell  # default
policy.command_analysis_mode:                    enforce         # default
policy.egress_allowlist:                         []              # default
policy.egress_allowlist_by_agent:                {}              # default
policy.egress_unknown:                           ask             # default
policy.egress_approval_timeout_seconds:          60              # default
policy.egress_denylist:                          []              # default
policy.credential_grants:                        {}              # default
policy.credential_mode:                          any             # default
policy.dlp_patterns:                             {}              # default
policy.default_action:                           allow           # default
policy.rules:                                    []              # default
policy.disabled_builtin_rules:                   []              # default
policy.dynamic_action:                           ask             # default
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestEntriesJSON(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", "policy:\n  exec_timeout_seconds: 30\n")
	if errText != "" {
		t.Fatal(errText)
	}
	entries := l.Entries()
	if len(entries) != len(leaves()) {
		t.Fatalf("got %d entries, want %d", len(entries), len(leaves()))
	}
	byField := map[string]Entry{}
	for _, e := range entries {
		e.Source.File = strings.TrimPrefix(e.Source.File, l.Files[0][:len(l.Files[0])-len("config.yaml")])
		byField[e.Field] = e
	}
	tests := []struct{ field, want string }{
		{"policy.exec_timeout_seconds", `{"field":"policy.exec_timeout_seconds","value":30,"source":{"file":"config.yaml","line":2}}`},
		{"exec.limits.tmpfs_size", `{"field":"exec.limits.tmpfs_size","value":1073741824,"source":{}}`},
		{"exec.sandbox.deny_read", `{"field":"exec.sandbox.deny_read","value":[],"source":{}}`},
	}
	for _, tt := range tests {
		out, err := json.Marshal(byField[tt.field])
		if err != nil {
			t.Fatal(err)
		}
		if got := string(out); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestYAMLString(t *testing.T) {
	t.Parallel()
	// Whatever yamlString writes, YAML reads back as the same string.
	for _, s := range []string{"", "/bin/bash", "~", "~/x", "true", "null", "1", "0x10", "a b", "a: b", "#x", "-x", "[x]", "it's", "é", ".inf", "NODE_ENV", ".git/hooks"} {
		var got struct{ V any }
		if err := yamlUnmarshal("v: "+yamlString(s), &got); err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if !reflect.DeepEqual(got.V, s) {
			t.Errorf("yamlString(%q) = %s reads back as %#v", s, yamlString(s), got.V)
		}
	}
}

func TestConfigHelpers(t *testing.T) {
	t.Parallel()
	c := defaultConfig()
	if got, want := c.WorkspaceRootsEffective(), []string{"/home/u/src"}; !reflect.DeepEqual(got, want) {
		t.Errorf("WorkspaceRootsEffective: got %q, want %q", got, want)
	}
	c.Policy.WorkspaceRoots = []string{"/a", "/b"}
	got := c.WorkspaceRootsEffective()
	if want := []string{"/a", "/b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("WorkspaceRootsEffective: got %q, want %q", got, want)
	}
	got[0] = "/changed"
	if c.Policy.WorkspaceRoots[0] != "/a" {
		t.Error("WorkspaceRootsEffective returned the config's own slice")
	}

	tests := []struct{ exec, max, want int }{{120, 3600, 120}, {600, 300, 300}, {60, 60, 60}}
	for _, tt := range tests {
		c.Policy.ExecTimeoutSeconds, c.Exec.Limits.MaxTimeoutSeconds = tt.exec, tt.max
		if got := c.TimeoutCeiling(); got != tt.want {
			t.Errorf("TimeoutCeiling(%d, %d): got %d, want %d", tt.exec, tt.max, got, tt.want)
		}
	}
}

// A wildcard entry's line says it allows the domain itself too.
func TestShowWildcardAllowsDomain(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", "policy:\n  egress_allowlist: [\"*.example.com\", api.other.org, \"*.corp.test:8443\"]\n  egress_allowlist_by_agent:\n    claude-code: [\"*.npmjs.org\"]\n")
	if errText != "" {
		t.Fatal(errText)
	}
	var b strings.Builder
	if err := l.Show(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`config.yaml:2; *.example.com also allows example.com; *.corp.test:8443 also allows corp.test:8443`,
		`config.yaml:3; *.npmjs.org also allows npmjs.org`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("config show lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Count(b.String(), "also allows") != 3 {
		t.Errorf("notes on other lines:\n%s", b.String())
	}
}
