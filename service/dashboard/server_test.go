package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// fakeService is the service's side, recorded.
type fakeService struct {
	mu       sync.Mutex
	pending  []api.Approval
	answers  []api.AnswerRequest
	ws       []api.Workspace
	added    []string
	removed  []string
	loaded   *policy.Loaded
	notices  chan api.StreamNotice
	addError error
	// ports are the session networks; portReqs the opens and closes
	// asked (sessions_test.go).
	ports    []api.SessionNetwork
	portReqs []string
}

func (f *fakeService) Approvals() []api.Approval {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.Approval(nil), f.pending...)
}

func (f *fakeService) Answer(req api.AnswerRequest) api.AnswerResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, req)
	resp := api.AnswerResponse{OK: true}
	for _, a := range f.pending {
		if a.ID == req.ID && a.Kind == api.ApprovalEgress && (req.Answer == api.AnswerAlways || req.Answer == api.AnswerDenyAlways) {
			resp.SavedEntry, resp.SavedFile = cmp.Or(req.Entry, a.SaveEntry), "/state/rules.yaml"
		}
	}
	return resp
}

func (f *fakeService) Subscribe(ctx context.Context) ([]api.StreamNotice, <-chan api.StreamNotice) {
	c := make(chan api.StreamNotice)
	go func() {
		defer close(c)
		for {
			select {
			case n := <-f.notices:
				c <- n
			case <-ctx.Done():
				return
			}
		}
	}()
	return []api.StreamNotice{{Type: api.NoticeService, State: "running"}}, c
}

func (f *fakeService) Workspaces() []api.Workspace { return f.ws }

func (f *fakeService) AddWorkspace(dir, by string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.addError != nil {
		return "", f.addError
	}
	f.added = append(f.added, dir+" by "+by)
	return dir, nil
}

func (f *fakeService) RemoveWorkspace(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, dir)
	return nil
}

func (f *fakeService) Config() *policy.Loaded { return f.loaded }

// Explain analyses and decides for real, as the pipeline's Explain does
// (without its workspace checks).
func (f *fakeService) Explain(ctx context.Context, req api.ExecRequest) (string, error) {
	t := analysis.Analyze(req.Command, analysis.Options{Dir: "/"})
	var b strings.Builder
	policy.WriteText(&b, t, policy.Decide(t, &f.loaded.Config.Policy))
	return b.String(), nil
}

func (f *fakeService) answered() []api.AnswerRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.AnswerRequest(nil), f.answers...)
}

// hostile is a command and its output that try to be more than text: a
// script element, terminal escapes (colour, clear screen, OSC 52 clipboard
// write) and a bidi override that reverses what follows.
const hostile = "echo '<script>alert(1)</script>' \x1b[31mred\x1b[2J \x1b]52;c;ZXZpbA==\x07 \u202eevil\u202c <img src=x onerror=alert(2)>"

// fixture is a dashboard on a real listener over a real audit trail.
type fixture struct {
	t     testing.TB
	srv   *Server
	svc   *fakeService
	trail *audit.Store
	base  string // http://127.0.0.1:PORT
	// launchDir is where the sign-in pages are written.
	launchDir string
	mu        sync.Mutex
	skew      time.Duration
}

