package broker

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

const (
	ghValue  = "ghp_testvalue0123456789"
	gcpValue = "{\"type\":\"service_account\",\"key\":\"0123456789\"}\n"
)

func TestRewrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ids      []string
		err      string
	}{
		{"echo hi", "echo hi", nil, ""},
		{`curl -H @<(printf 'Bearer %s' "${credential:github_token}")`, `curl -H @<(printf 'Bearer %s' "${GATEHOUSE_CRED_GITHUB_TOKEN}")`, []string{"github_token"}, ""},
		{"a=${credential:b_2} c=${credential:a1} d=${credential:b_2}", "a=${GATEHOUSE_CRED_B_2} c=${GATEHOUSE_CRED_A1} d=${GATEHOUSE_CRED_B_2}", []string{"a1", "b_2"}, ""},
		{"echo $GATEHOUSE_CRED_NPM and $GATEHOUSE_CRED_DIR", "echo $GATEHOUSE_CRED_NPM and $GATEHOUSE_CRED_DIR", []string{"npm"}, ""},
		{"echo ${credential:GitHub}", "", nil, "${credential:GitHub} is not a credential reference"},
		{"echo ${credential:}", "", nil, "${credential:} is not a credential reference"},
		{"echo ${credential:dir}", "", nil, `(not "dir")`},
		{"echo ${credential:" + strings.Repeat("a", 65) + "}", "", nil, "is not a credential reference"},
		{"echo ${credentials:x}", "echo ${credentials:x}", nil, ""},
	} {
		got, ids, err := Rewrite(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Rewrite(%q): err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || !reflect.DeepEqual(ids, tc.ids) {
			t.Errorf("Rewrite(%q) = %q, %q, %v; want %q, %q", tc.in, got, ids, err, tc.want, tc.ids)
		}
	}
}

func TestParseRef(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"${credential:github_token}":   "github_token",
		"${credential:a}":              "a",
		" ${credential:a}":             "",
		"${credential:a}x":             "",
		"${credential:A}":              "",
		"x${credential:a}":             "",
		"$credential:a":                "",
		"${credential:a}${credential}": "",
	} {
		id, ok := ParseRef(s)
		if id != want || ok != (want != "") {
			t.Errorf("ParseRef(%q) = %q, %v; want %q", s, id, ok, want)
		}
	}
	if got := EnvName("github_token"); got != "GATEHOUSE_CRED_GITHUB_TOKEN" {
		t.Errorf("EnvName: %q", got)
	}
	if got := Expand("Bearer ${credential:a} ${credential:b}", func(id string) string { return "<" + id + ">" }); got != "Bearer <a> <b>" {
		t.Errorf("Expand: %q", got)
	}
}

