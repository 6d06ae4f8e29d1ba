package pipeline

// gh, the GitHub CLI, with its token masked (the recipe in
// docs/credentials.md, "gh, glab and other keyring CLIs"): the real gh
// talks to a loopback HTTPS stand-in for a GitHub host, through the
// terminating proxy. gh keeps its token in the host's keyring, which no
// sandbox reaches; the keychain broker hands it over instead, and only
// as a placeholder. The stand-in is a GitHub Enterprise Server host (a
// name and a port of the test's own, its certificate from the test's CA,
// trusted upstream through exec.egress.upstream_ca_files): for such a
// host gh reads GH_ENTERPRISE_TOKEN, for github.com GH_TOKEN, so the
// recipe maps both.

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// ghToken has a GitHub token's shape, as `gh auth token` prints one.
const ghToken = "ghp_R3alT0kenFromTheKeychain0123456789"

// ghStandIn serves the parts of GitHub's API that gh api user and gh auth
// status call, answering only requests that carry the real token, and
// logs what it received.
// Its certificate is for ghe.test, from a CA of the test's own (returned
// as PEM).
func ghStandIn(t *testing.T, seen *wireLog) (*httptest.Server, []byte) {
	caPEM, leaf := testCA(t, []string{"ghe.test"})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen.add(r, body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Header.Get("Authorization") != "token "+ghToken {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"message":"Bad credentials"}`)
			return
		}
		w.Header().Set("X-Oauth-Scopes", "repo, read:org, gist")
		switch r.URL.Path {
		case "/api/v3/user":
			io.WriteString(w, `{"login":"octocat","id":583231,"name":"The Octocat"}`)
		case "/api/graphql":
			io.WriteString(w, `{"data":{"viewer":{"login":"octocat"}}}`)
		default:
			io.WriteString(w, `{}`)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}}
	return srv, caPEM
}

// gh api user succeeds with a masked token: the stand-in receives the
// real token, the sandbox holds only the placeholder, and gh auth status
// says whom it is logged in as, and from which variable.
func TestMaskedGitHubCLI(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gh"); err != nil {
		if sandboxtest.Required() {
			t.Fatal("gh is not installed (.ci/test-deps.sh installs it)")
		}
		t.Skip("gh is not installed")
	}
	f := bwrapFixture(t, nil)
	var seen wireLog
	srv, caPEM := ghStandIn(t, &seen)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	host := "ghe.test:" + portString(srv.Listener)
	// The stand-in's CA, as the file an operator names in upstream_ca_files.
	caFile := filepath.Join(f.dir, "ghe-ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}

	c := f.cfg
	c.Policy.EgressAllowlist = []string{host}
	c.Exec.Credentials.Env = policy.CredentialEnv{
		"GH_TOKEN":            {Credential: "github_token", Hosts: []string{host}},
		"GH_ENTERPRISE_TOKEN": {Credential: "github_token", Hosts: []string{host}},
	}
	c.Exec.Egress.UpstreamCAFiles = []string{caFile}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	egressTest.Store(f.ex, &egressTestOptions{resolver: testResolver{"ghe.test": "127.0.0.1"}, loopbackNames: []string{"ghe.test"}})
	t.Cleanup(func() { egressTest.Delete(f.ex) })
	store := keyring.NewMemory()
	if err := broker.Set(store, "github_token", ghToken, time.Now()); err != nil {
		t.Fatal(err)
	}
	f.ex.opts.Keyring = store
	f.ex.opts.CredentialDir = filepath.Join(f.dir, "cred")

	o := f.run(strings.Join([]string{
		`export GH_HOST=` + host,
		`printenv GH_TOKEN > seen-token.txt`,
		`gh api user --jq '"login=" + .login'`,
		`gh auth status --hostname ` + host + ` 2>&1`,
	}, " && "))
	if exitOf(o) != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s\nthe stand-in saw:\n%s", exitOf(o), o.Result.Stdout, o.Result.Stderr, seen.String())
	}
	for _, want := range []string{"login=octocat\n", "Logged in to " + host + " as octocat (GH_ENTERPRISE_TOKEN)"} {
		if !strings.Contains(o.Result.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, o.Result.Stdout)
		}
	}
	// The stand-in got the real token, in gh's own header.
	if wire := seen.String(); !strings.Contains(wire, "GET /api/v3/user "+host) || !strings.Contains(wire, "Authorization: token "+ghToken+"\r\n") {
		t.Errorf("the stand-in did not get the real token:\n%s", wire)
	}
	// The sandbox held a placeholder of the same shape, never the value.
	held, err := os.ReadFile(filepath.Join(f.ws, "seen-token.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ph := strings.TrimSuffix(string(held), "\n")
	if ph == ghToken || len(ph) != len(ghToken) || !strings.HasPrefix(ph, "ghp_") {
		t.Errorf("GH_TOKEN in the sandbox is %q, want a placeholder of the token's shape", ph)
	}
	if strings.Contains(seen.String(), ph) {
		t.Errorf("the placeholder reached the stand-in:\n%s", seen.String())
	}
	if strings.Contains(o.Result.Stdout+o.Result.Stderr, ghToken) || o.Result.RedactionCount != 0 {
		t.Errorf("the value or a token reached the output (%d redactions):\n%s%s", o.Result.RedactionCount, o.Result.Stdout, o.Result.Stderr)
	}
	if fmt.Sprint(o.Event.CredentialsMasked) != "[github_token]" || len(o.Event.Credentials) != 0 {
		t.Errorf("credentials_masked %v, injected %v", o.Event.CredentialsMasked, o.Event.Credentials)
	}
	if u := o.Event.Egress.Placeholders["github_token"]; u.Bound < 2 || u.Elsewhere != 0 {
		t.Errorf("placeholder counts %+v, want the user and auth status requests to the bound host", u)
	}
}
