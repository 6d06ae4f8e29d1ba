package policy

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testHome = "/home/u"

// loadFiles writes managed and user (either "" for no file) as managed.yaml
// and config.yaml in a fresh directory and loads them with home testHome.
// It returns the error text with the directory removed, so that messages
// read "config.yaml:3: ...", or "" when loading succeeded.
func loadFiles(t *testing.T, managed, user string) (*Loaded, string) {
	t.Helper()
	dir := t.TempDir()
	opts := LoadOptions{Home: testHome}
	if managed != "" {
		opts.ManagedFile = writeFile(t, dir, "managed.yaml", managed)
	}
	if user != "" {
		opts.UserFile = writeFile(t, dir, "config.yaml", user)
	}
	l, err := Load(opts)
	if err != nil {
		if l != nil {
			t.Errorf("Load returned both a config and an error")
		}
		return nil, strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	}
	if l == nil {
		t.Fatal("Load returned neither a config nor an error")
	}
	return l, ""
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// defaultConfig is the embedded defaults with home testHome.
func defaultConfig() Config {
	return Config{
		Exec: Exec{
			Enabled:    true,
			Shell:      "/bin/bash",
			DefaultCWD: "/home/u/src",
			Sandbox: Sandbox{
				Backend:            "auto",
				Seccomp:            "required",
				DenyRead:           []string{},
				WriteDeny:          []string{},
				CacheMax:           5 * GiB,
				WarmPool:           2,
				SessionIdleSeconds: 1800,
				Read:               ReadHost,
				ReadAllow:          []string{},
			},
			Limits: Limits{
				MaxTimeoutSeconds: 3600,
				StdinMaxBytes:     MiB,
				OutputMaxBytes:    MiB,
				MemoryMax:         4 * GiB,
				PidsMax:           1024,
				TmpfsSize:         GiB,
				FileSizeMax:       4 * GiB,
				MaxConcurrent:     8,
				TicketTTLSeconds:  60,
				MaxPendingTickets: 256,
			},
			Env:         Env{AgentSettable: []string{}},
			Egress:      Egress{AllowedPorts: []int{443, 80}, DeniedCIDRs: []string{}, UpstreamCAFiles: []string{}},
			Credentials: Credentials{Env: CredentialEnv{}, Files: CredentialFiles{}},
			Audit: Audit{RetentionDays: 90, RetentionEvents: 100000, KeepOutput: true, OutputMaxBytes: 64 * KiB,
				Export: AuditExport{OTLP: OTLPExport{Protocol: "http/protobuf", Headers: OTLPHeaders{}, BatchSize: 256,
					TimeoutSeconds: 10, RetryInitialBackoffMS: 1000, RetryMaxBackoffMS: 60000}}},
			Notify:    Notify{SandboxDegraded: true, OutputRedacted: true},
			Output:    Output{TerminalControls: "escape", ExplainRefusals: true},
			Dashboard: Dashboard{Enabled: true},
		},
		Policy: Policy{
			SandboxRequired:              true,
			AuditRequired:                true,
			ExecTimeoutSeconds:           120,
			ApprovalTimeoutSeconds:       120,
			WorkspaceRoots:               []string{},
			ScriptInspectionRoots:        []string{},
			BuiltinExecRouting:           "governed_shell",
			CommandAnalysisMode:          "enforce",
			EgressAllowlist:              []string{},
			EgressAllowlistByAgent:       EgressByAgent{},
			EgressUnknown:                EgressAsk,
			EgressApprovalTimeoutSeconds: 60,
			EgressDenylist:               []string{},
			CredentialGrants:             CredentialGrants{},
			CredentialMode:               "any",
			DLPPatterns:                  DLPPatterns{},
			DefaultAction:                "allow",
			Rules:                        Rules{},
			DisabledBuiltinRules:         []string{},
			DynamicAction:                "ask",
		},
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", "")
	if errText != "" {
		t.Fatal(errText)
	}
	if want := defaultConfig(); !reflect.DeepEqual(l.Config, want) {
		t.Errorf("got %+v\nwant %+v", l.Config, want)
	}
	if len(l.Files) != 0 {
		t.Errorf("Files: got %q, want none", l.Files)
	}
	// The defaults set every leaf, so every leaf has a source.
	if len(l.Sources) != len(leaves()) {
		t.Errorf("got %d sources, want %d", len(l.Sources), len(leaves()))
	}
	for _, lf := range leaves() {
		src, ok := l.Sources[lf.path]
		if !ok || !src.IsDefault() || src.String() != "default" {
			t.Errorf("Sources[%q]: got %+v (%v), want the default", lf.path, src, ok)
		}
	}
	if err := l.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestLoadWithoutHome(t *testing.T) {
	t.Parallel()
	_, err := Load(LoadOptions{})
	want := `default: exec.default_cwd: "~/src" is not an absolute path: "~" cannot be expanded without a home directory`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	// Setting default_cwd in a file removes the need for a home.
	dir := t.TempDir()
	user := writeFile(t, dir, "config.yaml", "exec:\n  default_cwd: /work\n")
	if _, err := Load(LoadOptions{UserFile: user}); err != nil {
		t.Errorf("with default_cwd set: %v", err)
	}
}

func TestLoadProvenance(t *testing.T) {
	t.Parallel()
	managed := `# managed
policy:
  exec_timeout_seconds: 300
exec:
  limits:
    memory_max: 8GiB
    pids_max: 512
  sandbox:
    deny_read: [/etc/corp]
`
	user := `exec:
  limits:
    pids_max: 256

    tmpfs_size: 512MiB
  sandbox:
    deny_read:
      - ~/.aws
policy:
  workspace_roots: [~/src/a]
`
	l, errText := loadFiles(t, managed, user)
	if errText != "" {
		t.Fatal(errText)
	}
	want := map[string]string{
		"policy.exec_timeout_seconds":    "managed.yaml:3",
		"exec.limits.memory_max":         "managed.yaml:6",
		"exec.limits.pids_max":           "config.yaml:3",
		"exec.limits.tmpfs_size":         "config.yaml:5",
		"exec.sandbox.deny_read":         "config.yaml:7",
		"policy.workspace_roots":         "config.yaml:10",
		"exec.shell":                     "default",
		"policy.script_inspection_roots": "default",
	}
	for field, wantSrc := range want {
		if got := filepath.Base(l.Sources[field].String()); got != wantSrc {
			t.Errorf("Sources[%q]: got %q, want %q", field, got, wantSrc)
		}
	}
	for field, wantLayer := range map[string]string{
		"policy.exec_timeout_seconds": LayerManaged,
		"exec.limits.pids_max":        LayerUser,
		"exec.shell":                  LayerDefault,
	} {
		if got := l.Layer(l.Sources[field]); got != wantLayer {
			t.Errorf("Layer(Sources[%q]): got %q, want %q", field, got, wantLayer)
		}
	}
	var files []string
	for _, f := range l.Files {
		files = append(files, filepath.Base(f))
	}
	if got, want := strings.Join(files, " "), "managed.yaml config.yaml"; got != want {
		t.Errorf("Files: got %q, want %q", got, want)
	}
	if got, want := l.Config.Exec.Sandbox.DenyRead, []string{"/etc/corp", "/home/u/.aws"}; !reflect.DeepEqual(got, want) {
		t.Errorf("deny_read: got %q, want %q", got, want)
	}
	// Each entry of a unioned list keeps its own source.
	for i, want := range []string{"managed.yaml:9", "config.yaml:8"} {
		if got := filepath.Base(l.itemSource("exec.sandbox.deny_read", i).String()); got != want {
			t.Errorf("deny_read[%d] source: got %q, want %q", i, got, want)
		}
	}
	if got, want := l.Config.Exec.Limits.TmpfsSize, 512*MiB; got != want {
		t.Errorf("tmpfs_size: got %v, want %v", got, want)
	}
}

func TestLoadShapeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, user, want string
	}{
		{"unknown section", "exec:\n  shell: /bin/bash\negress: {}\n",
			"config.yaml:3: egress: unknown field; known fields are exec, policy"},
		{"unknown field", "exec:\n  enabled: true\n  sandbox:\n    backend: auto\n  sandbx: {}\n",
			"config.yaml:5: exec.sandbx: unknown field; known fields are enabled, shell, default_cwd, sandbox, limits, env, egress, credentials, audit, notify, output, dashboard"},
		{"unknown nested field", "exec:\n  sandbox:\n    seccmp: off\n",
			"config.yaml:3: exec.sandbox.seccmp: unknown field; known fields are backend, seccomp, bwrap_path, init_path, allow_ptrace, deny_read, write_deny, cache_max, warm_pool, session_idle_seconds, read, read_allow, settings_file"},
		{"unknown limit", "exec:\n  limits:\n    timeout: 5\n",
			"config.yaml:3: exec.limits.timeout: unknown field; known fields are max_timeout_seconds, stdin_max_bytes, output_max_bytes, memory_max, pids_max, tmpfs_size, file_size_max, max_concurrent, ticket_ttl_seconds, max_pending_tickets"},
		{"keys are case-sensitive", "Policy: {}\n",
			"config.yaml:1: Policy: unknown field; known fields are exec, policy"},
		{"repeated key", "policy:\n  exec_timeout_seconds: 60\n  exec_timeout_seconds: 90\n",
			"config.yaml:3: policy.exec_timeout_seconds: repeated key; first set on line 2"},
		{"merge key", "exec:\n  <<: {enabled: true}\n",
			"config.yaml:2: exec.<<: merge keys are not supported; write the fields out"},
		{"top level list", "- exec\n",
			"config.yaml:1: want a mapping of sections (exec, policy) at the top level, got a list"},
		{"top level scalar", "hello\n",
			`config.yaml:1: want a mapping of sections (exec, policy) at the top level, got "hello"`},
		{"section scalar", "exec: true\n",
			`config.yaml:1: exec: want a mapping, got "true"`},
		{"bool", "exec:\n  enabled: yes\n",
			`config.yaml:2: exec.enabled: want true or false, got "yes"`},
		{"quoted bool", "exec:\n  enabled: \"true\"\n",
			`config.yaml:2: exec.enabled: want true or false, got "true"`},
		{"null bool", "exec:\n  enabled:\n",
			`config.yaml:2: exec.enabled: want true or false, got nothing`},
		{"int", "policy:\n  exec_timeout_seconds: 2m\n",
			`config.yaml:2: policy.exec_timeout_seconds: want an integer, got "2m"`},
		{"float", "exec:\n  limits:\n    pids_max: 1.5\n",
			`config.yaml:3: exec.limits.pids_max: want an integer, got "1.5"`},
		{"int list", "exec:\n  limits:\n    max_concurrent: [1]\n",
			`config.yaml:3: exec.limits.max_concurrent: want an integer, got a list`},
		{"size", "exec:\n  limits:\n    tmpfs_size: lots\n",
			`config.yaml:3: exec.limits.tmpfs_size: "lots" is not a size; ` + sizeForms},
		{"negative size", "exec:\n  limits:\n    memory_max: -1\n",
			`config.yaml:3: exec.limits.memory_max: "-1" is negative; ` + sizeForms},
		{"null size", "exec:\n  limits:\n    memory_max:\n",
			`config.yaml:3: exec.limits.memory_max: want a size, got nothing`},
		{"string mapping", "exec:\n  shell: {path: /bin/bash}\n",
			`config.yaml:2: exec.shell: want a string, got a mapping`},
		{"string null", "exec:\n  sandbox:\n    backend:\n",
			`config.yaml:3: exec.sandbox.backend: want a string, got nothing`},
		{"list scalar", "policy:\n  workspace_roots: /work\n",
			`config.yaml:2: policy.workspace_roots: want a list of strings like [a, b], got "/work"`},
		{"list entry", "policy:\n  workspace_roots:\n    - /work\n    - [/srv]\n",
			`config.yaml:4: policy.workspace_roots[1]: want a string, got a list`},
		{"list null entry", "exec:\n  env:\n    agent_settable: [A, null]\n",
			`config.yaml:3: exec.env.agent_settable[1]: want a string, got nothing`},
		{"syntax", "exec:\n  shell: [/bin/bash\n",
			`config.yaml:1: did not find expected ',' or ']'`},
		{"tab", "exec:\n\tshell: /bin/bash\n",
			`config.yaml:2: found character that cannot start any token`},
		{"two documents", "exec: {}\n---\npolicy: {}\n",
			`config.yaml:2: a file holds one YAML document; remove this second one`},
		{"several errors in line order", "exec:\n  shel: /bin/bash\n  limits:\n    pids_max: many\npolicy:\n  exec_timeout_seconds: 0\n",
			"config.yaml:2: exec.shel: unknown field; known fields are enabled, shell, default_cwd, sandbox, limits, env, egress, credentials, audit, notify, output, dashboard\n" +
				`config.yaml:4: exec.limits.pids_max: want an integer, got "many"` + "\n" +
				"config.yaml:6: policy.exec_timeout_seconds: 0 is out of range; want 1 to 3600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := loadFiles(t, "", tt.user)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, user string
		field      string
		want       any
	}{
		{"empty file", "", "exec.shell", "/bin/bash"},
		{"comments only", "# nothing here\n", "exec.shell", "/bin/bash"},
		{"document marker only", "---\n", "exec.shell", "/bin/bash"},
		{"empty section", "exec:\npolicy: {}\n", "exec.enabled", true},
		{"null list is empty", "policy:\n  workspace_roots:\n", "policy.workspace_roots", []string{}},
		{"size as int", "exec:\n  limits:\n    tmpfs_size: 2097152\n", "exec.limits.tmpfs_size", 2 * MiB},
		{"size as hex", "exec:\n  limits:\n    tmpfs_size: 0x200000\n", "exec.limits.tmpfs_size", 2 * MiB},
		{"size decimal unit", "exec:\n  limits:\n    memory_max: 2GB\n", "exec.limits.memory_max", 2 * GB},
		{"size quoted", "exec:\n  limits:\n    memory_max: \"2 GiB\"\n", "exec.limits.memory_max", 2 * GiB},
		{"alias", "policy:\n  workspace_roots: &r [/srv]\n  script_inspection_roots: *r\n", "policy.script_inspection_roots", []string{"/srv"}},
		{"quoted string", "exec:\n  sandbox:\n    seccomp: \"off\"\n", "exec.sandbox.seccomp", "off"},
		{"plain off is a string", "exec:\n  sandbox:\n    seccomp: off\n", "exec.sandbox.seccomp", "off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			user := tt.user
			if user == "" {
				user = "\n" // loadFiles skips a "" file
			}
			l, errText := loadFiles(t, "", user)
			if errText != "" {
				t.Fatal(errText)
			}
			if got := leafValue(&l.Config, tt.field); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s: got %#v, want %#v", tt.field, got, tt.want)
			}
		})
	}
}

