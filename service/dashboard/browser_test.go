package dashboard

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// requireBrowser is sandboxtest.Browser.
var requireBrowser = sandboxtest.Browser

// A browser is a headless Chromium signed in to f's dashboard.
type browser struct {
	t   *testing.T
	ctx context.Context
	f   *fixture
}

func newBrowser(t *testing.T, f *fixture) *browser {
	chrome := requireBrowser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.WindowSize(1280, 860), chromedp.Flag("lang", "en-US"))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's own sandbox refuses root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	bctx, cancelTimeout := context.WithTimeout(bctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	b := &browser{t: t, ctx: bctx, f: f}
	l, err := f.srv.Login()
	if err != nil {
		t.Fatal(err)
	}
	b.do("signing in", chromedp.Navigate("file://"+l.LaunchFile), chromedp.WaitVisible(chromedp.CSS("#executions")))
	return b
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval is the value of a JavaScript expression on the page.
func (b *browser) eval(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// submit clicks sel, which sends a form, and waits for the page it leads
// to.
func (b *browser) submit(what, sel string) {
	b.t.Helper()
	b.eval(`window.gatehouseOldPage = true; "ok"`)
	b.do(what, chromedp.Click(chromedp.CSS(sel)))
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		st, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`window.gatehouseOldPage ? "old" : document.readyState`))
		if st == "complete" {
			return
		}
		if time.Since(start) > 20*time.Second {
			b.t.Fatalf("%s: no new page", what)
		}
	}
}

// An egress request in Chromium: Always and Deny always save the exact
// destination unless another of the entries the service offers is
// picked, and every place that names what they save follows the pick; an
// allowing answer to a host-loopback destination is not sent until the
// local-service box is ticked (Deny is), and then carries the tick; the
// preset answer is a button naming the preset's hosts and the agent.
func TestApprovalsEgressInChromium(t *testing.T) {
	f := newFixture(t, 0)
	f.svc.pending = []api.Approval{
		{ID: "e1", Kind: api.ApprovalEgress, Agent: "claude-code", Command: "npm install", Cwd: "/w/app",
			Host: "registry.npmjs.org", Port: 443, SaveEntry: "registry.npmjs.org:443", Rule: "egress_unknown", Preset: "npm",
			Entries:  []string{"*.registry.npmjs.org:443", "*.npmjs.org:443", "*.npmjs.org"},
			Question: "claude-code wants to reach registry.npmjs.org:443 (during `npm install`, in /w/app)",
			Answers:  []string{"once", "session", "always", "preset", "deny", "deny_always"}},
		{ID: "l1", Kind: api.ApprovalEgress, Agent: "claude-code", Command: "curl http://127.0.0.1:8765/", Cwd: "/w/app",
			Host: "127.0.0.1", Port: 8765, Literal: true, HostLoopback: true, SaveEntry: "127.0.0.1:8765", Rule: "egress_unknown",
			Question: "claude-code wants to reach 127.0.0.1:8765, a service on this machine", Answers: []string{"once", "session", "always", "deny", "deny_always"}},
	}
	b := newBrowser(t, f)
	b.do("opening approvals", chromedp.Navigate(f.base+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#approval-e1 button.answer-always")))

	// The picks: the exact destination, chosen, then the service's.
	picks := b.eval(`Array.from(document.querySelectorAll("#approval-e1 input[name=entry]"), i => i.value + (i.checked ? " (picked)" : "")).join(", ")`)
	if want := "registry.npmjs.org:443 (picked), *.registry.npmjs.org:443, *.npmjs.org:443, *.npmjs.org"; picks != want {
		t.Errorf("the picks are %q, want %q", picks, want)
	}
	saves := `Array.from(document.querySelectorAll("#approval-e1 .saves, #approval-e1 button.answer-always, #approval-e1 button.answer-deny_always"), e => e.textContent).join(" | ")`
	if got := b.eval(saves); !strings.Contains(got, "Always adds registry.npmjs.org:443 to policy.egress_allowlist") ||
		!strings.Contains(got, "| Always allow registry.npmjs.org:443 | Always deny registry.npmjs.org:443") {
		t.Errorf("before a pick the page says %q", got)
	}
	b.do("picking *.npmjs.org", chromedp.Click(chromedp.CSS(`#approval-e1 input[value="*.npmjs.org"]`)))
	if got := b.eval(saves); !strings.Contains(got, "Always adds *.npmjs.org to policy.egress_allowlist") ||
		!strings.Contains(got, "| Always allow *.npmjs.org | Always deny *.npmjs.org") {
		t.Errorf("after picking *.npmjs.org the page says %q", got)
	}
	b.submit("always, with the pick", "#approval-e1 button.answer-always")
	if got := b.eval(`document.querySelector("p.flash").textContent`); got != "Answered always; saved *.npmjs.org in /state/rules.yaml." {
		t.Errorf("after always: %q", got)
	}
	// The page is new: the exact destination is picked again.
	b.submit("always, exactly", "#approval-e1 button.answer-always")
	if got := b.eval(`document.querySelector("#approval-e1 button.answer-preset").textContent`); got != "Allow the npm registry hosts for claude-code" {
		t.Errorf("the preset answer reads %q", got)
	}
	b.submit("the preset", "#approval-e1 button.answer-preset")

	// Host loopback: the warning and the box; an allowing answer waits
	// for the tick, a denial does not.
	if got := b.eval(`document.querySelector("#approval-l1 p.loopback").textContent + " | " + document.querySelector("#approval-l1 label.local-service").textContent`); !strings.Contains(got, "127.0.0.1:8765 is on this machine's own loopback") ||
		!strings.HasSuffix(got, "This is a service on my machine") {
		t.Errorf("the loopback request says %q", got)
	}
	if got := b.eval(`document.querySelectorAll("#approval-e1 input[name=local_service]").length + " " + document.querySelectorAll("#approval-l1 input[name=entry]").length`); got != "0 0" {
		t.Errorf("a box or a pick where the service offers none (%s)", got)
	}
	b.eval(`window.gatehouseOldPage = true; window.gatehouseRefused = ""; document.querySelector("#approval-l1 input[name=local_service]").addEventListener("invalid", () => { window.gatehouseRefused = "refused" }); "ok"`)
	b.do("approving without the tick", chromedp.Click(chromedp.CSS("#approval-l1 button.answer-once")))
	if got := b.eval(`window.gatehouseRefused + " " + (window.gatehouseOldPage ? "same page" : "new page")`); got != "refused same page" {
		t.Errorf("approving without the tick: %s", got)
	}
	b.submit("denying without the tick", "#approval-l1 button.answer-deny")
	b.do("ticking the box", chromedp.Click(chromedp.CSS("#approval-l1 input[name=local_service]")))
	b.submit("approving with the tick", "#approval-l1 button.answer-once")

	want := []api.AnswerRequest{
		{ID: "e1", Answer: "always", Entry: "*.npmjs.org", By: "dashboard"},
		{ID: "e1", Answer: "always", By: "dashboard"},
		{ID: "e1", Answer: "preset", By: "dashboard"},
		{ID: "l1", Answer: "deny", By: "dashboard"},
		{ID: "l1", Answer: "once", LocalService: true, By: "dashboard"},
	}
	if got := f.svc.answered(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers\n%+v\nwant\n%+v", got, want)
	}
}
