package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/doctor"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Doctor reads the keychain for mappings of mode auto and says what the
// stored value decides, with the line that wrote the mapping, and that a
// masked credential is unusable while no allowlist allows its hosts.
func TestDoctorCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte(`exec:
  credentials:
    env:
      GITHUB_TOKEN: "${credential:github_token}"
      OTHER: "${credential:other}"
      GONE: "${credential:gone}"
      KEPT: {credential: kept, mode: inject}
policy:
  egress_allowlist: [api.github.com, github.com]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := policy.Load(policy.LoadOptions{Home: dir, UserFile: file})
	if err != nil {
		t.Fatal(err)
	}
	m := keyring.NewMemory()
	token := "ghp_" + strings.Repeat("Ab3De6Gh9J", 3) + "k1L2m3"
	for id, v := range map[string]string{"github_token": token, "other": "not-a-known-shape-0123", "kept": token} {
		if err := broker.Set(m, id, v, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	printCredentials(&b, doctor.Credentials(m, l))
	out := b.String()
	for _, want := range []string{
		"credential:    exec.credentials.env.GITHUB_TOKEN → github_token, mode auto: masked: a GitHub token, bound to api.github.com, github.com, uploads.github.com, *.githubusercontent.com (" + file + ":4)\n" +
			"       unusable: no egress allowlist allows uploads.github.com, *.githubusercontent.com",
		"credential:    exec.credentials.env.OTHER → other, mode auto: injected: its value has no shape Gatehouse recognises",
		"credential:    exec.credentials.env.GONE → gone, mode auto: not in the keychain (" + file + ":6)",
		"credential:    exec.credentials.env.KEPT → kept, mode inject: injected (" + file + ":7)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's credentials lack\n%s\nin\n%s", want, out)
		}
	}
	if strings.Contains(out, token[4:14]) {
		t.Errorf("doctor printed the value:\n%s", out)
	}
}
