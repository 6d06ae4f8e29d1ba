package policy

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/broker"
)

const boundAllow = `policy:
  egress_allowlist: ["*.github.com", "github.com", "registry.example:8443"]
`

func TestCredentialMappingLoad(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", `exec:
  credentials:
    env:
      GITHUB_TOKEN: {credential: github_token, hosts: ["api.github.com", "github.com"]}
      REG_TOKEN: {credential: reg, hosts: ["registry.example:8443"], mode: inject}
      NPM_TOKEN: "${credential:npm}"
    files:
      gh.json: {credential: github_token, hosts: [api.github.com]}
`+boundAllow)
	if errText != "" {
		t.Fatal(errText)
	}
	c := &l.Config
	want := &broker.Config{
		Env:    map[string]string{"GITHUB_TOKEN": "github_token", "REG_TOKEN": "reg", "NPM_TOKEN": "npm"},
		Files:  map[string]string{"gh.json": "github_token"},
		Grants: map[string][]string{},
		Masked: map[string][]string{"github_token": {"api.github.com", "github.com"}},
		Auto:   map[string]string{"npm": "exec.credentials.env.NPM_TOKEN"},
	}
	if got := c.CredentialConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("CredentialConfig = %+v, want %+v", got, want)
	}
	for k, mode := range map[string]string{"GITHUB_TOKEN": ModeMask, "REG_TOKEN": ModeInject, "NPM_TOKEN": ModeAuto} {
		if got := c.Exec.Credentials.Env[k].EffectiveMode(); got != mode {
			t.Errorf("%s: mode %q, want %q", k, got, mode)
		}
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	var b strings.Builder
	l.Show(&b)
	if line := `{GITHUB_TOKEN: {credential: github_token, hosts: [api.github.com, github.com], mode: mask}, NPM_TOKEN: "${credential:npm}", REG_TOKEN: {credential: reg, hosts: ["registry.example:8443"], mode: inject}}`; !regexpLine(b.String(), "exec.credentials.env:", line) {
		t.Errorf("Show has no line %q:\n%s", line, b.String())
	}
	js, err := json.Marshal(c.Exec.Credentials.Env)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(js), `{"GITHUB_TOKEN":{"credential":"github_token","hosts":["api.github.com","github.com"],"mode":"mask"},"NPM_TOKEN":"${credential:npm}","REG_TOKEN":{"credential":"reg","hosts":["registry.example:8443"],"mode":"inject"}}`; got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

func TestCredentialMappingInvalid(t *testing.T) {
	t.Parallel()
	env := func(v string) string { return "exec:\n  credentials:\n    env:\n      T: " + v + "\n" + boundAllow }
	for _, tc := range []struct{ name, user, want string }{
		{"no credential", env("{hosts: [github.com]}"),
			`config.yaml:4: exec.credentials.env: T: credential: missing`},
		{"bad id", env("{credential: Bad, hosts: [github.com]}"),
			`config.yaml:4: exec.credentials.env: T: credential: "Bad" is not a credential id`},
		{"unknown key", env("{credential: x, host: [github.com]}"),
			`config.yaml:4: exec.credentials.env: T: host: unknown key; want credential, hosts, mode or kind`},
		{"bad host", env(`{credential: x, hosts: ["*.com"]}`),
			`config.yaml:4: exec.credentials.env: T: hosts[0]: "*.com" is too broad`},
		{"every host", env(`{credential: x, hosts: ["*"]}`),
			`exec.credentials.env: T: hosts[0]: "*" would bind the credential to every host`},
		{"bad port", env(`{credential: x, hosts: ["github.com:0"]}`),
			`exec.credentials.env: T: hosts[0]: "github.com:0"`},
		{"bad mode", env("{credential: x, hosts: [github.com], mode: swap}"),
			`exec.credentials.env: T: mode: "swap" is not one of mask, inject, auto`},
		{"auto with hosts", env("{credential: x, hosts: [github.com], mode: auto}"),
			`exec.credentials.env: T: mode: auto chooses the hosts by the value's shape; with hosts listed, write mode: mask`},
		{"mask without hosts", env("{credential: x, mode: mask}"),
			`exec.credentials.env: T: mode: mask needs hosts`},
		{"hosts a number", env("{credential: x, hosts: {a: b}}"),
			`exec.credentials.env: T: hosts: want a string or a list of strings, got a mapping`},
		{"host not allowlisted", env("{credential: x, hosts: [api.github.com, gitlab.com]}"),
			`config.yaml:3: exec.credentials.env: T: hosts[1]: "gitlab.com" is not allowed by policy.egress_allowlist ["*.github.com", "github.com", "registry.example:8443"]; a credential's hosts must be egress destinations too`},
		{"host port not allowlisted", env("{credential: x, hosts: [\"github.com:8443\"]}"),
			`exec.credentials.env: T: hosts[0]: "github.com:8443" is not allowed by policy.egress_allowlist`},
		{"host on another port", env("{credential: x, hosts: [registry.example]}"),
			`exec.credentials.env: T: hosts[0]: "registry.example" is not allowed by policy.egress_allowlist`},
		{"no egress", "exec:\n  credentials:\n    files:\n      f.json: {credential: x, hosts: [github.com]}\n",
			`exec.credentials.files: f.json: hosts[0]: "github.com" is not allowed by policy.egress_allowlist []`},
		{"two modes", "exec:\n  credentials:\n    env:\n      A: {credential: x, hosts: [github.com]}\n      B: {credential: x, mode: inject}\n" + boundAllow,
			`exec.credentials.env: B: credential "x" is injected here but masked by exec.credentials.env.A; a credential has one mode`},
		{"auto and inject", "exec:\n  credentials:\n    env:\n      A: \"${credential:x}\"\n      B: {credential: x, mode: inject}\n",
			`exec.credentials.env: B: credential "x" is injected here but auto (masked or injected by its value's shape) by exec.credentials.env.A; a credential has one mode`},
		{"bad credential_mode", "policy:\n  credential_mode: strict\n",
			`config.yaml:2: policy.credential_mode: "strict" is not one of any, mask`},
		{"mask refuses inject", "exec:\n  credentials:\n    env:\n      NPM_TOKEN: {credential: npm, mode: inject}\npolicy:\n  credential_mode: mask\n",
			`config.yaml:3: exec.credentials.env: NPM_TOKEN: {credential: npm, mode: inject} injects the value, but policy.credential_mode is mask (config.yaml:6); bind it to its hosts, as in {credential: npm, hosts: [api.example.com]}`},
		{"mask refuses inject mode", "exec:\n  credentials:\n    files:\n      f: {credential: x, hosts: [github.com], mode: inject}\n" + boundAllow + "  credential_mode: mask\n",
			`exec.credentials.files: f: {credential: x, hosts: [github.com], mode: inject} injects the value, but policy.credential_mode is mask`},
		{"kind in env", env("{credential: x, kind: ssh_key}"),
			`config.yaml:4: exec.credentials.env: T: kind: ssh_key is for exec.credentials.files entries (ssh reads a key from a file); map it there`},
		{"unknown kind", "exec:\n  credentials:\n    files:\n      id: {credential: x, kind: gpg_key}\n",
			`config.yaml:4: exec.credentials.files: id: kind: "gpg_key" is not a kind of credential file; want ssh_key`},
		{"ssh_key with hosts", "exec:\n  credentials:\n    files:\n      id: {credential: x, kind: ssh_key, hosts: [github.com]}\n" + boundAllow,
			`exec.credentials.files: id: hosts: an ssh_key is used by ssh inside the command and never sent as a request header, so it cannot be masked; remove hosts`},
		{"ssh_key auto", "exec:\n  credentials:\n    files:\n      id: {credential: x, kind: ssh_key, mode: auto}\n",
			`exec.credentials.files: id: mode: an ssh_key is injected (ssh reads the file), not auto; remove mode`},
		{"ssh_key under mask", "exec:\n  credentials:\n    files:\n      id: {credential: x, kind: ssh_key}\npolicy:\n  credential_mode: mask\n",
			`config.yaml:3: exec.credentials.files: id: {credential: x, kind: ssh_key, mode: inject} injects the value, but policy.credential_mode is mask`},
		{"relative CA file", "exec:\n  egress:\n    upstream_ca_files: [ca.pem]\n",
			`config.yaml:3: exec.egress.upstream_ca_files[0]: "ca.pem" is not an absolute path`},
	} {
		_, got := loadFiles(t, "", tc.user)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// Per-agent lists count too.
	if _, got := loadFiles(t, "", "exec:\n  credentials:\n    env:\n      T: {credential: x, hosts: [gitlab.com]}\npolicy:\n  egress_allowlist_by_agent: {cli: [gitlab.com]}\n"); got != "" {
		t.Errorf("per-agent list: %s", got)
	}
	// Masked mappings satisfy credential_mode: mask.
	if _, got := loadFiles(t, "", "exec:\n  credentials:\n    env:\n      T: {credential: x, hosts: [github.com]}\n"+boundAllow+"  credential_mode: mask\n"); got != "" {
		t.Errorf("masked under mask: %s", got)
	}
	// Mode auto loads under credential_mode: mask (its value decides, at
	// execution) and without egress to the hosts it may choose.
	if _, got := loadFiles(t, "", "exec:\n  credentials:\n    env:\n      T: \"${credential:x}\"\n      U: {credential: y}\npolicy:\n  credential_mode: mask\n"); got != "" {
		t.Errorf("auto under mask: %s", got)
	}
}

