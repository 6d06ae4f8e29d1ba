package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

// loadSettings loads a user file that names settings (written as srt.json
// in a fresh directory) over the defaults, with user as the rest of the
// user file. It returns the error text with the directory removed.
func loadSettings(t *testing.T, user, settings string) (*Loaded, string) {
	t.Helper()
	dir := t.TempDir()
	srt := writeFile(t, dir, "srt.json", settings)
	cfg := writeFile(t, dir, "config.yaml", "exec:\n  sandbox:\n    settings_file: "+srt+"\n"+user)
	l, err := Load(LoadOptions{Home: testHome, UserFile: cfg})
	if err != nil {
		return nil, strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	}
	return l, ""
}

func TestSettingsFileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, settings, want string
	}{
		{"malformed", "{\n  \"filesystem\": {\n    \"denyRead\": [\"~/a\",]\n  }\n}\n",
			"srt.json:3: filesystem.denyRead[1]: invalid JSON: invalid character ']' looking for beginning of value"},
		{"truncated", "{\"network\": {\"deniedDomains\": [\"a.example\"",
			"srt.json:1: network.deniedDomains: invalid JSON: the file ends before the JSON value does"},
		{"not an object", "[1]", "srt.json:1: want a JSON object, got a list"},
		{"empty", "  \n", `srt.json:1: is empty; want a JSON object like {"filesystem": {"denyRead": ["~/secrets"]}}`},
		{"trailing value", "{}\n{}\n", "srt.json:2: a file holds one JSON value; remove what follows it"},
		{"repeated key", "{\"filesystem\": {\n\"denyRead\": [],\n\"denyRead\": []}}",
			"srt.json:3: filesystem.denyRead: repeated key; first set on line 2"},
		{"list wanted", "{\"filesystem\": {\n  \"denyRead\": \"~/.ssh\"}}",
			`srt.json:2: filesystem.denyRead: want a list of strings, got the string "~/.ssh"`},
		{"string wanted", "{\"filesystem\": {\"denyWrite\": [\"a\",\n 7]}}",
			"srt.json:2: filesystem.denyWrite[1]: want a string, got the number 7"},
		{"bool wanted", "{\"network\": {\n\"allowLocalBinding\": \"yes\"}}",
			`srt.json:2: network.allowLocalBinding: want true or false, got the string "yes"`},
		{"section wanted", "{\"network\": [\"github.com\"]}", "srt.json:1: network: want a JSON object, got a list"},
		{"unknown key", "{\"filesystem\": {\"denyread\": []}}",
			"srt.json:1: filesystem.denyread: unknown key; known keys are allowGitConfig, allowManagedReadPathsOnly, allowRead, allowWrite, denyRead, denyWrite, disabled"},
		{"bad domain", "{\"network\": {\"allowedDomains\": [\"*.com\"]}}",
			`srt.json:1: network.allowedDomains[0]: "*.com" is too broad: it matches every name under the top-level domain "com"; want a pattern like "*.example.com"`},
		{"bad denied domain", "{\"network\": {\"deniedDomains\": [\"https://x.example/\"]}}",
			`srt.json:1: network.deniedDomains[0]: "https://x.example/" has port "//x.example/", which is not a port; want 1 to 65535`},
		{"glob in denyRead", "{\"filesystem\": {\"denyRead\": [\"**/.env\"]}}",
			`srt.json:1: filesystem.denyRead[0]: "**/.env" is a glob pattern, which Gatehouse does not match; list the paths`},
		{"credential file without path", "{\"credentials\": {\"files\": [{\"mode\": \"deny\"}]}}",
			"srt.json:1: credentials.files[0]: has no path"},
		{"claude block wrong type", "{\"permissions\": {}, \"sandbox\": true}", "srt.json:1: sandbox: want a JSON object, got true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, got := loadSettings(t, "", tc.settings)
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSettingsFileMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "exec:\n  sandbox:\n    settings_file: /nonexistent/srt.json\n")
	_, err := Load(LoadOptions{Home: testHome, UserFile: cfg})
	want := `config.yaml:3: exec.sandbox.settings_file: "/nonexistent/srt.json" does not exist; a settings file that is set must be there, or no restriction it holds would apply`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

// A file that denies a path, denies a domain and allows a write outside
// the workspace: the path joins the deny-read set, the domain the proxy's
// denials, the write is ignored with a warning that names it.
func TestSettingsFileRestricts(t *testing.T) {
	t.Parallel()
	l, got := loadSettings(t, "policy:\n  workspace_roots: [~/src]\n  egress_allowlist: [\"*\", \"api.example.com:8443\"]\n", `{
  "filesystem": {
    "denyRead": ["~/notes", "secrets"],
    "allowWrite": ["~/src", "/elsewhere"],
    "denyWrite": ["~/src/app/config", "/etc"]
  },
  "network": {
    "allowedDomains": ["github.com", "*.example.com"],
    "deniedDomains": ["evil.example.com"]
  }
}`)
	if got != "" {
		t.Fatal(got)
	}
	c := &l.Config
	if want := []string{"/home/u/notes", "/home/u/src/secrets"}; !slices.Equal(c.Exec.Sandbox.DenyRead, want) {
		t.Errorf("deny_read %q, want %q", c.Exec.Sandbox.DenyRead, want)
	}
	if src := l.itemSource("exec.sandbox.deny_read", 1); !strings.HasSuffix(src.File, "srt.json") || src.Line != 3 {
		t.Errorf("deny_read[1] from %s, want srt.json:3", src)
	}
	// "*" narrows to the file's names; an entry with its own port keeps
	// it where their host allows it.
	if want := []string{"github.com", "*.example.com", "api.example.com:8443"}; !slices.Equal(c.Policy.EgressAllowlist, want) {
		t.Errorf("egress_allowlist %q, want %q", c.Policy.EgressAllowlist, want)
	}
	if src := l.Sources["policy.egress_allowlist"]; !strings.HasSuffix(src.File, "srt.json") || src.Line != 8 {
		t.Errorf("egress_allowlist from %s, want srt.json:8", src)
	}
	s := c.Settings
	if s == nil || s.Format != FormatSandboxRuntime {
		t.Fatalf("settings %+v", s)
	}
	if !s.BoundWrites || !slices.Equal(s.AllowWrite, []string{"/home/u/src"}) {
		t.Errorf("allowWrite bound %v %q", s.BoundWrites, s.AllowWrite)
	}
	if !slices.Equal(s.DenyWrite, []string{"/home/u/src/app/config"}) {
		t.Errorf("denyWrite %q", s.DenyWrite)
	}
	if !slices.Equal(s.DeniedDomains, []string{"evil.example.com"}) {
		t.Errorf("deniedDomains %q", s.DeniedDomains)
	}
	warnings := strings.Join(s.Warnings(), "\n")
	for _, w := range []string{
		`srt.json:4: filesystem.allowWrite[1]: ignored: "/elsewhere" is outside the workspace roots ["/home/u/src"]; it is never made writable`,
		`srt.json:5: filesystem.denyWrite[1]: ignored: "/etc" is outside the workspace roots: nothing there is writable already`,
	} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}
	if len(s.Ignored) != 2 {
		t.Errorf("ignored %+v", s.Ignored)
	}
}

