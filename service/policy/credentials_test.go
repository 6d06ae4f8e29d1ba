package policy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/dlp"
)

func TestCredentialsLoad(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", `exec:
  credentials:
    env:
      GITHUB_TOKEN: "${credential:github_token}"
      NPM_TOKEN: ${credential:npm}
    files: {gcloud.json: "${credential:gcp_sa}", .netrc: "${credential:netrc}"}
policy:
  credential_grants:
    github_token: [claude-code, cli]
    npm: [cli]
  dlp_patterns:
    acme: "ACME-[0-9]{6}"
`)
	if errText != "" {
		t.Fatal(errText)
	}
	c := &l.Config
	want := &broker.Config{
		Env:    map[string]string{"GITHUB_TOKEN": "github_token", "NPM_TOKEN": "npm"},
		Files:  map[string]string{"gcloud.json": "gcp_sa", ".netrc": "netrc"},
		Grants: map[string][]string{"github_token": {"claude-code", "cli"}, "npm": {"cli"}},
		Auto: map[string]string{"github_token": "exec.credentials.env.GITHUB_TOKEN", "npm": "exec.credentials.env.NPM_TOKEN",
			"gcp_sa": "exec.credentials.files.gcloud.json", "netrc": "exec.credentials.files..netrc"},
	}
	if got := c.CredentialConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("CredentialConfig = %+v, want %+v", got, want)
	}
	if got, want := c.DLP(), []dlp.Pattern{{Name: "acme", Regexp: "ACME-[0-9]{6}"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("DLP = %+v, want %+v", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	var b strings.Builder
	l.Show(&b)
	for _, line := range []string{
		`exec.credentials.env: {GITHUB_TOKEN: "${credential:github_token}", NPM_TOKEN: "${credential:npm}"}`,
		`exec.credentials.files: {.netrc: "${credential:netrc}", gcloud.json: "${credential:gcp_sa}"}`,
		`policy.credential_grants: {github_token: [claude-code, cli], npm: [cli]}`,
		`policy.dlp_patterns: {acme: "ACME-[0-9]{6}"}`,
	} {
		field, value, _ := strings.Cut(line, " ")
		if !regexpLine(b.String(), field, value) {
			t.Errorf("Show has no line %q:\n%s", line, b.String())
		}
	}
}

// regexpLine reports whether show output has field with value.
func regexpLine(out, field, value string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, field) && strings.Contains(l, " "+value+" ") {
			return true
		}
	}
	return false
}

func TestCredentialsInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, user, want string }{
		{"env not a mapping", "exec:\n  credentials:\n    env: [GITHUB_TOKEN]\n",
			`config.yaml:3: exec.credentials.env: want a mapping like {GITHUB_TOKEN: {credential: github_token, hosts: [api.github.com]}}, got a list`},
		{"env value not a reference", "exec:\n  credentials:\n    env:\n      GITHUB_TOKEN: ghp_literal\n",
			`config.yaml:4: exec.credentials.env: GITHUB_TOKEN: "ghp_literal" is not a credential reference; want "${credential:ID}"`},
		{"env value a template", "exec:\n  credentials:\n    env:\n      AUTH: \"Bearer ${credential:x}\"\n",
			`config.yaml:4: exec.credentials.env: AUTH: "Bearer ${credential:x}" is not a credential reference`},
		{"env bad id", "exec:\n  credentials:\n    env:\n      T: \"${credential:Bad-Id}\"\n",
			`exec.credentials.env: T: "${credential:Bad-Id}" is not a credential reference; want "${credential:ID}", where an id is 1 to 64 lower-case letters`},
		{"env bad name", "exec:\n  credentials:\n    env:\n      1TOKEN: \"${credential:x}\"\n",
			`config.yaml:4: exec.credentials.env: 1TOKEN: not an environment variable name`},
		{"env reserved", "exec:\n  credentials:\n    env:\n      OK: \"${credential:x}\"\n      LD_PRELOAD: \"${credential:x}\"\n",
			`config.yaml:5: exec.credentials.env: LD_PRELOAD: is reserved`},
		{"env gatehouse", "exec:\n  credentials:\n    env:\n      GATEHOUSE_CRED_X: \"${credential:x}\"\n",
			`exec.credentials.env: GATEHOUSE_CRED_X: is reserved`},
		{"env proxy", "exec:\n  credentials:\n    env:\n      https_proxy: \"${credential:x}\"\n",
			`exec.credentials.env: https_proxy: is reserved`},
		{"env repeated", "exec:\n  credentials:\n    env:\n      A: \"${credential:x}\"\n      A: \"${credential:y}\"\n",
			`config.yaml:5: exec.credentials.env: A: repeated key; first set on line 4`},
		{"env null value", "exec:\n  credentials:\n    env:\n      A:\n",
			`config.yaml:4: exec.credentials.env: A: want "${credential:ID}" or a mapping like {credential: ID, hosts: [api.example.com]}, got nothing`},
		{"file with slash", "exec:\n  credentials:\n    files:\n      a/b.json: \"${credential:x}\"\n",
			`config.yaml:4: exec.credentials.files: a/b.json: not a plain file name`},
		{"file dotdot", "exec:\n  credentials:\n    files:\n      ..: \"${credential:x}\"\n",
			`exec.credentials.files: ..: not a plain file name`},
		{"grant not a list", "policy:\n  credential_grants:\n    github_token: cli\n",
			`config.yaml:3: policy.credential_grants: github_token: want a list of agents like [claude-code, cli], got "cli"`},
		{"grant empty", "policy:\n  credential_grants:\n    github_token: []\n",
			`config.yaml:3: policy.credential_grants: github_token: lists no agent`},
		{"grant bad id", "policy:\n  credential_grants:\n    GitHub: [cli]\n",
			`config.yaml:3: policy.credential_grants: GitHub: not a credential id`},
		{"grant twice", "policy:\n  credential_grants:\n    x: [cli, cli]\n",
			`policy.credential_grants: x[1]: "cli" is listed twice`},
		{"grant bad agent", "policy:\n  credential_grants:\n    x: [\"two words\"]\n",
			`policy.credential_grants: x[0]: "two words" is not an agent name`},
		{"bad regex", "policy:\n  dlp_patterns:\n    acme: \"ACME-(\"\n",
			"config.yaml:3: policy.dlp_patterns: acme: not a valid regular expression: missing closing ): `ACME-(`"},
		{"empty regex", "policy:\n  dlp_patterns:\n    acme: \"x?\"\n",
			`policy.dlp_patterns: acme: the expression matches empty text`},
		{"bad pattern name", "policy:\n  dlp_patterns:\n    Acme Key: \"ACME\"\n",
			`policy.dlp_patterns: Acme Key: not a pattern name`},
	} {
		_, got := loadFiles(t, "", tc.user)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestCredentialsNarrow(t *testing.T) {
	t.Parallel()
	const managed = `exec:
  credentials:
    env: {GITHUB_TOKEN: "${credential:github_token}"}
    files: {gcloud.json: "${credential:gcp_sa}"}
policy:
  credential_grants: {github_token: [claude-code, cli]}
  dlp_patterns: {acme: "ACME-[0-9]{6}"}
`
	for _, tc := range []struct{ name, user, want string }{
		{"keeps and adds", `exec:
  credentials:
    env: {GITHUB_TOKEN: "${credential:github_token}", NPM_TOKEN: "${credential:npm}"}
    files: {gcloud.json: "${credential:gcp_sa}", kube: "${credential:kube}"}
policy:
  credential_grants: {github_token: [cli], npm: [cli]}
  dlp_patterns: {acme: "ACME-[0-9]{6}", other: "OTHER-[0-9]+"}
`, ""},
		{"env removed", "exec:\n  credentials:\n    env: {}\n",
			`config.yaml:3: exec.credentials.env: GITHUB_TOKEN: the managed entry GITHUB_TOKEN: "${credential:github_token}" (managed.yaml:3) is missing; keep it`},
		{"env changed", "exec:\n  credentials:\n    env: {GITHUB_TOKEN: \"${credential:other}\"}\n",
			`config.yaml:3: exec.credentials.env: GITHUB_TOKEN: "${credential:other}" differs from the managed value "${credential:github_token}" (managed.yaml:3); only "${credential:github_token}" is allowed`},
		{"file removed", "exec:\n  credentials:\n    files: {other.json: \"${credential:gcp_sa}\"}\n",
			`exec.credentials.files: gcloud.json: the managed entry gcloud.json: "${credential:gcp_sa}" (managed.yaml:4) is missing`},
		{"grant removed", "policy:\n  credential_grants: {npm: [cli]}\n",
			`config.yaml:2: policy.credential_grants: github_token: the managed grant ["claude-code", "cli"] (managed.yaml:6) is missing, which would widen it`},
		{"grant widened", "policy:\n  credential_grants: {github_token: [cli, my-mcp]}\n",
			`policy.credential_grants: github_token[1]: "my-mcp" is not in the managed grant ["claude-code", "cli"] (managed.yaml:6); use agents from that list`},
		{"pattern removed", "policy:\n  dlp_patterns: {}\n",
			`policy.dlp_patterns: acme: the managed entry acme: "ACME-[0-9]{6}" (managed.yaml:7) is missing; keep it`},
		{"pattern changed", "policy:\n  dlp_patterns: {acme: \"ACME\"}\n",
			`policy.dlp_patterns: acme: ACME differs from the managed value "ACME-[0-9]{6}"`},
	} {
		l, got := loadFiles(t, managed, tc.user)
		if tc.want == "" {
			if got != "" {
				t.Errorf("%s: %s", tc.name, got)
				continue
			}
			if len(l.Config.Exec.Credentials.Env) != 2 || len(l.Config.Policy.CredentialGrants) != 2 || len(l.Config.Policy.DLPPatterns) != 2 {
				t.Errorf("%s: effective %+v", tc.name, l.Config)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// Without a managed file the user's maps are free.
	if _, got := loadFiles(t, "", "policy:\n  credential_grants: {github_token: [my-mcp]}\n"); got != "" {
		t.Error(got)
	}
}

// A Config built in code is validated as a loaded one.
func TestCredentialsValidate(t *testing.T) {
	t.Parallel()
	c := defaultConfig()
	c.Exec.Credentials.Env = CredentialEnv{"PATH": Inject("x")}
	c.Exec.Credentials.Files = CredentialFiles{"a/b": Inject("x")}
	c.Policy.CredentialGrants = CredentialGrants{"x": nil}
	c.Policy.DLPPatterns = DLPPatterns{"p": "("}
	err := c.Validate()
	for _, want := range []string{
		"exec.credentials.env: PATH: is reserved",
		"exec.credentials.files: a/b: not a plain file name",
		"policy.credential_grants: x: lists no agent",
		"policy.dlp_patterns: p: not a valid regular expression",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
}
