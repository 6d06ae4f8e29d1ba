package pipeline

// Mode auto in the real sandbox: the seed's plain mapping of a
// GitHub-shaped token gives the command a placeholder, so that no
// transformation of the variable (reversing, splitting, one character
// per line, a file the agent later reads) yields the value, which no
// redactor could follow.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// autoToken has the shape of a GitHub token; autoAWS of an AWS access key.
var (
	autoToken = "ghp_" + strings.Repeat("Xq7Lm2Rk9W", 3) + "a1B2c3"
	autoAWS   = "AKIA" + "Q7RX2M4N6P8T0V3Z"
)

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// autoFixture maps GITHUB_TOKEN and AWS_ACCESS_KEY_ID in the seed's plain
// form, the values in an in-memory keychain; allow is the egress
// allowlist.
func autoFixture(t *testing.T, allow []string) *fixture {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
		c.Exec.Sandbox.Backend = "bubblewrap"
		c.Exec.Credentials.Env = policy.CredentialEnv{
			"GITHUB_TOKEN":      policy.Inject("github_token"),
			"AWS_ACCESS_KEY_ID": policy.Inject("aws_key"),
		}
		c.Policy.EgressAllowlist = allow
	})
	m := keyring.NewMemory()
	for id, v := range map[string]string{"github_token": autoToken, "aws_key": autoAWS} {
		if err := broker.Set(m, id, v, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	f.ex.opts.Keyring = m
	f.ex.opts.CredentialDir = filepath.Join(f.dir, "cred")
	return f
}

func TestAutoMaskedInSandbox(t *testing.T) {
	f := autoFixture(t, nil)
	o := f.run(`printf '%s\n' "$GITHUB_TOKEN" | rev
printf '%s\n' "${GITHUB_TOKEN:0:20}"; printf '%s\n' "${GITHUB_TOKEN:20}"
printf '%s' "$GITHUB_TOKEN" | fold -w1
printf '%s' "$GITHUB_TOKEN" | od -c
printf '%s' "$GITHUB_TOKEN" > token.txt
case "$GITHUB_TOKEN" in ghp_*) echo shape=ok;; esac
echo len=${#GITHUB_TOKEN}
printf '%s' "$AWS_ACCESS_KEY_ID" | sha256sum`)
	if exitOf(o) != 0 {
		t.Fatalf("exit %d: %s %s", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	out := o.Result.Stdout
	compact := strings.Join(strings.Fields(out), "")
	body := autoToken[len("ghp_"):]
	for i := 0; i+8 <= len(body); i++ {
		w := body[i : i+8]
		if strings.Contains(compact, w) || strings.Contains(compact, reverse(w)) {
			t.Fatalf("the output holds %q of the value (or reversed): the command had the value\n%s", w, out)
		}
	}
	file, err := os.ReadFile(filepath.Join(f.ws, "token.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(file) == autoToken || !strings.HasPrefix(string(file), "ghp_") || len(file) != len(autoToken) {
		t.Errorf("the workspace file holds %q, want a placeholder of the token's shape", file)
	}
	if !strings.Contains(out, "shape=ok") || !strings.Contains(out, "len=40") {
		t.Errorf("the placeholder does not keep the token's shape: %q", out)
	}
	// The AWS key stays injected: its value arrives.
	if !strings.Contains(out, sha(autoAWS)) {
		t.Errorf("AWS_ACCESS_KEY_ID did not carry its value: %q", out)
	}

	// The card: masked and why, injected and why, and unusable until the
	// allowlist (empty here) allows GitHub's hosts.
	ev := o.Event
	if !slices.Equal(ev.CredentialsMasked, []string{"github_token"}) || !slices.Equal(ev.Credentials, []string{"aws_key"}) {
		t.Errorf("credentials_masked %q, credentials_injected %q", ev.CredentialsMasked, ev.Credentials)
	}
	hosts := []string{"api.github.com", "github.com", "uploads.github.com", "*.githubusercontent.com"}
	want := []api.CredentialNote{
		{ID: "aws_key", Field: "exec.credentials.env.AWS_ACCESS_KEY_ID", Mode: "injected", Reason: "mode auto, injected: " + broker.ShapeOf(autoAWS).Why},
		{ID: "github_token", Field: "exec.credentials.env.GITHUB_TOKEN", Mode: "masked", Reason: "mode auto, masked: a GitHub token", Hosts: hosts, Unusable: hosts},
	}
	if a, b := mustJSON(t, ev.CredentialNotes), mustJSON(t, want); a != b {
		t.Errorf("credential_notes\n got %s\nwant %s", a, b)
	}
	if s := ev.CredentialNotes[1].String(); !strings.Contains(s, "unusable until the egress allowlist allows api.github.com") {
		t.Errorf("the note says %q", s)
	}
	if b := mustJSON(t, o); strings.Contains(b, body[:12]) {
		t.Errorf("the outcome holds the value: %s", b)
	}

	// With GitHub's hosts allowed, the note says masked and nothing more.
	g := autoFixture(t, []string{"*.github.com", "github.com", "*.githubusercontent.com"})
	o = g.run(`true`)
	if n := o.Event.CredentialNotes; len(n) != 2 || n[1].ID != "github_token" || n[1].Mode != "masked" || len(n[1].Unusable) != 0 {
		t.Errorf("credential_notes with the hosts allowed: %+v", n)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
