package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Test credentials. The values never appear in a command text: commands
// reach them through variables and files, as agents must.
const (
	credToken = "Sup3r-s3cret_value.for/tests+XYZ"
	credFile  = "{\"type\":\"service_account\",\"private_key_id\":\"k-0123456789abcdef\"}\n"
	credAgent = "agent-only-value-0123456789"
)

// credFixture is a fixture whose keychain (in memory) holds the test
// credentials, with T mapped to token, a file mapped to the service
// account, and deploy_key granted to claude-code only.
func credFixture(t *testing.T, mutate func(*policy.Config)) (*fixture, *keyring.Memory) {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
		c.Exec.Credentials.Env = policy.CredentialEnv{"T": policy.Inject("token")}
		c.Exec.Credentials.Files = policy.CredentialFiles{"sa.json": policy.Inject("gcp_sa")}
		c.Policy.CredentialGrants = policy.CredentialGrants{"deploy_key": {"claude-code"}}
		c.Exec.Env.AgentSettable = []string{"AUTH"}
		if mutate != nil {
			mutate(c)
		}
	})
	m := keyring.NewMemory()
	now := time.Now()
	for id, v := range map[string]string{"token": credToken, "gcp_sa": credFile, "deploy_key": credAgent} {
		if err := broker.Set(m, id, v, now); err != nil {
			t.Fatal(err)
		}
	}
	f.ex.opts.Keyring = m
	f.ex.opts.CredentialDir = filepath.Join(f.dir, "cred")
	return f, m
}

// credForms are texts that must never reach the agent: twelve-byte windows
// of each value and of its hex, base64 (each alignment) and URL-encoded
// forms.
func credForms(v string) []string {
	b := []byte(v)
	all := []string{v, hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)), url.QueryEscape(v), url.PathEscape(v)}
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for a := range 3 {
			in := append(make([]byte, a), b...)
			s := e.EncodeToString(in)
			all = append(all, s[(8*a+5)/6:8*(a+len(b))/6])
		}
	}
	var out []string
	for _, f := range all {
		for i := 0; i+12 <= len(f); i++ {
			out = append(out, f[i:i+12])
		}
	}
	return out
}