func newFixture(t testing.TB, events int) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := audit.Open(context.Background(), audit.Options{Path: filepath.Join(dir, "audit.db"), Keys: keyring.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	start := time.Now().Add(-time.Hour)
	for i := range events {
		appendEvent(t, st, fmt.Sprintf("%032x", i+1), start.Add(time.Duration(i)*time.Second), fmt.Sprintf("echo %d", i), []byte(fmt.Sprintf("%d\n", i)))
	}
	user := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(user, []byte("policy:\n  exec_timeout_seconds: 77\n  rules:\n    - name: ask-push\n      action: ask\n      command: [git]\n      args:\n        - seq: [push]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := policy.Load(policy.LoadOptions{UserFile: user, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, trail: st}
	f.svc = &fakeService{loaded: l, notices: make(chan api.StreamNotice, 8),
		ws: []api.Workspace{{Path: "/w/policy", Origin: api.WorkspacePolicy}, {Path: "/w/trusted", Origin: api.WorkspaceTrusted, By: "cli", Added: time.Now()}}}
	f.launchDir = filepath.Join(dir, "run", "dashboard")
	f.srv, err = New(Options{Service: f.svc, Trail: st, Now: f.time, LaunchDir: f.launchDir})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Listen(ln); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	f.base = fmt.Sprintf("http://127.0.0.1:%d", f.srv.Port())
	return f
}

// time is the dashboard's clock: now plus the skew a test sets.
func (f *fixture) time() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Now().Add(f.skew)
}

func appendEvent(t testing.TB, st *audit.Store, id string, at time.Time, command string, stdout []byte) {
	t.Helper()
	code := 0
	err := st.Append(context.Background(), audit.Record{
		Event: api.Event{ID: id, Time: at.UTC(), Agent: "claude-code", Surface: api.SurfaceAgentHook, ActionType: api.ActionShellExecute,
			Decision: "allow", Status: "completed", SandboxMode: "bubblewrap", ExitCode: &code, DurationMS: 12, TimeoutSeconds: 120,
			CommandHash: strings.Repeat("ab", 32), ResolvedCmds: []string{"echo"}, PinnedScripts: []api.Pin{}, Credentials: []string{"github_token"},
			Egress: api.Egress{Denied: 1, DeniedHosts: []string{"evil.example:443"}}, Dialect: "bash",
			Limits: &api.Limits{Pids: true, NProc: false, Memory: false, Tmpfs: true, FileSize: true, DaemonKill: true},
			Output: api.Output{StdoutBytes: int64(len(stdout)), RedactionCount: 1}},
		Command: command,
		Stdout:  stdout,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// client is a browser: it keeps cookies and does not follow redirects.
func (f *fixture) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login signs c in with a new code, posted as the sign-in page posts it,
// and returns the code.
func (f *fixture) login(c *http.Client) string {
	f.t.Helper()
	l, err := f.srv.Login()
	if err != nil {
		f.t.Fatal(err)
	}
	resp, body := f.postCode(c, l.Code, "null", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<meta http-equiv="refresh" content="0;url=/executions">`) {
		f.t.Fatalf("login: %s\n%s", resp.Status, body)
	}
	return l.Code
}

// postCode posts a login code with origin as its Origin header ("" for
// none); mod changes the request.
func (f *fixture) postCode(c *http.Client, code, origin string, mod func(*http.Request)) (*http.Response, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.base+"/login", strings.NewReader(url.Values{"code": {code}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if mod != nil {
		mod(req)
	}
	return f.do(c, req)
}

func (f *fixture) do(c *http.Client, req *http.Request) (*http.Response, string) {
	f.t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func (f *fixture) get(c *http.Client, u string, mod func(*http.Request)) *http.Response {
	f.t.Helper()
	resp, _ := f.getBody(c, u, mod)
	return resp
}

func (f *fixture) getBody(c *http.Client, u string, mod func(*http.Request)) (*http.Response, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if mod != nil {
		mod(req)
	}
	return f.do(c, req)
}

// post sends a form as the dashboard's pages do, with origin as its
// Origin header ("" for none).
func (f *fixture) post(c *http.Client, path, origin string, form url.Values) (*http.Response, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return f.do(c, req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the token from a page's form.
func (f *fixture) csrf(c *http.Client, page string) string {
	f.t.Helper()
	_, body := f.getBody(c, f.base+page, nil)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		f.t.Fatalf("%s has no CSRF field:\n%s", page, body)
	}
	return m[1]
}

// Every answer is refused unless its Host names the dashboard exactly:
// a page on another name that resolves to 127.0.0.1 (DNS rebinding) gets
// nothing, not even the login page, and a code it presents stays unused.
func TestForeignHostRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	c := f.client()
	f.login(c)
	port := f.srv.Port()
	fresh, _ := f.srv.Login()
	for _, host := range []string{"evil.example", fmt.Sprintf("evil.example:%d", port), fmt.Sprintf("127.0.0.1:%d", port+1),
		fmt.Sprintf("127.0.0.2:%d", port), fmt.Sprintf("[::1]:%d", port), fmt.Sprintf("localhost.:%d", port), "127.0.0.1", "localhost"} {
		sethost := func(r *http.Request) { r.Host = host }
		for _, path := range []string{"/executions", "/login", "/static/app.js", "/stream"} {
			resp, body := f.getBody(c, f.base+path, sethost)
			if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(body, "Executions") {
				t.Errorf("Host %q %s: %s, want 421", host, path, resp.Status)
			}
			if resp.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("Host %q %s: refused without a CSP", host, path)
			}
		}
		for _, origin := range []string{"null", "http://" + host} {
			if resp, _ := f.postCode(f.client(), fresh.Code, origin, sethost); resp.StatusCode != http.StatusMisdirectedRequest || resp.Header.Get("Set-Cookie") != "" {
				t.Errorf("Host %q: posting a code from %s: %s, want 421", host, origin, resp.Status)
			}
		}
	}
	// The code presented under the foreign Hosts was not spent.
	if resp, _ := f.postCode(f.client(), fresh.Code, "null", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("a code presented under a foreign Host was spent: %s", resp.Status)
	}
	for _, host := range []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("localhost:%d", port)} {
		c := f.client()
		l, _ := f.srv.Login()
		sethost := func(r *http.Request) { r.Host = host }
		if resp, _ := f.postCode(c, l.Code, "http://"+host, sethost); resp.StatusCode != http.StatusOK {
			t.Errorf("Host %q: login %s, want 200", host, resp.Status)
		}
		if resp := f.get(c, f.base+"/executions", sethost); resp.StatusCode != http.StatusOK {
			t.Errorf("Host %q: %s, want 200", host, resp.Status)
		}
	}
}

// Without the session cookie every page and action is refused.
func TestNoCookieRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	for _, path := range []string{"/", "/executions", "/executions/rows", "/executions/" + fmt.Sprintf("%032x", 1), "/approvals", "/workspaces", "/policy", "/doctor", "/stream"} {
		for _, cookie := range []string{"", "gatehouse_session=forged", "gatehouse_session="} {
			resp, body := f.getBody(f.client(), f.base+path, func(r *http.Request) {
				if cookie != "" {
					r.Header.Set("Cookie", cookie)
				}
			})
			if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "echo 1") {
				t.Errorf("GET %s with cookie %q: %s, want 401", path, cookie, resp.Status)
			}
		}
	}
	resp, _ := f.post(f.client(), "/approvals/answer", f.base, url.Values{"id": {"a1"}, "answer": {"once"}})
	if resp.StatusCode != http.StatusUnauthorized || len(f.svc.answered()) != 0 {
		t.Errorf("POST without a session: %s, %d answers", resp.Status, len(f.svc.answered()))
	}
}

// A login code works once, within its five minutes, posted from the
// sign-in page (Origin null) or the dashboard's own form, and from no
// other origin; the session cookie is HttpOnly and SameSite=Strict.
func TestLoginCodeWorksOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	l, err := f.srv.Login()
	if err != nil {
		t.Fatal(err)
	}
	if l.URL != f.base+"/login" || len(l.Code) != 43 {
		t.Fatalf("login %+v", l)
	}
	c := f.client()
	// Another origin, or none, does not spend it.
	for _, origin := range []string{"", "http://evil.example", strings.Replace(f.base, "127.0.0.1", "localhost", 1), "file://"} {
		if resp, _ := f.postCode(c, l.Code, origin, nil); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("Origin %q: %s, want 403", origin, resp.Status)
		}
	}
	resp, body := f.postCode(c, l.Code, "null", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<meta http-equiv="refresh" content="0;url=/executions">`) {
		t.Fatalf("first use: %s\n%s", resp.Status, body)
	}
	sc := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"gatehouse_session=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
	if resp := f.get(c, f.base+"/executions", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %s", resp.Status)
	}
	other := f.client()
	if resp, _ := f.postCode(other, l.Code, f.base, nil); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("second use: %s, Set-Cookie %q", resp.Status, resp.Header.Get("Set-Cookie"))
	}
	if resp := f.get(other, f.base+"/executions", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after a refused login: %s", resp.Status)
	}
	for _, bad := range []string{"", strings.Repeat("A", 43)} {
		if resp, _ := f.postCode(f.client(), bad, f.base, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("code %q: %s", bad, resp.Status)
		}
	}
	// The dashboard's own form: typed in, posted from its origin.
	typed, _ := f.srv.Login()
	c2 := f.client()
	if resp, body := f.getBody(c2, f.base+"/login", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, `<form method="post" action="/login"`) {
		t.Errorf("the sign-in form: %s\n%s", resp.Status, body)
	}
	if resp, _ := f.postCode(c2, " "+typed.Code+"\n", f.base, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("a typed code: %s", resp.Status)
	}
	if resp := f.get(c2, f.base+"/executions", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("signed in by the form: %s", resp.Status)
	}
	// Expired: six minutes later.
	late, _ := f.srv.Login()
	f.mu.Lock()
	f.skew = 6 * time.Minute
	f.mu.Unlock()
	if resp, _ := f.postCode(f.client(), late.Code, "null", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("expired code: %s", resp.Status)
	}
}

// A code in the address is not taken: an address is what an opener and
// a browser keep in their argument lists, which every local user reads.
// GET /login shows the form and leaves the code unspent.
func TestLoginCodeNotInAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	l, _ := f.srv.Login()
	c := f.client()
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		resp := f.get(c, f.base+"/login?code="+l.Code, func(r *http.Request) { r.Method = method })
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s /login?code=: %s, Set-Cookie %q", method, resp.Status, resp.Header.Get("Set-Cookie"))
		}
	}
	if resp := f.get(c, f.base+"/executions", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("signed in by an address: %s", resp.Status)
	}
	if resp, _ := f.postCode(c, l.Code, "null", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the code shown in an address was spent: %s", resp.Status)
	}
}

// Login writes a sign-in page, 0600 in a 0700 directory, that posts the
// code to this dashboard; the address it returns holds no code; the page
// goes when its code is spent, when it expires, and when the dashboard
// stops. A directory that is a link is refused.
func TestLoginPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	l, err := f.srv.Login()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(l.URL, l.Code) || filepath.Dir(l.LaunchFile) != f.launchDir || strings.Contains(l.LaunchFile, l.Code) {
		t.Fatalf("login %+v: the address or the page's path holds the code, or the page is not in %s", l, f.launchDir)
	}
	for path, want := range map[string]os.FileMode{f.launchDir: 0o700 | os.ModeDir, l.LaunchFile: 0o600} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode(), err, want)
		}
	}
	b, err := os.ReadFile(l.LaunchFile)
	if err != nil {
		t.Fatal(err)
	}
	form := regexp.MustCompile(`<form method="post" action="([^"]+)">\s*<input type="hidden" name="code" value="([^"]+)">`).FindStringSubmatch(string(b))
	if form == nil || form[1] != f.base+"/login" || form[2] != l.Code || !strings.Contains(string(b), "document.forms[0].submit()") {
		t.Fatalf("the sign-in page:\n%s", b)
	}
	// Posted as the browser posts it from the file.
	c := f.client()
	if resp, _ := f.postCode(c, form[2], "null", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("posting the page's code: %s", resp.Status)
	}
	if _, err := os.Lstat(l.LaunchFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the spent code's page is still there: %v", err)
	}
	// Expired: the next Login removes its page.
	late, _ := f.srv.Login()
	f.mu.Lock()
	f.skew = 6 * time.Minute
	f.mu.Unlock()
	kept, _ := f.srv.Login()
	if _, err := os.Lstat(late.LaunchFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the expired code's page is still there: %v", err)
	}
	if _, err := os.Lstat(kept.LaunchFile); err != nil {
		t.Errorf("the new page: %v", err)
	}
	// No more than maxCodes wait: the oldest code goes, and its page.
	for range maxCodes + 4 {
		if _, err := f.srv.Login(); err != nil {
			t.Fatal(err)
		}
	}
	if pages, _ := os.ReadDir(f.launchDir); len(pages) != maxCodes {
		t.Errorf("%d sign-in pages for at most %d codes", len(pages), maxCodes)
	}
	// A dashboard that stops takes its pages with it.
	s, _ := New(Options{Service: f.svc, LaunchDir: filepath.Join(t.TempDir(), "dashboard")})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	s.Listen(ln)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	left, err := s.Login()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left.LaunchFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the page outlived its dashboard: %v", err)
	}
	// A dashboard whose directory is a link: no page.
	dir := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "dashboard")); err != nil {
		t.Fatal(err)
	}
	s, _ = New(Options{Service: f.svc, LaunchDir: filepath.Join(dir, "dashboard")})
	ln, _ = net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	s.Listen(ln)
	if r, err := s.Login(); err == nil || r.Code != "" {
		t.Errorf("a linked directory: %+v, %v; want an error", r, err)
	}
}