// Every key that could only widen is ignored with a warning naming it:
// the configuration is what it is without the file.
func TestSettingsFileWideningChangesNothing(t *testing.T) {
	t.Parallel()
	user := "policy:\n  egress_allowlist: [github.com]\n"
	base, got := loadFiles(t, "", "exec:\n  sandbox:\n    warm_pool: 2\n"+user)
	if got != "" {
		t.Fatal(got)
	}
	l, got := loadSettings(t, user, `{
  "network": {
    "allowedDomains": [],
    "allowUnixSockets": ["/var/run/docker.sock"],
    "allowAllUnixSockets": true,
    "allowLocalBinding": true,
    "httpProxyPort": 8080
  },
  "filesystem": {
    "denyRead": [],
    "allowRead": ["~/.ssh"],
    "allowWrite": ["/"],
    "denyWrite": [],
    "disabled": true,
    "allowGitConfig": true
  },
  "enableWeakerNestedSandbox": true
}`)
	if got != "" {
		t.Fatal(got)
	}
	// allowWrite "/" holds the roots: they stay writable, nothing else is.
	roots := []string{"/home/u/src"}
	if w := l.Config.Settings.Writable(roots); !slices.Equal(w, roots) {
		t.Errorf("writable %q, want %q", w, roots)
	}
	cfg := l.Config
	cfg.Settings = nil
	cfg.Exec.Sandbox.SettingsFile = ""
	if !reflect.DeepEqual(cfg, base.Config) {
		t.Errorf("the file changed the configuration:\n%+v\nwant\n%+v", cfg, base.Config)
	}
	var named []string
	for _, n := range l.Config.Settings.Ignored {
		named = append(named, n.Path)
	}
	want := []string{"network.allowedDomains", "network.allowUnixSockets", "network.allowAllUnixSockets",
		"network.allowLocalBinding", "network.httpProxyPort", "filesystem.allowRead", "filesystem.disabled",
		"filesystem.allowGitConfig", "enableWeakerNestedSandbox"}
	if !slices.Equal(named, want) {
		t.Errorf("ignored %q, want %q", named, want)
	}
	if w := l.Config.Settings.Warnings()[0]; !strings.Contains(w, "srt.json:3: network.allowedDomains: ignored: an empty list means every domain") {
		t.Errorf("warning %q", w)
	}
	// A false widening key widens nothing: no warning.
	l, got = loadSettings(t, "", `{"network": {"allowLocalBinding": false}, "filesystem": {"disabled": false}}`)
	if got != "" || len(l.Config.Settings.Ignored) != 0 {
		t.Errorf("%s %+v", got, l.Config.Settings)
	}
}

