package policy

import (
	"reflect"
	"testing"
)

func TestNarrow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, managed, user string
		want                string // the error; "" when the user value is accepted
		field               string // when accepted: this field...
		value               any    // ...has this effective value
	}{
		// Numbers: user ≤ managed.
		{name: "timeout widened",
			managed: "# IT\npolicy:\n  exec_timeout_seconds: 300\n",
			user:    "policy:\n  exec_timeout_seconds: 600\n",
			want:    "config.yaml:2: policy.exec_timeout_seconds: 600 widens the managed value 300 (managed.yaml:3); use a value from 1 to 300"},
		{name: "timeout narrowed",
			managed: "policy:\n  exec_timeout_seconds: 300\n", user: "policy:\n  exec_timeout_seconds: 60\n",
			field: "policy.exec_timeout_seconds", value: 60},
		{name: "timeout equal",
			managed: "policy:\n  exec_timeout_seconds: 300\n", user: "policy:\n  exec_timeout_seconds: 300\n",
			field: "policy.exec_timeout_seconds", value: 300},
		{name: "max timeout widened",
			managed: "exec:\n  limits:\n    max_timeout_seconds: 600\n", user: "exec:\n  limits:\n    max_timeout_seconds: 601\n",
			want: "config.yaml:3: exec.limits.max_timeout_seconds: 601 widens the managed value 600 (managed.yaml:3); use a value from 1 to 600"},
		{name: "tmpfs widened",
			managed: "exec:\n  limits:\n    tmpfs_size: 1GiB\n", user: "exec:\n  limits:\n    tmpfs_size: 2GiB\n",
			want: "config.yaml:3: exec.limits.tmpfs_size: 2GiB widens the managed value 1GiB (managed.yaml:3); use a value from 1MiB to 1GiB"},
		{name: "tmpfs narrowed",
			managed: "exec:\n  limits:\n    tmpfs_size: 1GiB\n", user: "exec:\n  limits:\n    tmpfs_size: 64MiB\n",
			field: "exec.limits.tmpfs_size", value: 64 * MiB},
		{name: "memory widened by one byte",
			managed: "exec:\n  limits:\n    memory_max: 1GiB\n", user: "exec:\n  limits:\n    memory_max: 1073741825\n",
			want: "config.yaml:3: exec.limits.memory_max: 1073741825B widens the managed value 1GiB (managed.yaml:3); use a value from 1B to 1GiB"},
		{name: "stdin widened",
			managed: "exec:\n  limits:\n    stdin_max_bytes: 1MiB\n", user: "exec:\n  limits:\n    stdin_max_bytes: 2MiB\n",
			want: "config.yaml:3: exec.limits.stdin_max_bytes: 2MiB widens the managed value 1MiB (managed.yaml:3); use a value from 1B to 1MiB"},
		{name: "output widened",
			managed: "exec:\n  limits:\n    output_max_bytes: 64KiB\n", user: "exec:\n  limits:\n    output_max_bytes: 1MB\n",
			want: "config.yaml:3: exec.limits.output_max_bytes: 1MB widens the managed value 64KiB (managed.yaml:3); use a value from 1KiB to 64KiB"},
		{name: "file size widened",
			managed: "exec:\n  limits:\n    file_size_max: 1GiB\n", user: "exec:\n  limits:\n    file_size_max: 4GiB\n",
			want: "config.yaml:3: exec.limits.file_size_max: 4GiB widens the managed value 1GiB (managed.yaml:3); use a value from 1B to 1GiB"},
		{name: "pids widened",
			managed: "exec:\n  limits:\n    pids_max: 256\n", user: "exec:\n  limits:\n    pids_max: 257\n",
			want: "config.yaml:3: exec.limits.pids_max: 257 widens the managed value 256 (managed.yaml:3); use a value from 16 to 256"},
		{name: "concurrency widened",
			managed: "exec:\n  limits:\n    max_concurrent: 2\n", user: "exec:\n  limits:\n    max_concurrent: 4\n",
			want: "config.yaml:3: exec.limits.max_concurrent: 4 widens the managed value 2 (managed.yaml:3); use a value from 1 to 2"},
		{name: "concurrency narrowed",
			managed: "exec:\n  limits:\n    max_concurrent: 2\n", user: "exec:\n  limits:\n    max_concurrent: 1\n",
			field: "exec.limits.max_concurrent", value: 1},
		{name: "pending tickets widened",
			managed: "exec:\n  limits:\n    max_pending_tickets: 16\n", user: "exec:\n  limits:\n    max_pending_tickets: 17\n",
			want: "config.yaml:3: exec.limits.max_pending_tickets: 17 widens the managed value 16 (managed.yaml:3); use a value from 1 to 16"},

		// Terminal controls: keep < escape.
		{name: "terminal controls locked to escape",
			managed: "exec:\n  output:\n    terminal_controls: escape\n", user: "exec:\n  output:\n    terminal_controls: keep\n",
			want: `config.yaml:3: exec.output.terminal_controls: "keep" widens the managed value "escape" (managed.yaml:3); only escape is allowed`},
		{name: "terminal controls narrowed to escape",
			managed: "exec:\n  output:\n    terminal_controls: keep\n", user: "exec:\n  output:\n    terminal_controls: escape\n",
			field: "exec.output.terminal_controls", value: "escape"},

		// Booleans.
		{name: "enabled locked off",
			managed: "exec:\n  enabled: false\n", user: "exec:\n  enabled: true\n",
			want: "config.yaml:2: exec.enabled: true widens the managed value false (managed.yaml:2); only false is allowed"},
		{name: "enabled turned off",
			managed: "exec:\n  enabled: true\n", user: "exec:\n  enabled: false\n",
			field: "exec.enabled", value: false},
		{name: "sandbox_required locked on",
			managed: "policy:\n  sandbox_required: true\n", user: "policy:\n  sandbox_required: false\n",
			want: "config.yaml:2: policy.sandbox_required: false widens the managed value true (managed.yaml:2); only true is allowed"},
		{name: "sandbox_required turned on",
			managed: "policy:\n  sandbox_required: false\n", user: "policy:\n  sandbox_required: true\n",
			field: "policy.sandbox_required", value: true},
		{name: "audit_required locked on",
			managed: "policy:\n  audit_required: true\n", user: "policy:\n  audit_required: false\n",
			want: "config.yaml:2: policy.audit_required: false widens the managed value true (managed.yaml:2); only true is allowed"},
		{name: "audit_required turned off",
			managed: "policy:\n  audit_required: false\n", user: "policy:\n  audit_required: false\n",
			field: "policy.audit_required", value: false},
		{name: "ptrace locked off",
			managed: "exec:\n  sandbox:\n    allow_ptrace: false\n", user: "exec:\n  sandbox:\n    allow_ptrace: true\n",
			want: "config.yaml:3: exec.sandbox.allow_ptrace: true widens the managed value false (managed.yaml:3); only false is allowed"},
		{name: "ptrace turned off",
			managed: "exec:\n  sandbox:\n    allow_ptrace: true\n", user: "exec:\n  sandbox:\n    allow_ptrace: false\n",
			field: "exec.sandbox.allow_ptrace", value: false},

		// Locked strings.
		{name: "shell locked",
			managed: "exec:\n  shell: /bin/bash\n", user: "exec:\n  shell: /bin/sh\n",
			want: `config.yaml:2: exec.shell: "/bin/sh" differs from the managed value "/bin/bash" (managed.yaml:2); only "/bin/bash" is allowed`},
		{name: "shell same",
			managed: "exec:\n  shell: /bin/sh\n", user: "exec:\n  shell: /bin/sh\n",
			field: "exec.shell", value: "/bin/sh"},
		{name: "bwrap path locked",
			managed: "exec:\n  sandbox:\n    bwrap_path: /usr/bin/bwrap\n", user: "exec:\n  sandbox:\n    bwrap_path: \"\"\n",
			want: `config.yaml:3: exec.sandbox.bwrap_path: "" differs from the managed value "/usr/bin/bwrap" (managed.yaml:3); only "/usr/bin/bwrap" is allowed`},

		{name: "init path locked",
			managed: "exec:\n  sandbox:\n    init_path: /usr/lib/gatehouse/gatehouse-init\n", user: "exec:\n  sandbox:\n    init_path: /opt/gatehouse-init\n",
			want: `config.yaml:3: exec.sandbox.init_path: "/opt/gatehouse-init" differs from the managed value "/usr/lib/gatehouse/gatehouse-init" (managed.yaml:3); only "/usr/lib/gatehouse/gatehouse-init" is allowed`},

		// Backend: none < auto < bubblewrap, seatbelt.
		{name: "backend auto to none",
			managed: "exec:\n  sandbox:\n    backend: auto\n", user: "exec:\n  sandbox:\n    backend: none\n",
			want: `config.yaml:3: exec.sandbox.backend: "none" widens the managed value "auto" (managed.yaml:3); use auto, bubblewrap or seatbelt`},
		{name: "backend auto to bubblewrap",
			managed: "exec:\n  sandbox:\n    backend: auto\n", user: "exec:\n  sandbox:\n    backend: bubblewrap\n",
			field: "exec.sandbox.backend", value: "bubblewrap"},
		{name: "backend auto to seatbelt",
			managed: "exec:\n  sandbox:\n    backend: auto\n", user: "exec:\n  sandbox:\n    backend: seatbelt\n",
			field: "exec.sandbox.backend", value: "seatbelt"},
		{name: "backend bubblewrap to seatbelt",
			managed: "exec:\n  sandbox:\n    backend: bubblewrap\n", user: "exec:\n  sandbox:\n    backend: seatbelt\n",
			want: `config.yaml:3: exec.sandbox.backend: "seatbelt" differs from the managed value "bubblewrap" (managed.yaml:3); only bubblewrap is allowed`},
		{name: "backend bubblewrap to auto",
			managed: "exec:\n  sandbox:\n    backend: bubblewrap\n", user: "exec:\n  sandbox:\n    backend: auto\n",
			want: `config.yaml:3: exec.sandbox.backend: "auto" widens the managed value "bubblewrap" (managed.yaml:3); only bubblewrap is allowed`},
		{name: "backend seatbelt to none",
			managed: "exec:\n  sandbox:\n    backend: seatbelt\n", user: "exec:\n  sandbox:\n    backend: none\n",
			want: `config.yaml:3: exec.sandbox.backend: "none" widens the managed value "seatbelt" (managed.yaml:3); only seatbelt is allowed`},
		{name: "backend none is free",
			managed: "exec:\n  sandbox:\n    backend: none\n", user: "exec:\n  sandbox:\n    backend: auto\n",
			field: "exec.sandbox.backend", value: "auto"},
		{name: "backend invalid left to validation",
			managed: "exec:\n  sandbox:\n    backend: auto\n", user: "exec:\n  sandbox:\n    backend: nope\n",
			want: `config.yaml:3: exec.sandbox.backend: "nope" is not one of none, auto, bubblewrap, seatbelt`},

		// Seccomp: off < preferred < required.
		{name: "seccomp preferred to off",
			managed: "exec:\n  sandbox:\n    seccomp: preferred\n", user: "exec:\n  sandbox:\n    seccomp: off\n",
			want: `config.yaml:3: exec.sandbox.seccomp: "off" widens the managed value "preferred" (managed.yaml:3); use preferred or required`},
		{name: "seccomp required to preferred",
			managed: "exec:\n  sandbox:\n    seccomp: required\n", user: "exec:\n  sandbox:\n    seccomp: preferred\n",
			want: `config.yaml:3: exec.sandbox.seccomp: "preferred" widens the managed value "required" (managed.yaml:3); only required is allowed`},
		{name: "seccomp preferred to required",
			managed: "exec:\n  sandbox:\n    seccomp: preferred\n", user: "exec:\n  sandbox:\n    seccomp: required\n",
			field: "exec.sandbox.seccomp", value: "required"},

		// Directories: inside the managed ones.
		{name: "cwd inside",
			managed: "exec:\n  default_cwd: ~/src\n", user: "exec:\n  default_cwd: ~/src/app\n",
			field: "exec.default_cwd", value: "/home/u/src/app"},
		{name: "cwd outside",
			managed: "exec:\n  default_cwd: ~/src\n", user: "exec:\n  default_cwd: /tmp\n",
			want: `config.yaml:2: exec.default_cwd: "/tmp" is outside the managed value "/home/u/src" (managed.yaml:2); use that directory or one inside it`},
		{name: "cwd sibling prefix",
			managed: "exec:\n  default_cwd: /app\n", user: "exec:\n  default_cwd: /app_backup\n",
			want: `config.yaml:2: exec.default_cwd: "/app_backup" is outside the managed value "/app" (managed.yaml:2); use that directory or one inside it`},
		{name: "cwd dotdot escape",
			managed: "exec:\n  default_cwd: /app\n", user: "exec:\n  default_cwd: /app/../etc\n",
			want: `config.yaml:2: exec.default_cwd: "/etc" is outside the managed value "/app" (managed.yaml:2); use that directory or one inside it`},
		{name: "roots inside",
			managed: "policy:\n  workspace_roots: [/work, ~/src]\n", user: "policy:\n  workspace_roots: [/work/a, ~/src, ~/src/b/c]\n",
			field: "policy.workspace_roots", value: []string{"/work/a", "/home/u/src", "/home/u/src/b/c"}},
		{name: "roots outside",
			managed: "policy:\n  workspace_roots: [/work, ~/src]\n",
			user:    "policy:\n  workspace_roots:\n    - /work/a\n    - /work_backup\n    - /\n",
			want: `config.yaml:4: policy.workspace_roots[1]: "/work_backup" is outside the managed list ["/work", "/home/u/src"] (managed.yaml:2); use one of those directories or one inside them` + "\n" +
				`config.yaml:5: policy.workspace_roots[2]: "/" is outside the managed list ["/work", "/home/u/src"] (managed.yaml:2); use one of those directories or one inside them`},
		{name: "roots empty keeps managed",
			managed: "policy:\n  workspace_roots: [/work]\n", user: "policy:\n  workspace_roots: []\n",
			field: "policy.workspace_roots", value: []string{"/work"}},
		{name: "roots under empty managed list are free",
			managed: "policy:\n  workspace_roots: []\n", user: "policy:\n  workspace_roots: [/srv]\n",
			field: "policy.workspace_roots", value: []string{"/srv"}},
		{name: "roots not managed are free",
			managed: "policy:\n  exec_timeout_seconds: 60\n", user: "policy:\n  workspace_roots: [/srv]\n",
			field: "policy.workspace_roots", value: []string{"/srv"}},
		{name: "inspection roots outside",
			managed: "policy:\n  script_inspection_roots: [/opt/scripts]\n", user: "policy:\n  script_inspection_roots: [/opt]\n",
			want: `config.yaml:2: policy.script_inspection_roots[0]: "/opt" is outside the managed list ["/opt/scripts"] (managed.yaml:2); use one of those directories or one inside them`},
		{name: "inspection roots inside",
			managed: "policy:\n  script_inspection_roots: [/opt/scripts]\n", user: "policy:\n  script_inspection_roots: [/opt/scripts/ci]\n",
			field: "policy.script_inspection_roots", value: []string{"/opt/scripts/ci"}},

		// agent_settable: a subset.
		{name: "env subset",
			managed: "exec:\n  env:\n    agent_settable: [A, B]\n", user: "exec:\n  env:\n    agent_settable: [B]\n",
			field: "exec.env.agent_settable", value: []string{"B"}},
		{name: "env not in managed",
			managed: "exec:\n  env:\n    agent_settable: [A, B]\n", user: "exec:\n  env:\n    agent_settable: [A, C]\n",
			want: `config.yaml:3: exec.env.agent_settable[1]: "C" is not in the managed list ["A", "B"] (managed.yaml:3); use names from that list`},
		{name: "env managed empty",
			managed: "exec:\n  env:\n    agent_settable: []\n", user: "exec:\n  env:\n    agent_settable: [A]\n",
			want: `config.yaml:3: exec.env.agent_settable[0]: "A" is not in the managed list [] (managed.yaml:3); the managed file allows none`},

		// deny_read and write_deny accumulate.
		{name: "deny_read union",
			managed: "exec:\n  sandbox:\n    deny_read: [/a, /b]\n", user: "exec:\n  sandbox:\n    deny_read: [/b, /c]\n",
			field: "exec.sandbox.deny_read", value: []string{"/a", "/b", "/c"}},
		{name: "deny_read cannot be emptied",
			managed: "exec:\n  sandbox:\n    deny_read: [/a]\n", user: "exec:\n  sandbox:\n    deny_read: []\n",
			field: "exec.sandbox.deny_read", value: []string{"/a"}},
		{name: "write_deny union",
			managed: "exec:\n  sandbox:\n    write_deny: [.git/hooks]\n", user: "exec:\n  sandbox:\n    write_deny: [.envrc]\n",
			field: "exec.sandbox.write_deny", value: []string{".git/hooks", ".envrc"}},

		// The read posture: a managed workspace holds, and so does what it
		// hides.
		{name: "read posture widened",
			managed: "exec:\n  sandbox:\n    read: workspace\n", user: "exec:\n  sandbox:\n    read: host\n",
			want: `config.yaml:3: exec.sandbox.read: "host" widens the managed value "workspace" (managed.yaml:3); only workspace is allowed`},
		{name: "read posture narrowed",
			managed: "exec:\n  sandbox:\n    read: host\n", user: "exec:\n  sandbox:\n    read: workspace\n",
			field: "exec.sandbox.read", value: "workspace"},
		{name: "read posture kept when the user says nothing",
			managed: "exec:\n  sandbox:\n    read: workspace\n", user: "exec:\n  sandbox:\n    warm_pool: 1\n",
			field: "exec.sandbox.read", value: "workspace"},
		{name: "read_allow under a managed workspace without a list",
			managed: "exec:\n  sandbox:\n    read: workspace\n", user: "exec:\n  sandbox:\n    read_allow: [~/go/pkg/mod]\n",
			want: `config.yaml:3: exec.sandbox.read_allow[0]: "/home/u/go/pkg/mod" is outside the managed list [] (managed.yaml:3); the managed file allows none`},
		{name: "read_allow outside the managed list",
			managed: "exec:\n  sandbox:\n    read: workspace\n    read_allow: [~/go/pkg/mod]\n",
			user:    "exec:\n  sandbox:\n    read_allow: [~/go/pkg/mod/cache, ~/Documents]\n",
			want:    `config.yaml:3: exec.sandbox.read_allow[1]: "/home/u/Documents" is outside the managed list ["/home/u/go/pkg/mod"] (managed.yaml:4); use one of those paths or one inside them`},
		{name: "read_allow inside the managed list",
			managed: "exec:\n  sandbox:\n    read: workspace\n    read_allow: [~/go/pkg/mod]\n",
			user:    "exec:\n  sandbox:\n    read_allow: [~/go/pkg/mod/cache]\n",
			field:   "exec.sandbox.read_allow", value: []string{"/home/u/go/pkg/mod/cache"}},
		{name: "read_allow free under a managed host posture's silence",
			managed: "policy:\n  exec_timeout_seconds: 60\n", user: "exec:\n  sandbox:\n    read_allow: [~/Documents]\n",
			field: "exec.sandbox.read_allow", value: []string{"/home/u/Documents"}},
		{name: "read_allow free under a managed host posture",
			managed: "exec:\n  sandbox:\n    read: host\n", user: "exec:\n  sandbox:\n    read: workspace\n    read_allow: [~/go]\n",
			field: "exec.sandbox.read_allow", value: []string{"/home/u/go"}},
		{name: "settings_file locked",
			managed: "exec:\n  sandbox:\n    settings_file: /etc/srt.json\n", user: "exec:\n  sandbox:\n    settings_file: \"\"\n",
			want: `config.yaml:3: exec.sandbox.settings_file: "" differs from the managed value "/etc/srt.json" (managed.yaml:3); only "/etc/srt.json" is allowed`},

		// What the managed file does not set is free.
		{name: "unmanaged field widened",
			managed: "policy:\n  exec_timeout_seconds: 60\n", user: "exec:\n  limits:\n    pids_max: 4096\n",
			field: "exec.limits.pids_max", value: 4096},

		// Every widening is reported, in line order.
		{name: "several",
			managed: "exec:\n  enabled: false\npolicy:\n  exec_timeout_seconds: 60\n",
			user:    "policy:\n  exec_timeout_seconds: 61\nexec:\n  enabled: true\n",
			want: "config.yaml:2: policy.exec_timeout_seconds: 61 widens the managed value 60 (managed.yaml:4); use a value from 1 to 60\n" +
				"config.yaml:4: exec.enabled: true widens the managed value false (managed.yaml:2); only false is allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, got := loadFiles(t, tt.managed, tt.user)
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if l == nil {
				return
			}
			if v := leafValue(&l.Config, tt.field); !reflect.DeepEqual(v, tt.value) {
				t.Errorf("%s: got %#v, want %#v", tt.field, v, tt.value)
			}
			if err := l.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
