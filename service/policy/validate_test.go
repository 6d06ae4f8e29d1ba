package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	// manyRoots is a workspace_roots list of n distinct entries.
	manyRoots := func(n int) string {
		var b strings.Builder
		b.WriteString("policy:\n  workspace_roots:\n")
		for i := range n {
			fmt.Fprintf(&b, "    - /w/%d\n", i)
		}
		return b.String()
	}
	const wantWriteDeny = "want a clean relative path like .git/hooks"
	tests := []struct {
		name, user, want string // want "" means valid
	}{
		// exec.shell
		{"shell bash", "exec:\n  shell: /usr/local/bin/bash\n", ""},
		{"shell sh", "exec:\n  shell: /bin/sh\n", ""},
		{"shell zsh", "exec:\n  shell: /bin/zsh\n", `config.yaml:2: exec.shell: "/bin/zsh": basename must be bash or sh`},
		{"shell fish", "exec:\n  shell: /usr/bin/fish\n", `config.yaml:2: exec.shell: "/usr/bin/fish": basename must be bash or sh`},
		{"shell pwsh", "exec:\n  shell: /usr/bin/pwsh\n", `config.yaml:2: exec.shell: "/usr/bin/pwsh": basename must be bash or sh`},
		{"shell rbash", "exec:\n  shell: /bin/rbash\n", `config.yaml:2: exec.shell: "/bin/rbash": basename must be bash or sh`},
		{"shell bash5", "exec:\n  shell: /bin/bash5\n", `config.yaml:2: exec.shell: "/bin/bash5": basename must be bash or sh`},
		{"shell relative", "exec:\n  shell: bash\n", `config.yaml:2: exec.shell: "bash": must be an absolute path, like /bin/bash`},
		{"shell empty", "exec:\n  shell: \"\"\n", `config.yaml:2: exec.shell: "": must be an absolute path, like /bin/bash`},

		// exec.output.terminal_controls
		{"terminal controls keep", "exec:\n  output:\n    terminal_controls: keep\n", ""},
		{"terminal controls escape", "exec:\n  output:\n    terminal_controls: escape\n", ""},
		{"terminal controls strip", "exec:\n  output:\n    terminal_controls: strip\n", `config.yaml:3: exec.output.terminal_controls: "strip" is not one of keep, escape`},

		// exec.default_cwd
		{"cwd absolute", "exec:\n  default_cwd: /work\n", ""},
		{"cwd relative", "exec:\n  default_cwd: src\n", `config.yaml:2: exec.default_cwd: "src" is not an absolute path; want one starting with / or ~/`},
		{"cwd other user", "exec:\n  default_cwd: ~bob/src\n", `config.yaml:2: exec.default_cwd: "~bob/src" is not an absolute path; only "~" and "~/" expand, to your home directory`},

		// exec.sandbox
		{"backend bubblewrap", "exec:\n  sandbox:\n    backend: bubblewrap\n", ""},
		{"backend none", "exec:\n  sandbox:\n    backend: none\n", ""},
		{"backend typo", "exec:\n  sandbox:\n    backend: bwrapp\n", `config.yaml:3: exec.sandbox.backend: "bwrapp" is not one of none, auto, bubblewrap, seatbelt`},
		{"backend case", "exec:\n  sandbox:\n    backend: Auto\n", `config.yaml:3: exec.sandbox.backend: "Auto" is not one of none, auto, bubblewrap, seatbelt`},
		{"seccomp off", "exec:\n  sandbox:\n    seccomp: off\n", ""},
		{"seccomp bad", "exec:\n  sandbox:\n    seccomp: strict\n", `config.yaml:3: exec.sandbox.seccomp: "strict" is not one of off, preferred, required`},
		{"bwrap_path relative", "exec:\n  sandbox:\n    bwrap_path: bin/bwrap\n", `config.yaml:3: exec.sandbox.bwrap_path: "bin/bwrap" is not an absolute path; want a path like /usr/bin/bwrap, or "" to find bwrap in PATH`},
		{"init_path relative", "exec:\n  sandbox:\n    init_path: bin/gatehouse-init\n", `config.yaml:3: exec.sandbox.init_path: "bin/gatehouse-init" is not an absolute path; want a path like /usr/lib/gatehouse/gatehouse-init, or "" to find gatehouse-init next to gatehouse`},
		{"init_path absolute", "exec:\n  sandbox:\n    init_path: /opt/gatehouse-init\n", ""},
		{"deny_read relative", "exec:\n  sandbox:\n    deny_read:\n      - /etc/shadow\n      - .aws\n", `config.yaml:5: exec.sandbox.deny_read[1]: ".aws" is not an absolute path; want one starting with / or ~/`},
		{"write_deny ok", "exec:\n  sandbox:\n    write_deny: [.git/hooks, .envrc, Makefile]\n", ""},
		{"write_deny absolute", "exec:\n  sandbox:\n    write_deny: [/etc]\n", `config.yaml:3: exec.sandbox.write_deny[0]: "/etc" is absolute; ` + wantWriteDeny},
		{"write_deny dotdot", "exec:\n  sandbox:\n    write_deny: [../x]\n", `config.yaml:3: exec.sandbox.write_deny[0]: "../x" contains ".."; ` + wantWriteDeny},
		{"write_deny inner dotdot", "exec:\n  sandbox:\n    write_deny: [a/../../b]\n", `config.yaml:3: exec.sandbox.write_deny[0]: "a/../../b" contains ".."; ` + wantWriteDeny},
		{"write_deny unclean", "exec:\n  sandbox:\n    write_deny: [.git//hooks/]\n", `config.yaml:3: exec.sandbox.write_deny[0]: ".git//hooks/" is not clean; write ".git/hooks"`},
		{"write_deny dot", "exec:\n  sandbox:\n    write_deny: [.]\n", `config.yaml:3: exec.sandbox.write_deny[0]: "." names the root itself; ` + wantWriteDeny},
		{"write_deny empty", "exec:\n  sandbox:\n    write_deny: [\"\"]\n", `config.yaml:3: exec.sandbox.write_deny[0]: "" names the root itself; ` + wantWriteDeny},
		{"write_deny dotdot name", "exec:\n  sandbox:\n    write_deny: [..foo]\n", ""},

		// exec.limits
		{"max_timeout zero", "exec:\n  limits:\n    max_timeout_seconds: 0\n", "config.yaml:3: exec.limits.max_timeout_seconds: 0 is out of range; want 1 to 86400"},
		{"max_timeout day", "exec:\n  limits:\n    max_timeout_seconds: 86400\n", ""},
		{"max_timeout over", "exec:\n  limits:\n    max_timeout_seconds: 86401\n", "config.yaml:3: exec.limits.max_timeout_seconds: 86401 is out of range; want 1 to 86400"},
		{"stdin max", "exec:\n  limits:\n    stdin_max_bytes: 64MiB\n", ""},
		{"stdin over", "exec:\n  limits:\n    stdin_max_bytes: 65MiB\n", "config.yaml:3: exec.limits.stdin_max_bytes: 65MiB is out of range; want 1B to 64MiB"},
		{"stdin zero", "exec:\n  limits:\n    stdin_max_bytes: 0\n", "config.yaml:3: exec.limits.stdin_max_bytes: 0B is out of range; want 1B to 64MiB"},
		{"output min", "exec:\n  limits:\n    output_max_bytes: 1KiB\n", ""},
		{"output under", "exec:\n  limits:\n    output_max_bytes: 1000\n", "config.yaml:3: exec.limits.output_max_bytes: 1KB is too small; want at least 1KiB"},
		{"memory zero", "exec:\n  limits:\n    memory_max: 0\n", "config.yaml:3: exec.limits.memory_max: 0B is too small; want at least 1B"},
		{"pids min", "exec:\n  limits:\n    pids_max: 16\n", ""},
		{"pids under", "exec:\n  limits:\n    pids_max: 15\n", "config.yaml:3: exec.limits.pids_max: 15 is too small; want at least 16"},
		{"pids negative", "exec:\n  limits:\n    pids_max: -1\n", "config.yaml:3: exec.limits.pids_max: -1 is too small; want at least 16"},
		{"tmpfs under", "exec:\n  limits:\n    tmpfs_size: 512KiB\n", "config.yaml:3: exec.limits.tmpfs_size: 512KiB is too small; want at least 1MiB"},
		{"file size zero", "exec:\n  limits:\n    file_size_max: 0\n", "config.yaml:3: exec.limits.file_size_max: 0B is too small; want at least 1B"},
		{"concurrent zero", "exec:\n  limits:\n    max_concurrent: 0\n", "config.yaml:3: exec.limits.max_concurrent: 0 is out of range; want 1 to 256"},
		{"concurrent max", "exec:\n  limits:\n    max_concurrent: 256\n", ""},
		{"pending tickets zero", "exec:\n  limits:\n    max_pending_tickets: 0\n", "config.yaml:3: exec.limits.max_pending_tickets: 0 is out of range; want 1 to 4096"},
		{"concurrent over", "exec:\n  limits:\n    max_concurrent: 257\n", "config.yaml:3: exec.limits.max_concurrent: 257 is out of range; want 1 to 256"},

		// exec.env
		{"env ok", "exec:\n  env:\n    agent_settable: [RUST_BACKTRACE, _X, node_env]\n", ""},
		{"env digit", "exec:\n  env:\n    agent_settable: [1FOO]\n", `config.yaml:3: exec.env.agent_settable[0]: "1FOO" is not an environment variable name; want letters, digits and _, not starting with a digit`},
		{"env dash", "exec:\n  env:\n    agent_settable: [OK, FOO-BAR]\n", `config.yaml:3: exec.env.agent_settable[1]: "FOO-BAR" is not an environment variable name; want letters, digits and _, not starting with a digit`},
		{"env equals", "exec:\n  env:\n    agent_settable: [\"A=B\"]\n", `config.yaml:3: exec.env.agent_settable[0]: "A=B" is not an environment variable name; want letters, digits and _, not starting with a digit`},
		{"env PATH", "exec:\n  env:\n    agent_settable:\n      - PATH\n", `config.yaml:4: exec.env.agent_settable[0]: "PATH" is reserved: it changes how the shell starts or programs load, so agents may never set it`},
		{"env BASH_ENV", "exec:\n  env:\n    agent_settable: [BASH_ENV]\n", `config.yaml:3: exec.env.agent_settable[0]: "BASH_ENV" is reserved: it changes how the shell starts or programs load, so agents may never set it`},
		{"env GATEHOUSE_", "exec:\n  env:\n    agent_settable: [GATEHOUSE_TOKEN]\n", `config.yaml:3: exec.env.agent_settable[0]: "GATEHOUSE_TOKEN" is reserved: it changes how the shell starts or programs load, so agents may never set it`},
		{"env BASH_FUNC_", "exec:\n  env:\n    agent_settable: [BASH_FUNC_ls]\n", `config.yaml:3: exec.env.agent_settable[0]: "BASH_FUNC_ls" is reserved: it changes how the shell starts or programs load, so agents may never set it`},
		{"env LD_AUDIT", "exec:\n  env:\n    agent_settable: [LD_AUDIT]\n", `config.yaml:3: exec.env.agent_settable[0]: "LD_AUDIT" is reserved: it changes how the shell starts or programs load, so agents may never set it`},
		{"env lowercase path", "exec:\n  env:\n    agent_settable: [path]\n", ""},

		// policy
		{"timeout min", "policy:\n  exec_timeout_seconds: 1\n", ""},
		{"timeout max", "policy:\n  exec_timeout_seconds: 3600\n", ""},
		{"timeout zero", "policy:\n  exec_timeout_seconds: 0\n", "config.yaml:2: policy.exec_timeout_seconds: 0 is out of range; want 1 to 3600"},
		{"timeout negative", "policy:\n  exec_timeout_seconds: -5\n", "config.yaml:2: policy.exec_timeout_seconds: -5 is out of range; want 1 to 3600"},
		{"timeout over", "policy:\n  exec_timeout_seconds: 3601\n", "config.yaml:2: policy.exec_timeout_seconds: 3601 is out of range; want 1 to 3600"},
		{"roots 32", manyRoots(32), ""},
		{"roots 33", manyRoots(33), "config.yaml:2: policy.workspace_roots: 33 entries is too many; want at most 32"},
		{"root relative", "policy:\n  workspace_roots: [/work, src]\n", `config.yaml:2: policy.workspace_roots[1]: "src" is not an absolute path; want one starting with / or ~/`},
		{"root slash", "policy:\n  workspace_roots:\n    - /work\n    - /\n", `config.yaml:4: policy.workspace_roots[1]: "/" is the whole filesystem; want a directory like ~/src`},
		{"root slash unclean", "policy:\n  workspace_roots: [/tmp/..]\n", `config.yaml:2: policy.workspace_roots[0]: "/" is the whole filesystem; want a directory like ~/src`},
		{"root duplicate", "policy:\n  workspace_roots:\n    - ~/src\n    - /work\n    - /home/u/src/\n", `config.yaml:5: policy.workspace_roots[2]: "/home/u/src" is listed twice; remove one`},
		{"root prefix is not duplicate", "policy:\n  workspace_roots: [/app, /app_backup]\n", ""},
		{"inspection relative", "policy:\n  script_inspection_roots: [scripts]\n", `config.yaml:2: policy.script_inspection_roots[0]: "scripts" is not an absolute path; want one starting with / or ~/`},

		// Several problems are all reported, in line order.
		{"all at once", "exec:\n  shell: /bin/zsh\n  sandbox:\n    backend: bwrapp\npolicy:\n  exec_timeout_seconds: 0\n",
			`config.yaml:2: exec.shell: "/bin/zsh": basename must be bash or sh` + "\n" +
				`config.yaml:4: exec.sandbox.backend: "bwrapp" is not one of none, auto, bubblewrap, seatbelt` + "\n" +
				`config.yaml:6: policy.exec_timeout_seconds: 0 is out of range; want 1 to 3600`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, got := loadFiles(t, "", tt.user)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if l != nil {
				if err := l.Validate(); err != nil {
					t.Errorf("Load succeeded but Validate: %v", err)
				}
			}
		})
	}
}

