package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// requireBrowser is sandboxtest.Browser.
var requireBrowser = sandboxtest.Browser

// lockedBuf is a buffer several goroutines write.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dashUser is a user of a real service: a home, a configuration and the
// environment every gatehouse command of the test runs with.
type dashUser struct {
	t    *testing.T
	home string
	vars map[string]string
}

// env is the user's environment, with the variables of over in place of
// theirs. u.vars is not changed once the service runs.
func (u *dashUser) env(out, errw *lockedBuf, over ...string) *Env {
	vars := maps.Clone(u.vars)
	for i := 0; i+1 < len(over); i += 2 {
		vars[over[i]] = over[i+1]
	}
	return &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: errw, Getenv: func(k string) string { return vars[k] }}
}

// gatehouse runs a gatehouse command in this process and returns its exit
// status and output.
func (u *dashUser) gatehouse(ctx context.Context, args ...string) (ExitStatus, string, string) {
	return u.gatehouseEnv(ctx, nil, args...)
}

// gatehouseEnv is gatehouse with the variables of over (name, value, …)
// changed.
func (u *dashUser) gatehouseEnv(ctx context.Context, over []string, args ...string) (ExitStatus, string, string) {
	var out, errw lockedBuf
	code := run(ctx, u.env(&out, &errw, over...), args)
	return code, out.String(), errw.String()
}

