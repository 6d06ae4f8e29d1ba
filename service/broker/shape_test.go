package broker

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

// jwtFor returns a token whose payload is claims (JSON); the signature is
// random-looking text, never checked.
func jwtFor(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte(claims)) + ".c2lnbmF0dXJlLXNpZ25hdHVyZQ"
}

var (
	githubHosts  = []string{"api.github.com", "github.com", "uploads.github.com", "*.githubusercontent.com"}
	shapedGitHub = "ghp_" + strings.Repeat("A1b2", 9)
)

func TestShapeOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		hosts       []string // nil: injected
		why         string   // for injected, a part of the reason
	}{
		{"github classic", shapedGitHub, githubHosts, ""},
		{"github oauth", "gho_" + strings.Repeat("z9", 18), githubHosts, ""},
		{"github app", "ghs_" + strings.Repeat("Q7", 18), githubHosts, ""},
		{"github fine-grained", "github_pat_11ABCDEFG0" + strings.Repeat("x_Y1", 16), githubHosts, ""},
		{"gitlab", "glpat-" + strings.Repeat("a-B_", 5), []string{"gitlab.com"}, ""},
		{"npm", "npm_" + strings.Repeat("N0p", 12), []string{"registry.npmjs.org"}, ""},
		{"anthropic", "sk-ant-api03-" + strings.Repeat("k_-9", 20), []string{"api.anthropic.com"}, ""},
		{"openai project", "sk-proj-" + strings.Repeat("Ab_-", 10), []string{"api.openai.com"}, ""},
		{"openai", "sk-" + strings.Repeat("Zz09", 12), []string{"api.openai.com"}, ""},
		{"slack bot", "xoxb-1234567890-0987654321-" + strings.Repeat("aB", 12), []string{"slack.com"}, ""},
		{"jwt https audience", jwtFor(`{"sub":"x","aud":"https://api.example.com/v1"}`), []string{"api.example.com"}, ""},
		{"jwt audiences", jwtFor(`{"aud":["https://a.example.com","https://b.example.com:8443/x","https://a.example.com/y"]}`), []string{"a.example.com", "b.example.com:8443"}, ""},

		{"github too short", "ghp_short", nil, "no shape Gatehouse recognises"},
		{"github odd alphabet", "ghp_" + strings.Repeat("A1b2", 8) + "!!!!", nil, "no shape"},
		{"github refresh", "ghr_" + strings.Repeat("A1b2", 9), nil, "refresh token"},
		{"aws", "AKIA" + strings.Repeat("Q", 16), nil, "SigV4"},
		{"private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n", nil, "private key"},
		{"jwt without audience", jwtFor(`{"sub":"x"}`), nil, "without an audience"},
		{"jwt audience not a URL", jwtFor(`{"aud":"authenticated"}`), nil, "not an https URL"},
		{"jwt http audience", jwtFor(`{"aud":"http://api.example.com"}`), nil, "not an https URL"},
		{"jwt IP audience", jwtFor(`{"aud":"https://10.0.0.1"}`), nil, "not an https URL"},
		{"jwt one bad audience", jwtFor(`{"aud":["https://a.example.com","x"]}`), nil, "not an https URL"},
		{"plain", "Sup3r-s3cret_value.for/tests+XYZ", nil, "no shape"},
	} {
		s := ShapeOf(tc.value)
		if s.Masked != (tc.hosts != nil) || !reflect.DeepEqual(s.Hosts, tc.hosts) {
			t.Errorf("%s: ShapeOf = %+v, want hosts %q", tc.name, s, tc.hosts)
		}
		if tc.hosts == nil && !strings.Contains(s.Why, tc.why) {
			t.Errorf("%s: why %q, want %q in it", tc.name, s.Why, tc.why)
		}
		if strings.Contains(s.Describe(), tc.value) {
			t.Errorf("%s: Describe holds the value", tc.name)
		}
	}
}

// A credential of mode auto is masked or injected at the lease, by the
// value read then.
func TestLeaseAuto(t *testing.T) {
	t.Parallel()
	m := keyring.NewMemory()
	now := time.Now()
	for id, v := range map[string]string{"github_token": shapedGitHub, "aws": "AKIA" + strings.Repeat("Q", 16), "plain": "plain-value-0123456789", "pinned": shapedGitHub} {
		if err := Set(m, id, v, now); err != nil {
			t.Fatal(err)
		}
	}
	c := &Config{
		Env:  map[string]string{"GITHUB_TOKEN": "github_token", "AWS_ACCESS_KEY_ID": "aws", "P": "plain", "Q": "pinned"},
		Auto: map[string]string{"github_token": "exec.credentials.env.GITHUB_TOKEN", "aws": "exec.credentials.env.AWS_ACCESS_KEY_ID", "plain": "exec.credentials.env.P"},
	}
	p, err := c.Plan(Request{Agent: "cli", Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := (&Broker{Store: m, Dir: t.TempDir()}).Lease(p, LeaseOptions{ExecID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	env := map[string]string{}
	for _, kv := range l.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if got := env["GITHUB_TOKEN"]; got == shapedGitHub || !strings.HasPrefix(got, "ghp_") || len(got) != len(shapedGitHub) {
		t.Errorf("GITHUB_TOKEN = %q, want a placeholder of the token's shape", got)
	}
	// "pinned" is the same shape, mapped as written with mode inject
	// (not auto): injected.
	if env["Q"] != shapedGitHub || env["AWS_ACCESS_KEY_ID"] != "AKIA"+strings.Repeat("Q", 16) || env["P"] != "plain-value-0123456789" {
		t.Errorf("injected values not given: %q", l.Env)
	}
	if got, want := l.MaskedIDs(), []string{"github_token"}; !reflect.DeepEqual(got, want) {
		t.Errorf("masked %q, want %q", got, want)
	}
	if len(l.Masked) != 1 || !reflect.DeepEqual(l.Masked[0].Hosts, githubHosts) || l.Masked[0].Value != shapedGitHub {
		t.Errorf("masked credential %+v", l.Masked)
	}
	if got, want := l.IDs, []string{"aws", "pinned", "plain"}; !reflect.DeepEqual(got, want) {
		t.Errorf("injected %q, want %q", got, want)
	}
	var got []string
	for _, a := range l.Auto {
		got = append(got, a.ID+" "+a.Field+" "+a.Shape.Describe())
	}
	want := []string{
		"aws exec.credentials.env.AWS_ACCESS_KEY_ID injected: " + ShapeOf("AKIA").Why,
		"github_token exec.credentials.env.GITHUB_TOKEN masked: a GitHub token",
		"plain exec.credentials.env.P injected: " + ShapeOf("x").Why,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("auto decisions\n got %q\nwant %q", got, want)
	}

	// Under credential_mode: mask, a value auto would inject is refused
	// at the lease, naming the credential and the mapping.
	// (Load refuses an injected mapping under mask; "pinned" goes.)
	c.RequireMask = true
	delete(c.Env, "Q")
	if p, err = c.Plan(Request{Agent: "cli", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	_, err = (&Broker{Store: m, Dir: t.TempDir()}).Lease(p, LeaseOptions{ExecID: "y"})
	var be *Error
	if !errors.As(err, &be) || be.Code != CodeMaskRequired || be.ID != "aws" || !strings.Contains(be.Reason, "exec.credentials.env.AWS_ACCESS_KEY_ID") {
		t.Errorf("lease under mask: %v, want credential_mask_required naming aws", err)
	}
	if err != nil && strings.Contains(err.Error(), "AKIA") {
		t.Errorf("the error holds the value: %v", err)
	}
}