func testConfig() *Config {
	return &Config{
		Env:    map[string]string{"GITHUB_TOKEN": "github_token", "NPM_TOKEN": "npm"},
		Files:  map[string]string{"gcloud.json": "gcp_sa"},
		Grants: map[string][]string{"npm": {"cli"}, "deploy_key": {"claude-code"}},
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	c := testConfig()
	for _, tc := range []struct {
		name    string
		req     Request
		env     map[string]string
		files   map[string]string
		agent   map[string]string
		ids     []string
		errCode string
		errText string
	}{
		{name: "mapped, granted to all",
			req: Request{Agent: "claude-code", Command: "gh api user"},
			env: map[string]string{"GITHUB_TOKEN": "github_token"}, files: map[string]string{"gcloud.json": "gcp_sa"},
			ids: []string{"gcp_sa", "github_token"}},
		{name: "grant narrows a mapping",
			req: Request{Agent: "cli", Command: "npm publish"},
			env: map[string]string{"GITHUB_TOKEN": "github_token", "NPM_TOKEN": "npm"}, files: map[string]string{"gcloud.json": "gcp_sa"},
			ids: []string{"gcp_sa", "github_token", "npm"}},
		{name: "ungranted mapped variable used",
			req:     Request{Agent: "claude-code", Command: `echo "${NPM_TOKEN}" | npm login`},
			errCode: CodeNotGranted, errText: `credential "npm" is not granted to agent "claude-code" (the command uses $NPM_TOKEN, which exec.credentials.env maps to it)`},
		{name: "ungranted mapped variable not used",
			req: Request{Agent: "claude-code", Command: "echo $NPM_TOKENS"},
			env: map[string]string{"GITHUB_TOKEN": "github_token"}, files: map[string]string{"gcloud.json": "gcp_sa"},
			ids: []string{"gcp_sa", "github_token"}},
		{name: "reference granted",
			req: Request{Agent: "claude-code", Command: `ssh-add - <<<"${GATEHOUSE_CRED_DEPLOY_KEY}"`},
			env: map[string]string{"GITHUB_TOKEN": "github_token", "GATEHOUSE_CRED_DEPLOY_KEY": "deploy_key"}, files: map[string]string{"gcloud.json": "gcp_sa"},
			ids: []string{"deploy_key", "gcp_sa", "github_token"}},
		{name: "reference not granted",
			req:     Request{Agent: "my-mcp-client", Command: `x <<<"${GATEHOUSE_CRED_DEPLOY_KEY}"`},
			errCode: CodeNotGranted, errText: `credential "deploy_key" is not granted to agent "my-mcp-client" (the command references it)`},
		{name: "reference to an unmapped, ungranted id",
			req:     Request{Agent: "cli", Command: `x <<<"$GATEHOUSE_CRED_OTHER"`},
			errCode: CodeNotGranted, errText: `credential "other" is not granted`},
		{name: "reference to a mapped id",
			req: Request{Agent: "cli", Command: `x <<<"$GATEHOUSE_CRED_GITHUB_TOKEN"`},
			env: map[string]string{"GITHUB_TOKEN": "github_token", "NPM_TOKEN": "npm", "GATEHOUSE_CRED_GITHUB_TOKEN": "github_token"}, files: map[string]string{"gcloud.json": "gcp_sa"},
			ids: []string{"gcp_sa", "github_token", "npm"}},
		{name: "agent variable",
			req: Request{Agent: "claude-code", Command: "deploy", Env: map[string]string{"AUTH": "Bearer ${credential:deploy_key}", "MODE": "fast"}},
			env: map[string]string{"GITHUB_TOKEN": "github_token"}, files: map[string]string{"gcloud.json": "gcp_sa"},
			agent: map[string]string{"AUTH": "Bearer ${credential:deploy_key}"},
			ids:   []string{"deploy_key", "gcp_sa", "github_token"}},
		{name: "agent variable not granted",
			req:     Request{Agent: "cli", Command: "deploy", Env: map[string]string{"AUTH": "${credential:deploy_key}"}},
			errCode: CodeNotGranted, errText: `(env.AUTH references it)`},
		{name: "agent variable with a bad reference",
			req:     Request{Agent: "cli", Command: "deploy", Env: map[string]string{"AUTH": "${credential:Bad}"}},
			errCode: CodeUnknown, errText: `env.AUTH: ${credential:Bad} is not a credential reference`},
	} {
		p, err := c.Plan(tc.req)
		if tc.errCode != "" {
			var be *Error
			if !errors.As(err, &be) || be.Code != tc.errCode || !strings.Contains(be.Reason, tc.errText) {
				t.Errorf("%s: err %v, want %s %q", tc.name, err, tc.errCode, tc.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.agent == nil {
			tc.agent = map[string]string{}
		}
		if !reflect.DeepEqual(p.Env, tc.env) || !reflect.DeepEqual(p.Files, tc.files) || !reflect.DeepEqual(p.Agent, tc.agent) || !reflect.DeepEqual(p.IDs, tc.ids) {
			t.Errorf("%s: got env %v files %v agent %v ids %v\nwant env %v files %v agent %v ids %v", tc.name, p.Env, p.Files, p.Agent, p.IDs, tc.env, tc.files, tc.agent, tc.ids)
		}
	}
}

func memStore(t *testing.T) *keyring.Memory {
	t.Helper()
	m := keyring.NewMemory()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for id, v := range map[string]string{"github_token": ghValue, "gcp_sa": gcpValue, "deploy_key": "deploy-key-value-xyz"} {
		if err := Set(m, id, v, now); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestLease(t *testing.T) {
	t.Parallel()
	m := memStore(t)
	b := &Broker{Store: m, Dir: filepath.Join(t.TempDir(), "cred")}
	p := &Grant{
		Env:   map[string]string{"GITHUB_TOKEN": "github_token", "GATEHOUSE_CRED_DEPLOY_KEY": "deploy_key"},
		Files: map[string]string{"gcloud.json": "gcp_sa", "gh.txt": "github_token"},
		Agent: map[string]string{"AUTH": "Bearer ${credential:deploy_key}"},
		IDs:   []string{"deploy_key", "gcp_sa", "github_token"},
	}
	l, err := b.Lease(p, LeaseOptions{ExecID: "e1", DirInSandbox: "/run/gatehouse/cred"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"AUTH=Bearer deploy-key-value-xyz",
		"GATEHOUSE_CRED_DEPLOY_KEY=deploy-key-value-xyz",
		"GATEHOUSE_CRED_DIR=/run/gatehouse/cred",
		"GITHUB_TOKEN=" + ghValue,
	}
	if !reflect.DeepEqual(l.Env, want) {
		t.Errorf("env %q, want %q", l.Env, want)
	}
	if !reflect.DeepEqual(l.IDs, p.IDs) || len(l.Secrets) != 3 {
		t.Errorf("ids %v, secrets %d", l.IDs, len(l.Secrets))
	}
	if filepath.Dir(l.Dir) != b.Dir || !strings.HasPrefix(filepath.Base(l.Dir), strconv.Itoa(os.Getpid())+"-e1") {
		t.Errorf("dir %s", l.Dir)
	}
	for name, v := range map[string]string{"gcloud.json": gcpValue, "gh.txt": ghValue} {
		f := filepath.Join(l.Dir, name)
		got, err := os.ReadFile(f)
		if err != nil || string(got) != v {
			t.Errorf("%s: %v", name, err)
		}
		if fi, err := os.Stat(f); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o400 {
			t.Errorf("%s: mode %v, %v; want 0400", name, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(b.Dir); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
		t.Errorf("parent mode %v, %v", fi.Mode(), err)
	}
	dir := l.Dir
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Release: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}

	// Without files, no directory and no GATEHOUSE_CRED_DIR.
	l, err = b.Lease(&Grant{Env: map[string]string{"GITHUB_TOKEN": "github_token"}, IDs: []string{"github_token"}}, LeaseOptions{ExecID: "e2"})
	if err != nil || l.Dir != "" || len(l.Env) != 1 {
		t.Errorf("lease without files: %+v, %v", l, err)
	}
}

// A directory left by a gatehouse that was killed is removed by the next
// lease.
func TestLeaseSweeps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no sweeping on Windows")
	}
	t.Parallel()
	b := &Broker{Store: memStore(t), Dir: filepath.Join(t.TempDir(), "cred")}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := filepath.Join(b.Dir, strconv.Itoa(cmd.Process.Pid)+"-old")
	if err := os.MkdirAll(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dead, "gcloud.json"), []byte(gcpValue), 0o400)
	live := filepath.Join(b.Dir, strconv.Itoa(os.Getppid())+"-other")
	os.MkdirAll(live, 0o700)
	l, err := b.Lease(&Grant{Files: map[string]string{"f": "gcp_sa"}, IDs: []string{"gcp_sa"}}, LeaseOptions{ExecID: "new"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead process's directory is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's directory was removed: %v", err)
	}
}

func TestLeaseErrors(t *testing.T) {
	t.Parallel()
	m := memStore(t)
	m.Set("short", "1234567") // bypasses Set's check, as another tool could
	m.Set("nul", "abcdefgh\x00ijk")
	b := &Broker{Store: m, Dir: filepath.Join(t.TempDir(), "cred")}
	for _, tc := range []struct {
		id, code, reason, hint string
		store                  keyring.Store
	}{
		{"missing", CodeUnknown, `credential "missing" is not in the keychain; nothing ran`, "store it with 'gatehouse cred set missing'", nil},
		{"short", CodeInvalid, `credential "short" cannot be used: the value is 7 bytes; a credential needs at least 8`, "gatehouse cred set short", nil},
		{"nul", CodeInvalid, `credential "nul" cannot be used: the value contains a NUL byte`, "", nil},
		{"github_token", CodeUnavailable, `credential "github_token" could not be read: keychain unavailable: the login keyring is locked; nothing ran`, "unlock it",
			&keyring.Memory{Err: &keyring.UnavailableError{Cause: "the login keyring is locked", Hint: "unlock it"}}},
	} {
		bb := b
		if tc.store != nil {
			bb = &Broker{Store: tc.store, Dir: b.Dir}
		}
		_, err := bb.Lease(&Grant{Env: map[string]string{"X": tc.id}, IDs: []string{tc.id}}, LeaseOptions{ExecID: "e"})
		var be *Error
		if !errors.As(err, &be) || be.Code != tc.code || be.ID != tc.id || !strings.Contains(be.Reason, tc.reason) || !strings.Contains(be.Hint, tc.hint) {
			t.Errorf("%s: %#v, want %s %q hint %q", tc.id, err, tc.code, tc.reason, tc.hint)
		}
		if err != nil && (strings.Contains(err.Error(), "1234567") || strings.Contains(err.Error(), "abcdefgh")) {
			t.Errorf("%s: the error holds the value: %v", tc.id, err)
		}
	}
}

func TestStore(t *testing.T) {
	t.Parallel()
	m := keyring.NewMemory()
	m.Set("audit/hmac-key/x", "not a credential")
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := Set(m, "github_token", ghValue, now); err != nil {
		t.Fatal(err)
	}
	m.Set("other_tool", "set by secret-tool") // no set time
	got, err := List(m)
	want := []Entry{{ID: "github_token", SetAt: now}, {ID: "other_tool"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("List = %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct{ id, value, err string }{
		{"Bad", ghValue, `"Bad" is not a credential id`},
		{"dir", ghValue, `"dir" is not a credential id`},
		{"x", "short", "the value is 5 bytes; a credential needs at least 8"},
		{"x", "", "the value is 0 bytes"},
		{"x", "with\x00nul-byte", "NUL byte"},
		{"x", strings.Repeat("v", MaxValueLen+1), "larger than 65536 bytes"},
	} {
		err := Set(m, tc.id, tc.value, now)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Set(%q): %v, want %q", tc.id, err, tc.err)
		}
		if err != nil && len(tc.value) > 2 && strings.Contains(err.Error(), tc.value) {
			t.Errorf("Set(%q): the error holds the value", tc.id)
		}
	}
	if err := Remove(m, "github_token"); err != nil {
		t.Fatal(err)
	}
	if err := Remove(m, "github_token"); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("second Remove: %v", err)
	}
	names, _ := m.List()
	if want := []string{"audit/hmac-key/x", "other_tool"}; !reflect.DeepEqual(names, want) {
		t.Errorf("after Remove: %q, want %q", names, want)
	}
	// An unavailable keychain says so.
	u := &keyring.Memory{Err: &keyring.UnavailableError{Cause: "no D-Bus session bus", Hint: "start one"}}
	if _, err := List(u); !errors.Is(err, keyring.ErrUnavailable) || keyring.Hint(err) != "start one" {
		t.Errorf("List on an unavailable keychain: %v", err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("unix paths")
	}
	rt := t.TempDir()
	if got := DefaultDir(rt); got != filepath.Join(rt, "gatehouse-cred") {
		t.Errorf("DefaultDir(%q) = %q", rt, got)
	}
	if got := DefaultDir(""); !strings.HasPrefix(filepath.Base(got), "gatehouse-cred-") {
		t.Errorf("DefaultDir(\"\") = %q", got)
	}
	if got := DefaultDir("/nonexistent/run"); filepath.Dir(got) != os.TempDir() {
		t.Errorf("DefaultDir of a missing runtime dir = %q", got)
	}
	// A parent others can enter is refused.
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	b := &Broker{Store: memStore(t), Dir: open}
	if _, err := b.Lease(&Grant{Files: map[string]string{"f": "gcp_sa"}, IDs: []string{"gcp_sa"}}, LeaseOptions{ExecID: "e"}); err == nil || !strings.Contains(err.Error(), "is open to other users") {
		t.Errorf("lease under an open directory: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(t.TempDir(), link)
	b.Dir = link
	if _, err := b.Lease(&Grant{Files: map[string]string{"f": "gcp_sa"}, IDs: []string{"gcp_sa"}}, LeaseOptions{ExecID: "e"}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("lease under a symlink: %v", err)
	}
}

// A masked credential reaches the command as one placeholder, wherever it
// goes (a mapped variable, a file, a reference, an agent's variable),
// and the real value only reaches the redactor and the proxy's list.
func TestLeaseMasked(t *testing.T) {
	t.Parallel()
	m := memStore(t)
	b := &Broker{Store: m, Dir: filepath.Join(t.TempDir(), "cred")}
	c := &Config{
		Env:    map[string]string{"GITHUB_TOKEN": "github_token"},
		Files:  map[string]string{"gh.txt": "github_token", "gcloud.json": "gcp_sa"},
		Masked: map[string][]string{"github_token": {"api.github.com", "github.com"}},
	}
	p, err := c.Plan(Request{Agent: "cli", Command: "echo $GATEHOUSE_CRED_GITHUB_TOKEN", Env: map[string]string{"AUTH": "Bearer ${credential:github_token}"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"github_token": {"api.github.com", "github.com"}}; !reflect.DeepEqual(p.Masked, want) {
		t.Fatalf("grant masked %v, want %v", p.Masked, want)
	}
	l, err := b.Lease(p, LeaseOptions{ExecID: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if len(l.Masked) != 1 || l.Masked[0].ID != "github_token" || l.Masked[0].Value != ghValue {
		t.Fatalf("masked %+v", l.Masked)
	}
	ph := l.Masked[0].Placeholder
	if ph == ghValue || len(ph) != len(ghValue) || !strings.HasPrefix(ph, "ghp_") {
		t.Errorf("placeholder %q for a value of %d bytes", ph, len(ghValue))
	}
	if !reflect.DeepEqual(l.IDs, []string{"gcp_sa"}) || !reflect.DeepEqual(l.MaskedIDs(), []string{"github_token"}) {
		t.Errorf("injected %v, masked %v", l.IDs, l.MaskedIDs())
	}
	for _, kv := range l.Env {
		if strings.Contains(kv, ghValue) {
			t.Errorf("the value reached the environment: %s", strings.SplitN(kv, "=", 2)[0])
		}
	}
	for _, want := range []string{"AUTH=Bearer " + ph, "GATEHOUSE_CRED_GITHUB_TOKEN=" + ph, "GITHUB_TOKEN=" + ph} {
		if !slices.Contains(l.Env, want) {
			t.Errorf("env %q has no %q", l.Env, want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(l.Dir, "gh.txt")); string(got) != ph {
		t.Errorf("file holds %q, want the placeholder", got)
	}
	if got, _ := os.ReadFile(filepath.Join(l.Dir, "gcloud.json")); string(got) != gcpValue {
		t.Errorf("the injected file holds %q", got)
	}
	if len(l.Secrets) != 2 {
		t.Errorf("secrets for the redactor: %d, want both values", len(l.Secrets))
	}
	// Each execution gets its own placeholder.
	l2, err := b.Lease(p, LeaseOptions{ExecID: "e2"})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release()
	if l2.Masked[0].Placeholder == ph {
		t.Error("two executions got the same placeholder")
	}
}

func TestPlanRequireMask(t *testing.T) {
	t.Parallel()
	c := &Config{
		Env:         map[string]string{"GITHUB_TOKEN": "github_token"},
		Masked:      map[string][]string{"github_token": {"github.com"}},
		RequireMask: true,
	}
	if _, err := c.Plan(Request{Agent: "cli", Command: "echo ${GATEHOUSE_CRED_GITHUB_TOKEN}"}); err != nil {
		t.Errorf("masked reference: %v", err)
	}
	c.Grants = map[string][]string{"npm": {"cli"}}
	_, err := c.Plan(Request{Agent: "cli", Command: "echo $GATEHOUSE_CRED_NPM"})
	var be *Error
	if !errors.As(err, &be) || be.Code != CodeMaskRequired || be.ID != "npm" || !strings.Contains(be.Reason, "policy.credential_mode is mask") {
		t.Errorf("unmasked reference: %v", err)
	}
}

// An ssh_key file ends with a newline, which OpenSSH needs and a value
// read from standard input has lost; other files are written as stored.
func TestLeaseSSHKey(t *testing.T) {
	t.Parallel()
	m := keyring.NewMemory()
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----"
	for id, v := range map[string]string{"deploy_ssh": key, "other": "other-value-no-newline"} {
		if err := Set(m, id, v, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	c := &Config{Files: map[string]string{"id_deploy": "deploy_ssh", "plain": "other"}, SSHKeys: []string{"id_deploy"}}
	p, err := c.Plan(Request{Agent: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.SSHKeys, []string{"id_deploy"}) {
		t.Errorf("grant's ssh keys %v", p.SSHKeys)
	}
	b := &Broker{Store: m, Dir: filepath.Join(t.TempDir(), "cred")}
	l, err := b.Lease(p, LeaseOptions{ExecID: "e1", DirInSandbox: "/run/gatehouse/cred"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if want := []string{"/run/gatehouse/cred/id_deploy"}; !reflect.DeepEqual(l.SSHKeys, want) {
		t.Errorf("lease's ssh keys %v, want %v", l.SSHKeys, want)
	}
	for name, want := range map[string]string{"id_deploy": key + "\n", "plain": "other-value-no-newline"} {
		got, err := os.ReadFile(filepath.Join(l.Dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}