func TestCredentialModeManaged(t *testing.T) {
	t.Parallel()
	const managed = "policy:\n  credential_mode: mask\n  egress_allowlist: [github.com]\nexec:\n  egress:\n    upstream_ca_files: [/etc/gatehouse/ca.pem]\n"
	for _, tc := range []struct{ name, user, want string }{
		{"masked mapping", "exec:\n  credentials:\n    env:\n      T: {credential: x, hosts: [github.com]}\n", ""},
		{"inject mapping refused", "exec:\n  credentials:\n    env:\n      T: {credential: x, hosts: [github.com], mode: inject}\n",
			`config.yaml:3: exec.credentials.env: T: {credential: x, hosts: [github.com], mode: inject} injects the value, but policy.credential_mode is mask (managed.yaml:2)`},
		{"inject refused", "exec:\n  credentials:\n    files:\n      f: {credential: x, mode: inject}\n",
			`config.yaml:3: exec.credentials.files: f: {credential: x, mode: inject} injects the value, but policy.credential_mode is mask (managed.yaml:2)`},
		{"auto loads", "exec:\n  credentials:\n    files:\n      f: \"${credential:x}\"\n", ""},
		{"mode widened", "policy:\n  credential_mode: any\n",
			`config.yaml:2: policy.credential_mode: "any" widens the managed value "mask" (managed.yaml:2); only mask is allowed`},
		{"CA kept", "exec:\n  egress:\n    upstream_ca_files: [/etc/gatehouse/ca.pem]\n", ""},
		{"CA added", "exec:\n  egress:\n    upstream_ca_files: [/etc/gatehouse/ca.pem, /home/u/evil.pem]\n",
			`config.yaml:3: exec.egress.upstream_ca_files[1]: "/home/u/evil.pem" is not in the managed list ["/etc/gatehouse/ca.pem"] (managed.yaml:6); the proxy trusts only the authorities IT lists`},
	} {
		_, got := loadFiles(t, managed, tc.user)
		if tc.want == "" {
			if got != "" {
				t.Errorf("%s: %s", tc.name, got)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// A managed masked mapping binds the user file: changing its hosts or
	// its mode is a change.
	const m2 = "exec:\n  credentials:\n    env:\n      T: {credential: x, hosts: [github.com]}\npolicy:\n  egress_allowlist: [github.com, gitlab.com]\n"
	if _, got := loadFiles(t, m2, "exec:\n  credentials:\n    env:\n      T: {credential: x, hosts: [github.com], mode: mask}\n"); got != "" {
		t.Errorf("same meaning: %s", got)
	}
	if _, got := loadFiles(t, m2, "exec:\n  credentials:\n    env:\n      T: {credential: x, hosts: [github.com, gitlab.com]}\n"); !strings.Contains(got,
		`config.yaml:3: exec.credentials.env: T: {credential: x, hosts: [github.com, gitlab.com], mode: mask} differs from the managed value {credential: x, hosts: [github.com], mode: mask} (managed.yaml:3)`) {
		t.Errorf("hosts changed: %q", got)
	}
}

// A Config built in code gets the checks across fields too.
func TestCredentialMappingValidate(t *testing.T) {
	t.Parallel()
	c := defaultConfig()
	c.Exec.Credentials.Env = CredentialEnv{"T": {Credential: "x", Hosts: []string{"github.com"}}}
	err := c.Validate()
	if want := `exec.credentials.env: T: hosts[0]: "github.com" is not allowed by policy.egress_allowlist []`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Validate: %v, want %q", err, want)
	}
	c.Policy.EgressAllowlist = []string{"github.com"}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	c.Exec.Credentials.Env["T"] = CredentialMapping{Credential: "x", Mode: "mask"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "mode: mask needs hosts") {
		t.Errorf("Validate: %v", err)
	}
}

// The seed's plain mapping is mode auto: config show says so with the
// line that wrote it, and what each shape of value does, and the
// configuration loads though no allowlist names the hosts auto may bind.
func TestCredentialModesShow(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", `exec:
  credentials:
    env:
      GITHUB_TOKEN: "${credential:github_token}"
      REG: {credential: reg, hosts: [github.com]}
      OLD: {credential: old, mode: inject}
policy:
  egress_allowlist: [github.com, api.github.com]
`)
	if errText != "" {
		t.Fatal(errText)
	}
	modes := l.CredentialModes()
	var got []string
	for _, m := range modes {
		got = append(got, fmt.Sprintf("%s %s %s %q %s", m.Field, m.ID, m.Mode, m.Hosts, filepath.Base(m.Source.File)+":"+strconv.Itoa(m.Source.Line)))
	}
	want := []string{
		`exec.credentials.env.GITHUB_TOKEN github_token auto [] config.yaml:4`,
		`exec.credentials.env.OLD old inject [] config.yaml:6`,
		`exec.credentials.env.REG reg mask ["github.com"] config.yaml:5`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CredentialModes\n got %q\nwant %q", got, want)
	}
	var b strings.Builder
	l.ShowCredentials(&b, "# ")
	out := b.String()
	for _, line := range []string{
		`# exec.credentials.env.GITHUB_TOKEN: github_token auto, masked or injected by its value's shape (below); 'gatehouse doctor' reads the keychain and says which; mode: inject keeps it injected  # ` + l.CredentialModes()[0].Source.String(),
		`# exec.credentials.env.REG: reg masked, bound to github.com  # `,
		`# exec.credentials.env.OLD: old injected  # `,
		`#   GitHub (ghp_ gho_ ghu_ ghs_ github_pat_): api.github.com, github.com, uploads.github.com, *.githubusercontent.com; the egress allowlist does not allow uploads.github.com, *.githubusercontent.com: such a credential is unusable there until it does`,
		`#   npm (npm_): registry.npmjs.org; the egress allowlist does not allow registry.npmjs.org`,
		`#   a JWT whose aud claim is https URLs: their hosts`,
		`# mode auto injects everything else: AWS keys`,
	} {
		if !strings.Contains(out, line) {
			t.Errorf("ShowCredentials has no %q:\n%s", line, out)
		}
	}
	if got := l.Config.HostsNotAllowed([]string{"api.github.com", "gitlab.com"}, "cli"); !reflect.DeepEqual(got, []string{"gitlab.com"}) {
		t.Errorf("HostsNotAllowed = %q", got)
	}
}

// An ssh_key file is injected, named in the broker's configuration, and
// shown with its kind.
func TestCredentialSSHKey(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", "exec:\n  credentials:\n    files:\n      id_deploy: {credential: deploy_key, kind: ssh_key}\n      sa.json: \"${credential:gcp}\"\n")
	if errText != "" {
		t.Fatal(errText)
	}
	c := &l.Config
	if got := c.Exec.Credentials.Files["id_deploy"].EffectiveMode(); got != ModeInject {
		t.Errorf("mode %q, want inject", got)
	}
	bc := c.CredentialConfig()
	if !reflect.DeepEqual(bc.SSHKeys, []string{"id_deploy"}) || bc.Files["id_deploy"] != "deploy_key" {
		t.Errorf("CredentialConfig: files %v, ssh keys %v", bc.Files, bc.SSHKeys)
	}
	js, err := json.Marshal(c.Exec.Credentials.Files)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id_deploy":{"credential":"deploy_key","kind":"ssh_key","mode":"inject"},"sa.json":"${credential:gcp}"}`; string(js) != want {
		t.Errorf("JSON\n got %s\nwant %s", js, want)
	}
	var b strings.Builder
	l.ShowCredentials(&b, "# ")
	if want := "# exec.credentials.files.id_deploy: deploy_key injected, an SSH key: the IdentityFile of ssh and git in the sandbox  # "; !strings.Contains(b.String(), want) {
		t.Errorf("ShowCredentials lacks %q:\n%s", want, b.String())
	}
}