// A POST needs this origin and the session's CSRF token. A form on a
// second local origin, which the test serves, posts to the dashboard with
// the user's cookie (as a browser without SameSite would): refused.
func TestCrossOriginPostRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	f.svc.pending = []api.Approval{{ID: "a1", Answers: []string{"once", "deny"}}}
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<form method="post" action="%s/approvals/answer"><input name="id" value="a1"><input name="answer" value="once"></form>`, f.base)
	}))
	defer evil.Close()
	c := f.client()
	f.login(c)
	token := f.csrf(c, "/approvals")
	for _, tc := range []struct {
		name, origin, csrf string
	}{
		{"second origin", evil.URL, token},
		{"second origin, localhost", strings.Replace(evil.URL, "127.0.0.1", "localhost", 1), token},
		{"no origin", "", token},
		{"null origin", "null", token},
		{"no token", f.base, ""},
		{"wrong token", f.base, token[:len(token)-2] + "xx"},
	} {
		form := url.Values{"id": {"a1"}, "answer": {"once"}}
		if tc.csrf != "" {
			form.Set("csrf", tc.csrf)
		}
		resp, _ := f.post(c, "/approvals/answer", tc.origin, form)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %s, want 403", tc.name, resp.Status)
		}
	}
	if n := len(f.svc.answered()); n != 0 {
		t.Fatalf("%d answers went through", n)
	}
	resp, _ := f.post(c, "/approvals/answer", f.base, url.Values{"id": {"a1"}, "answer": {"once"}, "csrf": {token}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("same origin with token: %s", resp.Status)
	}
	if got := f.svc.answered(); len(got) != 1 || got[0] != (api.AnswerRequest{ID: "a1", Answer: "once", By: api.ByDashboard}) {
		t.Errorf("answers %+v", got)
	}
	// Another session's token does not do.
	c2 := f.client()
	f.login(c2)
	if resp, _ := f.post(c2, "/approvals/answer", f.base, url.Values{"id": {"a1"}, "answer": {"once"}, "csrf": {token}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another session's token: %s", resp.Status)
	}
}

// What agents wrote is shown as text: the script, the escapes and the
// bidi override are inert in the list, the card and the live rows.
func TestHostileTextInert(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	id := strings.Repeat("e", 32)
	appendEvent(t, f.trail, id, time.Now(), hostile, []byte("out: "+hostile+"\n"))
	c := f.client()
	f.login(c)
	for _, path := range []string{"/executions", "/executions/" + id} {
		resp, body := f.getBody(c, f.base+path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
		for _, raw := range []string{"<script>alert", "<img", "\x1b", "\x07", "\u202e"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s holds %q raw", path, raw)
			}
		}
		for _, shown := range []string{`&lt;script&gt;alert(1)&lt;/script&gt;`, `\x1b[31mred`, `\u202eevil`} {
			if !strings.Contains(body, shown) {
				t.Errorf("%s does not show %q", path, shown)
			}
		}
	}
	_, body := f.getBody(c, f.base+"/executions/"+id, nil)
	if n := strings.Count(body, `\x1b]52;c;ZXZpbA==\x07`); n < 2 { // the command and stdout (and its tree)
		t.Errorf("the OSC 52 sequence is shown %d times, want at least 2", n)
	}
	_, js := f.getBody(c, f.base+"/executions/rows", nil)
	var rows struct{ Rows []Row }
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows.Rows) != 1 {
		t.Fatalf("rows %q: %v", js, err)
	}
	if cmd := rows.Rows[0].Command; strings.ContainsAny(cmd, "\x1b\x07\u202e") || !strings.Contains(cmd, `\x1b[31m`) {
		t.Errorf("live row command %q", cmd)
	}
	app := f.get(c, f.base+"/static/app.js", nil)
	if app.StatusCode != http.StatusOK || !strings.HasPrefix(app.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("app.js: %s %s", app.Status, app.Header.Get("Content-Type"))
	}
}

// Every answer carries the strict policy; the pages hold no inline script
// or style, and load nothing from elsewhere.
func TestStrictCSP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	c := f.client()
	f.login(c)
	inline := regexp.MustCompile(`<script>|<script [^>]*>[^<]|\son[a-z]+=|style=|<style|https?://`)
	for _, path := range []string{"/executions", "/executions/" + fmt.Sprintf("%032x", 1), "/approvals", "/workspaces", "/policy", "/doctor", "/nowhere", "/login"} {
		resp, body := f.getBody(c, f.base+path, nil)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.HasPrefix(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers %v", path, resp.Header)
		}
		if m := inline.FindString(body); m != "" {
			t.Errorf("%s holds %q", path, m)
		}
	}
}
