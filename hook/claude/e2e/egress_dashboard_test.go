package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// requireBrowser is sandboxtest.Browser.
var requireBrowser = sandboxtest.Browser

// A routed Bash call reaches a server on the host's own loopback through
// Gatehouse's proxy: no allowlist entry covers it, and a person follows
// the service (the dashboard's page on the live stream), so the
// connection is held as an egress request, which warns that it is a
// service on this machine. Approved from the dashboard in Chromium with
// the local-service box ticked, the command gets the server's body, the
// model's tool_result shows it, and the execution's record says who let
// it through.
func TestEgressApprovedFromDashboard(t *testing.T) {
	w := newWorld(t)
	chrome := requireBrowser(t)
	w.StartService()
	w.Gatehouse("install", "--no-service")
	settings := w.sandboxSettings(false)

	var nonce [6]byte
	rand.Read(nonce[:])
	body := "served-on-the-host-" + hex.EncodeToString(nonce[:])
	host := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { fmt.Fprintln(rw, body) }))
	defer host.Close()
	port := host.Listener.Addr().(*net.TCPAddr).Port

	// The dashboard, signed in through the page gatehouse dashboard
	// writes, on the approvals page: it follows the live stream.
	out := w.Gatehouse("dashboard", "--no-open")
	m := regexp.MustCompile(`(?m)^dashboard: +(http://127\.0\.0\.1:[0-9]+)/login\n(?:.*\n)?sign-in page: +(/\S+\.html)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("gatehouse dashboard --no-open: %q", out)
	}
	base, signIn := m[1], m[2]
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.Flag("lang", "en-US"))
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
			t.Fatalf("%s: %v\nservice log:\n%s", what, err, w.ServeLog.String())
		}
	}
	do("signing in", chromedp.Navigate("file://"+signIn), chromedp.WaitVisible(chromedp.CSS("#executions")))
	do("following the approvals", chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#live.on")))

	// The call: curl told to use the proxy for loopback too (NO_PROXY
	// names loopback, which inside the sandbox is the sandbox's own).
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	type ran struct {
		res toolResult
		out string
	}
	done := make(chan ran, 1)
	go func() {
		api := &fakeAPI{input: map[string]any{"command": `curl -sS --noproxy '' -x "$HTTP_PROXY" ` + url, "description": "e2e"}}
		out, err := w.converseErr(w.Workspace, settings, api)
		var r ran
		r.out = fmt.Sprint(out, err)
		if res := api.results.All(); len(res) > 0 {
			r.res = res[0]
		}
		done <- r
	}()

	// The page reloads itself with the request: its warning, the box.
	do("the request on the page", chromedp.WaitVisible(chromedp.CSS("section.approval label.local-service")))
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return v
	}
	page := text("section.approval")
	dest := fmt.Sprintf("127.0.0.1:%d", port)
	contains(t, "the request", page, "claude-code wants to reach "+dest, "is on this machine's own loopback", "This is a service on my machine", "Allow for this command")
	do("ticking the box and allowing", chromedp.Click(chromedp.CSS("section.approval input[name=local_service]")),
		chromedp.Click(chromedp.CSS("section.approval button.answer-once")), chromedp.WaitVisible(chromedp.CSS("p.flash")))
	if flash := text("p.flash"); !strings.Contains(flash, "Answered once") {
		t.Errorf("after allowing: %q", flash)
	}

	var r ran
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("claude did not end\nservice log:\n%s", w.ServeLog.String())
	}
	contains(t, "tool_result", r.res.Content, body)
	if r.res.IsError {
		t.Errorf("the call is an error result: %s\nclaude: %s", r.res.Content, r.out)
	}

	evs := w.Events()
	i := slices.IndexFunc(evs, func(e api.Event) bool { return e.Status != "" })
	if i < 0 {
		t.Fatalf("no execution event: %+v", evs)
	}
	run := evs[i]
	want := []api.EgressApproval{{Host: "127.0.0.1", Port: port, Answer: api.AnswerOnce, By: api.ByDashboard}}
	got := run.Egress.Approved
	for j := range got {
		got[j].ID = "" // the request's id, unknown here
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || run.Egress.Allowed != 1 {
		t.Errorf("egress on the record: %+v, want approved %+v and 1 allowed", run.Egress, want)
	}
	// The execution's card on the dashboard says so too.
	do("the card", chromedp.Navigate(base+"/executions/"+run.ID), chromedp.WaitVisible(chromedp.CSS("#verdict")))
	contains(t, "the card", text("main"), dest+": once by dashboard")
}