func TestLoadHomeExpansion(t *testing.T) {
	t.Parallel()
	user := `exec:
  default_cwd: ~
  sandbox:
    deny_read: [~/.aws, "~/.config/gh", /etc/../etc/shadow/]
    bwrap_path: /opt/~/bwrap
policy:
  workspace_roots:
    - ~/src
    - ~/work/../play
  script_inspection_roots: ["~"]
`
	l, errText := loadFiles(t, "", user)
	if errText != "" {
		t.Fatal(errText)
	}
	c := l.Config
	checks := []struct {
		field string
		got   any
		want  any
	}{
		{"default_cwd", c.Exec.DefaultCWD, "/home/u"},
		{"deny_read", c.Exec.Sandbox.DenyRead, []string{"/home/u/.aws", "/home/u/.config/gh", "/etc/shadow"}},
		{"bwrap_path", c.Exec.Sandbox.BwrapPath, "/opt/~/bwrap"},
		{"workspace_roots", c.Policy.WorkspaceRoots, []string{"/home/u/src", "/home/u/play"}},
		{"script_inspection_roots", c.Policy.ScriptInspectionRoots, []string{"/home/u"}},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: got %q, want %q", ck.field, ck.got, ck.want)
		}
	}

	// exec.shell is a program: "~" is not expanded there.
	_, got := loadFiles(t, "", "exec:\n  shell: ~/bin/bash\n")
	if want := `config.yaml:2: exec.shell: "~/bin/bash": must be an absolute path, like /bin/bash`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLoadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")

	// Missing optional files are fine.
	l, err := Load(LoadOptions{UserFile: missing, ManagedFile: missing + ".managed", Home: testHome})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 0 {
		t.Errorf("Files: got %q, want none", l.Files)
	}

	// A missing explicit user file is an error naming it.
	_, err = Load(LoadOptions{UserFile: missing, Home: testHome, ExplicitUser: true})
	if want := "config file " + missing + ": file does not exist"; err == nil || err.Error() != want {
		t.Errorf("explicit: got %v, want %q", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("explicit: %v is not fs.ErrNotExist", err)
	}
	_, err = Check(missing, LoadOptions{Home: testHome})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check: %v is not fs.ErrNotExist", err)
	}

	// A file that exists but cannot be read is always an error.
	_, err = Load(LoadOptions{ManagedFile: dir, Home: testHome})
	if err == nil || !strings.HasPrefix(err.Error(), "reading config: ") || !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: got %v, want a read error naming %s", err, dir)
	}
}

func TestLoadFieldErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	managed := writeFile(t, dir, "managed.yaml", "exec:\n  shell: /bin/fish\n")
	user := writeFile(t, dir, "config.yaml", "policy:\n  exec_timeout_seconds: 0\n")
	_, err := Load(LoadOptions{UserFile: user, ManagedFile: managed, Home: testHome})
	var got []FieldError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *FieldError", e)
		}
		got = append(got, FieldError{File: fe.File, Line: fe.Line, Field: fe.Field})
	}
	want := []FieldError{
		{File: managed, Line: 2, Field: "exec.shell"},
		{File: user, Line: 2, Field: "policy.exec_timeout_seconds"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	managed := writeFile(t, dir, "managed.yaml", "policy:\n  exec_timeout_seconds: 300\n")
	file := writeFile(t, dir, "candidate.yaml", "policy:\n  exec_timeout_seconds: 301\n")
	_, err := Check(file, LoadOptions{ManagedFile: managed, UserFile: "/ignored", Home: testHome})
	want := file + ":2: policy.exec_timeout_seconds: 301 widens the managed value 300 (" + managed + ":2); use a value from 1 to 300"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestDefaultsAreDocumented(t *testing.T) {
	t.Parallel()
	// Every leaf must have a default, so that Sources is complete and the
	// defaults file documents every setting.
	def, errs := parseLayer("", defaultsYAML(), testHome)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, lf := range leaves() {
		if !def.has(lf.path) {
			t.Errorf("assets/defaults.yaml does not set %s", lf.path)
		}
	}
}

// The defaults with their comment lines emptied are the defaults: the
// same values, set at the same lines, and every line kept.
func TestUncommentedDefaults(t *testing.T) {
	t.Parallel()
	raw := defaultsYAML()
	stripped := uncommentedDefaults()
	if got, want := bytes.Count(stripped, []byte("\n")), bytes.Count(raw, []byte("\n")); got != want {
		t.Errorf("%d lines, want the file's %d", got, want)
	}
	want, errs := parseLayer("", raw, testHome)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got, errs := parseLayer("", stripped, testHome)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !reflect.DeepEqual(got.vals, want.vals) {
		t.Error("the values differ from the defaults file's")
	}
	if !reflect.DeepEqual(got.set, want.set) || !reflect.DeepEqual(got.items, want.items) {
		t.Error("the lines values are set at differ from the defaults file's")
	}
	// The file has no block scalar, in which a "#" line would be text.
	for i, ln := range strings.Split(string(raw), "\n") {
		if s := strings.TrimRight(ln, " "); strings.HasSuffix(s, "|") || strings.HasSuffix(s, ">") || strings.HasSuffix(s, "|-") || strings.HasSuffix(s, ">-") {
			t.Errorf("assets/defaults.yaml:%d: a block scalar; emptying comment lines could change it", i+1)
		}
	}
}