// The dashboard end to end in a real headless Chromium against a real
// service: log in through the sign-in page gatehouse dashboard hands the
// opener (whose argument list, like every process's, never holds the
// login code), see a
// command run appear live, open its card, approve a held command from the
// Approvals page and see it run, add and remove a workspace, find the
// source of a user-file value on the policy page; a form on a second
// origin posting to the dashboard gets nothing done; and a browser
// without the session signs in with the code typed into the form. With -update it
// writes the screenshots in docs/.
func TestDashboardInChromium(t *testing.T) {
	chrome := requireBrowser(t)
	if err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").Run(); err != nil {
		if sandboxtest.Required() {
			t.Fatalf("REQUIRE_SANDBOX=1 but bubblewrap does not run here: %v", err)
		}
		t.Skip("bubblewrap does not run here")
	}
	dir := sandboxtest.Dir(t)
	run, err := os.MkdirTemp("/tmp", "ghd") // the socket's path must be short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	u := &dashUser{t: t, home: filepath.Join(dir, "home")}
	u.vars = map[string]string{
		"HOME": u.home, "XDG_CONFIG_HOME": filepath.Join(u.home, ".config"), "XDG_STATE_HOME": filepath.Join(u.home, ".local", "state"),
		"XDG_RUNTIME_DIR": run, "PATH": os.Getenv("PATH"), envKeyringService: testKeyringService,
		"DBUS_SESSION_BUS_ADDRESS": os.Getenv("DBUS_SESSION_BUS_ADDRESS"),
	}
	work := filepath.Join(u.home, "work", "app")
	for _, d := range []string{filepath.Join(u.home, "src"), filepath.Join(u.home, ".config", "gatehouse"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := `exec:
  sandbox:
    warm_pool: 0
policy:
  exec_timeout_seconds: 77
  rules:
    - name: ask-push
      action: ask
      reason: pushing is shared
      command: [git]
      args:
        - seq: [push]
`
	if err := os.WriteFile(filepath.Join(u.home, ".config", "gatehouse", "config.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	// The service.
	sctx, stopService := context.WithCancel(context.Background())
	served := make(chan string, 1)
	go func() {
		code, out, errs := u.gatehouse(sctx, "serve")
		served <- fmt.Sprintf("exit %d\n%s%s", code, out, errs)
	}()
	t.Cleanup(func() {
		stopService()
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Error("the service did not stop")
		}
	})
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		// No opener in PATH: it prints the code, says so, and succeeds.
		code, out, errs := u.gatehouseEnv(context.Background(), []string{"PATH", t.TempDir()}, "dashboard")
		if code == 0 {
			if !strings.Contains(errs, "no browser opened") || !strings.Contains(out, "login code:") {
				t.Errorf("without an opener: stdout %q stderr %q", out, errs)
			}
			break
		}
		if time.Since(start) > 20*time.Second {
			select {
			case s := <-served:
				t.Fatalf("the service ended: %s", s)
			default:
			}
			t.Fatalf("gatehouse dashboard: exit %d: %s%s", code, out, errs)
		}
	}
	// The opener: an xdg-open that keeps the argument list it was given,
	// as every local user can read it in /proc.
	opener := t.TempDir()
	script := "#!/bin/sh\ncat /proc/$$/cmdline > " + opener + "/cmdline.tmp && mv " + opener + "/cmdline.tmp " + opener + "/cmdline\n"
	if err := os.WriteFile(filepath.Join(opener, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := u.gatehouseEnv(context.Background(), []string{"PATH", opener + ":" + os.Getenv("PATH")}, "dashboard")
	m := regexp.MustCompile(`^dashboard: +(http://127\.0\.0\.1:[0-9]+)/login\nlogin code: +([A-Za-z0-9_-]{43})\nsign-in page: +(/\S+\.html)\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil || errs != "" {
		t.Fatalf("gatehouse dashboard: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	base, loginCode, signIn := m[1], m[2], m[3]
	var cmdline []byte
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if cmdline, err = os.ReadFile(filepath.Join(opener, "cmdline")); err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the opener never ran")
		}
	}
	if args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00"); len(args) != 3 || args[2] != signIn {
		t.Errorf("the opener's arguments %q, want the sign-in page %s alone", args, signIn)
	}
	if strings.Contains(string(cmdline), loginCode) {
		t.Errorf("the login code is in the opener's argument list: %q", cmdline)
	}
	if dir := filepath.Join(u.vars["XDG_RUNTIME_DIR"], "gatehouse", "dashboard"); filepath.Dir(signIn) != dir {
		t.Errorf("the sign-in page %s is not in %s", signIn, dir)
	}
	for path, want := range map[string]os.FileMode{filepath.Dir(signIn): 0o700 | os.ModeDir, signIn: 0o600} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode(), err, want)
		}
	}

	// The browser.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.WindowSize(1280, 860),
		chromedp.Flag("lang", "en-US"), chromedp.Flag("hide-scrollbars", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's own sandbox refuses root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 3*time.Minute)
	defer cancelTimeout()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	value := func(what string, a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(bctx, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	text := func(sel string) string {
		t.Helper()
		return value("reading "+sel, chromedp.Text(chromedp.CSS(sel)))
	}
	// submit does what sends a form, then waits for the page it leads to.
	submit := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		value(what, chromedp.Evaluate[string](`window.gatehouseOldPage = true; "ok"`))
		do(what, steps...)
		for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
			st, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`window.gatehouseOldPage ? "old" : document.readyState`))
			if st == "complete" {
				break
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s: no new page", what)
			}
		}
	}
	shots := map[string][]byte{}
	shot := func(name string) {
		t.Helper()
		b, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		shots[name] = b
	}

	// Log in as the opener would have the browser do: it opens the page
	// it was handed, which posts the code; the code is spent, its page
	// removed, and no process's argument list ever held it.
	do("logging in", chromedp.Navigate("file://"+signIn), chromedp.WaitVisible(chromedp.CSS("#executions")))
	loc := value("the address", chromedp.Location())
	if loc != base+"/executions" {
		t.Errorf("after login the address is %q", loc)
	}
	if _, err := os.Lstat(signIn); err == nil {
		t.Errorf("the sign-in page %s outlived its code", signIn)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), loginCode) {
			t.Errorf("%s holds the login code: %q", p, b)
		}
	}
	do("waiting for the live stream", chromedp.WaitVisible(chromedp.CSS("#live.on")))

	// A command run now appears without a reload.
	value("marking the page", chromedp.Evaluate[string](`window.gatehouseTestMarker = "same page"; "ok"`))
	if code, out, errs := u.gatehouse(context.Background(), "exec", "--cwd", filepath.Join(u.home, "src"), "--", "echo hello-from-the-dashboard-test; echo '<b>bold</b>' >&2"); code != 0 {
		t.Fatalf("gatehouse exec: exit %d: %s%s", code, out, errs)
	}
	row := `//table[@id="executions"]//td[@class="cmd"]/a[contains(., "hello-from-the-dashboard-test")]`
	do("waiting for the live row", chromedp.WaitVisible(chromedp.Search(row)))
	if marker := value("checking no reload happened", chromedp.Evaluate[string](`window.gatehouseTestMarker || "reloaded"`)); marker != "same page" {
		t.Errorf("the row came with a reload (%q)", marker)
	}
	for i := range 3 { // more rows for the picture
		u.gatehouse(context.Background(), "exec", "--cwd", filepath.Join(u.home, "src"), "--", fmt.Sprintf("ls -1 /usr | head -n %d", i+2))
	}
	u.gatehouse(context.Background(), "exec", "--cwd", filepath.Join(u.home, "src"), "--", "rm -rf ~")
	do("waiting for the denial", chromedp.WaitVisible(chromedp.Search(`//td[@class="cmd"]/a[contains(., "rm -rf ~")]`)),
		chromedp.Sleep(2500*time.Millisecond)) // the new rows' highlight fades
	shot("dashboard-executions")

	// Its card.
	submit("opening the card", chromedp.Click(chromedp.Search(row)))
	do("the card", chromedp.WaitVisible(chromedp.CSS("#verdict")))
	card := text("main")
	for _, want := range []string{"echo hello-from-the-dashboard-test", "audit verify:", "intact", "command sha256", "sandbox mode",
		"bubblewrap", "limits enforced", "pinned scripts", "credentials", "egress", "0 allowed, 0 denied",
		"hello-from-the-dashboard-test\n", "<b>bold</b>", "(surface cli)", "read posture", "Command tree", "decision: allow", "#0 echo"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	if bold := value("counting elements", chromedp.Evaluate[string](`String(document.querySelectorAll("main b").length)`)); bold != "0" {
		t.Errorf("the output's <b> became an element")
	}
	shot("dashboard-card")

	// A held command, approved from the Approvals page, then runs.
	held := make(chan string, 1)
	go func() {
		code, out, errs := u.gatehouse(context.Background(), "exec", "--cwd", filepath.Join(u.home, "src"), "--session", "s1", "--", "git push origin feature 2>/dev/null; echo pushed-after-approval")
		held <- fmt.Sprintf("exit %d\n%s%s", code, out, errs)
	}()
	c, err := serviceClient(u.env(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if as, _ := c.Approvals(context.Background()); len(as) == 1 {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the command was not held for approval")
		}
	}
	do("opening approvals", chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(chromedp.CSS("button.answer-once")))
	page := text("main")
	for _, want := range []string{"git push origin feature", "ask-push", "pushing is shared", "Approve for session", "Deny always"} {
		if !strings.Contains(page, want) {
			t.Errorf("the approvals page lacks %q:\n%s", want, page)
		}
	}
	if rule := value("the rule", chromedp.Value(chromedp.CSS(`textarea[name="rule"]`))); !strings.Contains(rule, "action: allow") {
		t.Errorf("the rule always saves reads %q", rule)
	}
	shot("dashboard-approvals")
	select {
	case s := <-held:
		t.Fatalf("the held command ended before its answer: %s", s)
	default:
	}
	submit("approving once", chromedp.Click(chromedp.CSS("button.answer-once")))
	if f := text("p.flash"); !strings.Contains(f, "Answered once") {
		t.Errorf("after approving: %q", f)
	}
	select {
	case s := <-held:
		if !strings.Contains(s, "pushed-after-approval") {
			t.Errorf("the approved command: %s", s)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the approved command did not run")
	}
	do("the answer in the history", chromedp.Navigate(base+"/approvals"),
		chromedp.WaitVisible(chromedp.Search(`//table[@id="history"]//td[contains(., "dashboard")]`)))

	// A workspace added and removed.
	trusted := func() []string { return workspaceStore(u.env(nil, nil), u.home).Roots() }
	do("opening workspaces", chromedp.Navigate(base+"/workspaces"), chromedp.WaitVisible(chromedp.CSS("#add-workspace")))
	submit("adding a workspace", chromedp.SendKeys(chromedp.CSS(`input[name="dir"]`), work), chromedp.Click(chromedp.CSS("#add-workspace")))
	if f := text("p.flash"); !strings.Contains(f, "Trusted "+work) || !slices.Contains(trusted(), work) {
		t.Fatalf("adding %s: %q, trusted %q", work, f, trusted())
	}
	submit("removing it", chromedp.Click(chromedp.Search(`//tr[td[contains(., "`+work+`")]]//button[contains(@class, "remove")]`)))
	if f := text("p.flash"); !strings.Contains(f, "Removed "+work) || slices.Contains(trusted(), work) {
		t.Errorf("removing %s: %q, trusted %q", work, f, trusted())
	}
	submit("refusing the home directory", chromedp.SendKeys(chromedp.CSS(`input[name="dir"]`), u.home), chromedp.Click(chromedp.CSS("#add-workspace")))
	if f := text("p.flash"); !strings.Contains(f, "Refused") || slices.Contains(trusted(), u.home) {
		t.Errorf("the home directory: %q", f)
	}

	// The policy page: the value the user file sets, with its source.
	do("opening policy", chromedp.Navigate(base+"/policy"), chromedp.WaitVisible(chromedp.CSS("#config")))
	v := text(`tr[data-field="policy.exec_timeout_seconds"]`)
	userFile := filepath.Join(u.home, ".config", "gatehouse", "config.yaml")
	if !strings.Contains(v, "77") || !strings.Contains(v, "user") || !strings.Contains(v, userFile+":5") {
		t.Errorf("policy.exec_timeout_seconds reads %q, want 77 from %s:5", v, userFile)
	}
	if r := text("#rules"); !strings.Contains(r, "rm-root") || !strings.Contains(r, "built-in") || !strings.Contains(r, "ask-push") {
		t.Errorf("the rules: %q", r)
	}

	// A second origin's form posts to the dashboard: the browser does not
	// send the SameSite=Strict cookie, and nothing is trusted.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/workspaces/add"><input name="dir" value="%s"><input name="csrf" value="guess"></form><script>document.getElementById("f").submit()</script>`, base, work)
	}))
	defer evil.Close()
	do("the second origin's form", chromedp.Navigate(evil.URL), chromedp.WaitVisible(chromedp.CSS("h1")))
	if h := text("h1"); !strings.Contains(h, "Sign in") && !strings.Contains(h, "Refused") {
		t.Errorf("the cross-origin post got %q", h)
	}
	if slices.Contains(trusted(), work) {
		t.Error("the cross-origin post trusted a workspace")
	}

	// A browser without the session (a new browser context: its own
	// cookies) signs in with the form and a code typed in, as from a
	// browser that cannot open the sign-in page.
	tctx, cancelTyped := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	defer cancelTyped()
	if err := chromedp.Do(tctx, chromedp.Navigate(base+"/executions"), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
		t.Fatalf("signed out: %v", err)
	}
	if h, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("h1"))); err != nil || !strings.Contains(h, "Sign in") {
		t.Fatalf("signed out: %q %v", h, err)
	}
	code, out, _ = u.gatehouse(context.Background(), "dashboard", "--no-open")
	typed := regexp.MustCompile(`login code: +(\S+)`).FindStringSubmatch(out)
	if code != 0 || typed == nil {
		t.Fatalf("gatehouse dashboard --no-open: exit %d: %q", code, out)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS("#sign-in")),
		chromedp.SendKeys(chromedp.CSS(`input[name="code"]`), typed[1]), chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#executions"))); err != nil {
		t.Fatalf("signing in with a typed code: %v", err)
	}

	if *update {
		for name, b := range shots {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