func TestValidateManagedValueOverridden(t *testing.T) {
	t.Parallel()
	// An invalid managed value is reported even when the user file sets
	// a valid one over it.
	_, got := loadFiles(t, "exec:\n  limits:\n    pids_max: 4\n", "exec:\n  limits:\n    pids_max: 2\n")
	want := "managed.yaml:3: exec.limits.pids_max: 4 is too small; want at least 16\n" +
		"config.yaml:3: exec.limits.pids_max: 2 is too small; want at least 16"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	c := defaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	c.Exec.Shell = "/bin/zsh"
	c.Policy.WorkspaceRoots = []string{"/w", "rel"}
	err := c.Validate()
	want := `exec.shell: "/bin/zsh": basename must be bash or sh` + "\n" +
		`policy.workspace_roots[1]: "rel" is not an absolute path; want one starting with / or ~/`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestFieldErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    FieldError
		want string
	}{
		{FieldError{File: "c.yaml", Line: 4, Field: "exec.shell", Err: fmt.Errorf("bad")}, "c.yaml:4: exec.shell: bad"},
		{FieldError{File: "default", Field: "exec.shell", Err: fmt.Errorf("bad")}, "default: exec.shell: bad"},
		{FieldError{File: "c.yaml", Line: 1, Err: fmt.Errorf("bad")}, "c.yaml:1: bad"},
		{FieldError{Field: "exec.shell", Err: fmt.Errorf("bad")}, "exec.shell: bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestLoadedValidate(t *testing.T) {
	t.Parallel()
	// Validate locates a bad effective value where it was set: a file
	// line, an entry's own line, or the defaults.
	l, errText := loadFiles(t, "", "exec:\n  shell: /bin/sh\npolicy:\n  workspace_roots:\n    - /a\n    - /b\n")
	if errText != "" {
		t.Fatal(errText)
	}
	l.Config.Exec.Shell = "/bin/zsh"
	l.Config.Policy.WorkspaceRoots[1] = "b"
	l.Config.Exec.Limits.PidsMax = 1
	err := l.Validate()
	want := `config.yaml:2: exec.shell: "/bin/zsh": basename must be bash or sh` + "\n" +
		"default: exec.limits.pids_max: 1 is too small; want at least 16\n" +
		`config.yaml:6: policy.workspace_roots[1]: "b" is not an absolute path; want one starting with / or ~/`
	if err == nil {
		t.Fatalf("got nil, want %q", want)
	}
	if got := strings.ReplaceAll(err.Error(), filepath.Dir(l.Files[0])+string(filepath.Separator), ""); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || errors.Unwrap(fe) != fe.Err {
		t.Errorf("%v: want a *FieldError that unwraps to its Err", err)
	}
}