// A Claude Code settings file is read for its sandbox block; its
// allowWrite adds paths, so every entry is ignored.
func TestSettingsFileClaudeCode(t *testing.T) {
	t.Parallel()
	l, got := loadSettings(t, "", `{"permissions": {"allow": ["Bash(ls)"]}, "sandbox": {
  "enabled": true,
  "excludedCommands": ["docker"],
  "filesystem": {"denyRead": ["~/private"], "allowWrite": ["~/.kube"]},
  "network": {"allowLocalBinding": true}
}}`)
	if got != "" {
		t.Fatal(got)
	}
	s := l.Config.Settings
	if s.Format != FormatClaudeCode || s.BoundWrites {
		t.Errorf("format %s, bound %v", s.Format, s.BoundWrites)
	}
	if !slices.Contains(l.Config.Exec.Sandbox.DenyRead, "/home/u/private") {
		t.Errorf("deny_read %q", l.Config.Exec.Sandbox.DenyRead)
	}
	var named []string
	for _, n := range s.Ignored {
		named = append(named, n.Path)
	}
	if want := []string{"sandbox.excludedCommands", "sandbox.filesystem.allowWrite[0]", "sandbox.network.allowLocalBinding"}; !slices.Equal(named, want) {
		t.Errorf("ignored %q, want %q", named, want)
	}
}