// credLeak returns a form of one of the values found in text (also with
// whitespace removed), or "".
func credLeak(text string) string {
	compact := strings.Join(strings.Fields(text), "")
	for _, v := range []string{credToken, credFile, credAgent} {
		for _, f := range credForms(v) {
			if strings.Contains(text, f) || strings.Contains(compact, f) {
				return f
			}
		}
	}
	return ""
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// The values arrive, and the record holds none of them.
func TestCredInjected(t *testing.T) {
	f, _ := credFixture(t, nil)
	o := f.run(`printf %s "$T" | sha256sum; printf %s "$AUTH" | sha256sum; sha256sum < "$GATEHOUSE_CRED_DIR/sa.json"; echo "dir=$GATEHOUSE_CRED_DIR"`,
		func(r *api.ExecRequest) {
			r.Agent = "claude-code"
			r.Env = map[string]string{"AUTH": "Bearer ${credential:deploy_key}"}
		})
	for _, want := range []string{sha(credToken), sha("Bearer " + credAgent), sha(credFile), "dir=" + CredDirInSandbox} {
		if !strings.Contains(o.Result.Stdout, want) {
			t.Errorf("stdout %q lacks %q (stderr %q)", o.Result.Stdout, want, o.Result.Stderr)
		}
	}
	if got, want := o.Event.Credentials, []string{"deploy_key", "gcp_sa", "token"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("credentials_injected %v, want %v", got, want)
	}
	b, _ := json.Marshal(o)
	if l := credLeak(string(b)); l != "" {
		t.Errorf("the outcome holds %q: %s", l, b)
	}
}

// Every way of printing a value, to stdout and to stderr, is redacted and
// counted; the value and its encodings never reach the result, the event
// or the audit trail.
func TestCredLeaks(t *testing.T) {
	f, _ := credFixture(t, nil)
	s, err := audit.Open(context.Background(), audit.Options{Path: filepath.Join(f.dir, "state", "audit.db"), Keys: keyring.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f.ex.SetObservers(s, nil)
	for _, tc := range []struct {
		name, cmd string
		count     int
	}{
		{"env", `env`, 1},
		{"printenv", `printenv T`, 1},
		{"environ", `cat /proc/self/environ`, 1},
		{"base64", `echo $T | base64`, 1},
		{"base64 -w0 of a longer text", `{ echo "some text before it"; echo "$T"; echo and after it; } | base64 -w0`, 1},
		{"base64 wrapped", `{ head -c 50 /dev/zero | tr '\0' x; echo "$T"; } | base64 -w 20`, 1},
		{"xxd -p", `echo "$T" | xxd -p`, 1},
		{"xxd -p of a longer text", `{ echo "some text before it, long enough to wrap"; echo "$T"; } | xxd -p`, 1},
		{"od", `echo "$T" | od`, 1},
		{"od -x", `{ echo x; echo "$T"; } | od -x`, 1},
		{"jq @uri", `printf %s "$T" | jq -sRr @uri`, 1},
		{"split across writes", `printf %s "${T:0:10}"; sleep 0.3; printf '%s\n' "${T:10}"`, 1},
		{"child of a child", `bash -c 'sh -c "printenv T"'`, 1},
		{"file", `cat "$GATEHOUSE_CRED_DIR/sa.json"`, 1},
		{"file base64", `base64 < "$GATEHOUSE_CRED_DIR/sa.json"`, 1},
		{"twice", `printenv T; printenv T`, 2},
	} {
		for _, stream := range []string{"stdout", "stderr"} {
			cmd := tc.cmd
			if stream == "stderr" {
				cmd = "{ " + cmd + "; } >&2"
			}
			o, err := f.try(cmd)
			if err != nil {
				t.Errorf("%s (%s): %v", tc.name, stream, err)
				continue
			}
			text := o.Result.Stdout
			if stream == "stderr" {
				text = o.Result.Stderr
			}
			if !strings.Contains(text, "[REDACTED:credential:") {
				t.Errorf("%s (%s): nothing redacted in %q (stderr %q)", tc.name, stream, text, o.Result.Stderr)
			}
			b, _ := json.Marshal(o)
			if l := credLeak(string(b)); l != "" {
				t.Errorf("%s (%s): %q leaked: %s", tc.name, stream, l, b)
			}
			if o.Result.RedactionCount != tc.count || o.Event.Output.RedactionCount != tc.count {
				t.Errorf("%s (%s): redaction_count %d/%d, want %d: %q", tc.name, stream, o.Result.RedactionCount, o.Event.Output.RedactionCount, tc.count, text)
			}
		}
	}
	// The audit trail holds the redacted output and the judged text, and no
	// value in any form.
	s.Close()
	db, err := os.ReadFile(filepath.Join(f.dir, "state", "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	if wal, err := os.ReadFile(filepath.Join(f.dir, "state", "audit.db-wal")); err == nil {
		db = append(db, wal...)
	}
	if l := credLeak(string(db)); l != "" {
		t.Errorf("the audit database holds %q", l)
	}
	if !bytes.Contains(db, []byte("[REDACTED:credential:token]")) {
		t.Error("the audit database holds no redacted output")
	}
}

// The output cap applies to the redacted stream: a value across the cap is
// not cut into a visible prefix.
func TestCredCapAfterRedaction(t *testing.T) {
	f, _ := credFixture(t, func(c *policy.Config) { c.Exec.Limits.OutputMaxBytes = policy.KiB })
	o := f.run(`head -c 1010 /dev/zero | tr '\0' a; echo "$T"; head -c 3000 /dev/zero`)
	if strings.Contains(o.Result.Stdout, credToken[:8]) {
		t.Errorf("a prefix of the value passed the cap: %q", o.Result.Stdout[1000:])
	}
	if !o.Result.Truncated || o.Event.Output.StdoutBytes != 1010+int64(len("[REDACTED:credential:token]\n"))+3000 {
		t.Errorf("truncated %v, stdout_bytes %d", o.Result.Truncated, o.Event.Output.StdoutBytes)
	}
	if o.Event.Output.RedactionCount != 1 {
		t.Errorf("redaction_count %d", o.Event.Output.RedactionCount)
	}
}

// Credential files are 0400 in a read-only directory, and the directory is
// gone when the run ends: after a normal exit, a timeout and a kill.
func TestCredFiles(t *testing.T) {
	f, _ := credFixture(t, nil)
	parent := f.ex.opts.CredentialDir
	o := f.run(`stat -c '%a' "$GATEHOUSE_CRED_DIR/sa.json"; touch "$GATEHOUSE_CRED_DIR/x" 2>/dev/null && echo writable; ls -A ` + parent + ` | wc -l`)
	if got := strings.Fields(o.Result.Stdout); len(got) != 2 || got[0] != "400" || got[1] != "0" {
		t.Errorf("stdout %q (stderr %q); want mode 400, not writable, the host directory hidden", o.Result.Stdout, o.Result.Stderr)
	}
	empty := func(when string) {
		t.Helper()
		ents, err := os.ReadDir(parent)
		if err != nil || len(ents) != 0 {
			t.Errorf("after %s: %v entries in %s (%v)", when, len(ents), parent, err)
		}
	}
	empty("a normal exit")

	o, err := f.try(`cat "$GATEHOUSE_CRED_DIR/sa.json" >/dev/null && echo read; sleep 30`, func(r *api.ExecRequest) { r.TimeoutSeconds = 1 })
	if err != nil || !o.Result.TimedOut || !strings.Contains(o.Result.Stdout, "read") {
		t.Fatalf("timeout run: %+v, %v", o, err)
	}
	empty("a timeout")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &watchWriter{want: "read", seen: make(chan struct{})}
	go func() {
		<-w.seen
		cancel()
	}()
	o, err = f.ex.Execute(ctx, api.ExecRequest{Command: `cat "$GATEHOUSE_CRED_DIR/sa.json" >/dev/null && echo read; sleep 30`, Agent: "cli", Surface: api.SurfaceCLI},
		sandbox.Streams{Stdout: w})
	if err != nil || o.Event.Status != string(sandbox.StatusKilled) {
		t.Fatalf("killed run: %v, %v", o, err)
	}
	empty("a kill")
}

// watchWriter closes seen once what was written holds want.
type watchWriter struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	b    bytes.Buffer
	once sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b.Write(p)
	found := strings.Contains(w.b.String(), w.want)
	w.mu.Unlock()
	if found {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// Grants, unknown ids and an unreadable keychain are denials that name the
// credential, before anything runs.
func TestCredDenials(t *testing.T) {
	f, m := credFixture(t, nil)
	marker := filepath.Join(f.ws, "ran")
	for _, tc := range []struct {
		name, cmd, agent string
		env              map[string]string
		code, reason     string
		ran              bool
	}{
		{name: "reference not granted", cmd: `true <<<"${credential:deploy_key}"`, agent: "cli",
			code: DenyCredNotGranted, reason: `credential "deploy_key" is not granted to agent "cli" (the command references it)`},
		{name: "variable not granted", cmd: `true`, agent: "my-mcp-client", env: map[string]string{"AUTH": "${credential:deploy_key}"},
			code: DenyCredNotGranted, reason: `credential "deploy_key" is not granted to agent "my-mcp-client" (env.AUTH references it)`},
		{name: "unmapped, ungranted", cmd: `true <<<"${credential:other}"`, agent: "cli",
			code: DenyCredNotGranted, reason: `credential "other" is not granted`},
		{name: "bad reference", cmd: `true <<<"${credential:Deploy}"`, agent: "cli",
			code: DenyCredUnknown, reason: `${credential:Deploy} is not a credential reference`},
	} {
		_, err := f.try(tc.cmd+"; touch "+marker, func(r *api.ExecRequest) { r.Agent, r.Env = tc.agent, tc.env })
		d := denial(err)
		if d == nil || d.Code != tc.code || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("%s: %v, want %s %q", tc.name, err, tc.code, tc.reason)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the command ran", tc.name)
			os.Remove(marker)
		}
	}

	// A granted reference to a credential the keychain does not hold.
	m.Delete("deploy_key")
	_, err := f.try(`true <<<"${credential:deploy_key}"; touch `+marker, func(r *api.ExecRequest) { r.Agent = "claude-code" })
	if d := denial(err); d == nil || d.Code != DenyCredUnknown || !strings.Contains(d.Reason, `credential "deploy_key" is not in the keychain`) ||
		d.Hint != "store it with 'gatehouse cred set deploy_key'" || strings.Contains(d.Reason, "gatehouse cred set") || d.Event.Status != string(sandbox.StatusNeverRan) {
		t.Errorf("missing credential: %v", err)
	}
	// A keychain that cannot be read.
	m.Err = &keyring.UnavailableError{Cause: "the login keyring is locked", Hint: "unlock it"}
	_, err = f.try(`touch ` + marker)
	if d := denial(err); d == nil || d.Code != DenyCredUnavailable || !strings.Contains(d.Reason, "the login keyring is locked") || d.Hint != "unlock it" {
		t.Errorf("locked keychain: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a command ran")
	}
	// An agent may not set a mapped variable.
	m.Err = nil
	f.cfg.Exec.Env.AgentSettable = []string{"AUTH", "T"}
	_, err = f.try(`true`, func(r *api.ExecRequest) { r.Env = map[string]string{"T": "x"} })
	if ae, ok := err.(*ArgError); !ok || ae.Arg != "env.T" {
		t.Errorf("agent setting a mapped variable: %v", err)
	}
}

// Without credentials, the built-in patterns still redact.
func TestCredBuiltinPatterns(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	f := newFixture(t, sandboxtest.Dir(t), nil)
	o := f.run(`echo "key AKIAIOSFODNN7EXAMPLE"; echo "Authorization: Bearer abc123def456ghi789jkl" >&2`)
	if o.Result.Stdout != "key [REDACTED:pattern:aws_access_key_id]\n" || o.Result.Stderr != "Authorization: Bearer [REDACTED:pattern:bearer_token]\n" {
		t.Errorf("stdout %q, stderr %q", o.Result.Stdout, o.Result.Stderr)
	}
	if o.Result.RedactionCount != 2 || len(o.Event.Credentials) != 0 {
		t.Errorf("redaction_count %d, credentials %v", o.Result.RedactionCount, o.Event.Credentials)
	}
}

// A credential on a command line is denied before anything runs, in the
// text and in pinned scripts; the sanctioned forms run.
func TestCredInArgv(t *testing.T) {
	f, _ := credFixture(t, nil)
	marker := filepath.Join(f.ws, "ran")
	f.write("home/src/call.sh", "#!/bin/bash\ntouch ran\ncurl -fsS -H \"Authorization: Bearer $T\" https://api.github.com/user\n")
	for _, tc := range []struct{ cmd, reason string }{
		{`touch ran; curl -H "Authorization: Bearer $T" https://api.github.com/user`,
			"$T would be an argument of curl, where other processes can read it"},
		{`touch ran; curl -H "Authorization: Bearer ${credential:token}" https://api.github.com/user`,
			"$GATEHOUSE_CRED_TOKEN would be an argument of curl"},
		{`touch ran; X=$T; grep -c "$X" /dev/null`, "$X would be an argument of grep"},
		{`bash call.sh`, "$T would be an argument of curl (" + filepath.Join(f.ws, "call.sh") + ")"},
	} {
		_, err := f.try(tc.cmd)
		d := denial(err)
		if d == nil || d.Code != DenyCredInArgv || !strings.Contains(d.Reason, tc.reason) ||
			!strings.Contains(d.Reason, "GH_TOKEN=$") || !strings.Contains(d.Reason, "printf") {
			t.Errorf("%q: %v, want %s %q", tc.cmd, err, DenyCredInArgv, tc.reason)
			continue
		}
		if d.Event.Decision != "deny" || d.Event.BlockedBy != DenyCredInArgv || d.Event.Status != "" {
			t.Errorf("%q: event %+v", tc.cmd, d.Event)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%q: the command ran", tc.cmd)
			os.Remove(marker)
		}
	}
	// The sanctioned forms: a process substitution fed by printf, an
	// assignment before the command, a here-string.
	o := f.run(`cat <(printf 'Authorization: Bearer %s' "$T") | sha256sum; GH_TOKEN=$T printenv GH_TOKEN | tr -d '\n' | sha256sum; tr -d '\n' <<<"$T" | sha256sum`)
	for _, want := range []string{sha("Authorization: Bearer " + credToken), sha(credToken)} {
		if !strings.Contains(o.Result.Stdout, want) {
			t.Errorf("stdout %q lacks %s (stderr %q)", o.Result.Stdout, want, o.Result.Stderr)
		}
	}
}