// A settings file cannot deny-read a workspace root away silently: the
// root is refused where the file named it.
func TestSettingsFileDenyReadOverRoot(t *testing.T) {
	t.Parallel()
	_, got := loadSettings(t, "", `{"filesystem": {"denyRead": ["~/src"]}}`)
	want := `srt.json:1: filesystem.denyRead[0]: "~/src" holds the workspace root "/home/u/src", which commands must read; to hide the rest of the home directory use exec.sandbox.read: workspace`
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestIntersectEgress(t *testing.T) {
	t.Parallel()
	parse := func(list ...string) []egress.Entry {
		var out []egress.Entry
		for _, s := range list {
			e, err := egress.ParseEntry(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	for _, tc := range []struct {
		ours, theirs, want []string
	}{
		{[]string{"*"}, []string{"github.com", "*.npmjs.org"}, []string{"github.com", "*.npmjs.org"}},
		{[]string{"*.github.com"}, []string{"api.github.com", "example.com"}, []string{"api.github.com"}},
		{[]string{"api.github.com"}, []string{"*.github.com"}, []string{"api.github.com"}},
		{[]string{"github.com"}, []string{"gitlab.com"}, []string{}},
		{[]string{}, []string{"github.com"}, []string{}},
		{[]string{"x.example.com:8443"}, []string{"x.example.com"}, []string{"x.example.com:8443"}},
		{[]string{"x.example.com:8443"}, []string{"x.example.com:443"}, []string{}},
		{[]string{"x.example.com"}, []string{"x.example.com:443"}, []string{"x.example.com:443"}},
		{[]string{"x.example.com"}, []string{"x.example.com:22"}, []string{}}, // 22 is not an allowed port
		{[]string{"*"}, []string{"192.0.2.7"}, []string{}},                    // "*" never covers a literal
		{[]string{"192.0.2.7"}, []string{"192.0.2.7"}, []string{"192.0.2.7"}},
	} {
		if got := intersectEgress(tc.ours, parse(tc.theirs...), []int{443, 80}); !slices.Equal(got, tc.want) {
			t.Errorf("%q ∩ %q = %q, want %q", tc.ours, tc.theirs, got, tc.want)
		}
	}
}

func TestSettingsWritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root, other := filepath.Join(dir, "src"), filepath.Join(dir, "work")
	for _, d := range []string{root + "/app", root + "/lib", other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	roots := []string{root, other}
	for _, tc := range []struct {
		name string
		s    *Settings
		want []string
	}{
		{"none", nil, roots},
		{"no bound", &Settings{}, roots},
		{"bound to one root", &Settings{BoundWrites: true, AllowWrite: []string{other}}, []string{other}},
		{"bound inside a root", &Settings{BoundWrites: true, AllowWrite: []string{root + "/app", root + "/missing"}}, []string{root + "/app"}},
		{"bound above", &Settings{BoundWrites: true, AllowWrite: []string{dir}}, roots},
		{"bound to nothing", &Settings{BoundWrites: true, AllowWrite: []string{}}, nil},
		{"nested entries", &Settings{BoundWrites: true, AllowWrite: []string{root + "/app", root}}, []string{root}},
		{"denied root", &Settings{DenyWrite: []string{other}}, []string{root}},
		{"denied above the roots", &Settings{DenyWrite: []string{dir}}, nil},
		{"denied inside a root", &Settings{DenyWrite: []string{root + "/lib"}}, roots},
	} {
		if got := tc.s.Writable(roots); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReadAllowValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ user, want string }{
		{"exec:\n  sandbox:\n    read: everything\n", `config.yaml:3: exec.sandbox.read: "everything" is not one of host, workspace`},
		{"exec:\n  sandbox:\n    read_allow: [go/pkg]\n", `config.yaml:3: exec.sandbox.read_allow[0]: "go/pkg" is not an absolute path; want one starting with / or ~/`},
		{"exec:\n  sandbox:\n    read_allow: [/]\n", `config.yaml:3: exec.sandbox.read_allow[0]: "/" is the whole filesystem; that is read: host`},
		{"exec:\n  sandbox:\n    read_allow: [~/.ssh/keys]\n", `config.yaml:3: exec.sandbox.read_allow[0]: "/home/u/.ssh/keys" is inside the deny-read path "/home/u/.ssh"; the deny-read set is never readable`},
		{"exec:\n  sandbox:\n    deny_read: [~/x]\n    read_allow: [~/x]\n", `config.yaml:4: exec.sandbox.read_allow[0]: "/home/u/x" is inside the deny-read path "/home/u/x"; the deny-read set is never readable`},
		{"exec:\n  sandbox:\n    settings_file: srt.json\n", `config.yaml:3: exec.sandbox.settings_file: "srt.json" is not an absolute path; want one starting with / or ~/`},
	} {
		if _, got := loadFiles(t, "", tc.user); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	l, got := loadFiles(t, "", "exec:\n  sandbox:\n    read: workspace\n    read_allow: [~/go/pkg/mod, ~/.npm]\n")
	if got != "" || l.Config.Exec.Sandbox.Read != ReadWorkspace || !slices.Equal(l.Config.Exec.Sandbox.ReadAllow, []string{"/home/u/go/pkg/mod", "/home/u/.npm"}) {
		t.Errorf("%s %+v", got, l)
	}
}

// A settings file inside a workspace root is kept read-only: a command
// cannot edit away what it restricts.
func TestSettingsFileInARootIsWriteDenied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srt := writeFile(t, dir, "srt.json", `{"filesystem": {"denyRead": []}}`)
	cfg := writeFile(t, dir, "config.yaml", "exec:\n  sandbox:\n    settings_file: "+srt+"\npolicy:\n  workspace_roots: ["+dir+"]\n")
	l, err := Load(LoadOptions{Home: testHome, UserFile: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(l.Config.Settings.DenyWrite, srt) {
		t.Errorf("denyWrite %q lacks %s", l.Config.Settings.DenyWrite, srt)
	}
}

// A settings file must be a regular file: a device or a directory would
// hang or mislead the load.
func TestSettingsFileNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"/dev/zero", dir} {
		cfg := writeFile(t, dir, "config.yaml", "exec:\n  sandbox:\n    settings_file: "+name+"\n")
		_, err := Load(LoadOptions{Home: testHome, UserFile: cfg})
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzSettingsFile reads arbitrary bytes as a settings file: it never
// panics, and an error always names the file.
func FuzzSettingsFile(f *testing.F) {
	for _, s := range []string{
		`{"filesystem": {"denyRead": ["~/a", "rel"], "allowWrite": ["."], "denyWrite": ["x"]}}`,
		`{"network": {"allowedDomains": ["*.example.com:443"], "deniedDomains": ["*"], "allowLocalBinding": true}}`,
		`{"sandbox": {"enabled": false, "excludedCommands": ["docker"], "filesystem": {"allowWrite": ["/x"]}}}`,
		`{"credentials": {"files": [{"path": "~/.token", "mode": "mask"}], "envVars": [{"name": "T"}]}}`,
		`{"filesystem": {"denyRead": ["~/a",]}}`, `[1, {"a": null}]`, `{"a":1}{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := parseJSON("srt.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "srt.json:") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		r := &settingsReader{file: "srt.json", home: testHome, roots: []string{"/home/u/src"},
			s: &Settings{File: "srt.json", Changes: []SettingsNote{}, Ignored: []SettingsNote{}}}
		r.read(root)
		for _, err := range r.errs {
			if !strings.HasPrefix(err.Error(), "srt.json:") {
				t.Fatalf("error without the file: %v", err)
			}
		}
		if len(r.errs) == 0 {
			l := &Loaded{Sources: map[string]Source{}, items: map[string][]Source{}}
			r.apply(l)
		}
	})
}
