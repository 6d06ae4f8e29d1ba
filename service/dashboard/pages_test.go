package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// The list pages through the trail by keyset: every event once, newest
// first; a filter the trail does not know names its field.
func TestListPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 120)
	c := f.client()
	f.login(c)
	rowRe := regexp.MustCompile(`href="/executions/([0-9a-f]{32})"`)
	olderRe := regexp.MustCompile(`href="(/executions\?[^"]*before=[^"]*)"`)
	var ids []string
	next := "/executions?agent=claude-code"
	for next != "" {
		_, body := f.getBody(c, f.base+strings.ReplaceAll(next, "&amp;", "&"), nil)
		for _, m := range rowRe.FindAllStringSubmatch(body, -1) {
			ids = append(ids, m[1])
		}
		next = ""
		if m := olderRe.FindStringSubmatch(body); m != nil {
			next = m[1]
		}
	}
	if len(ids) != 120 {
		t.Fatalf("the pages held %d events, want 120", len(ids))
	}
	for i, id := range ids {
		if want := fmt.Sprintf("%032x", 120-i); id != want {
			t.Fatalf("row %d is %s, want %s", i, id, want)
		}
	}
	resp, body := f.getBody(c, f.base+"/executions?status=exploded", nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "status: &#34;exploded&#34; is not one of") {
		t.Errorf("bad status: %s\n%s", resp.Status, body)
	}
	_, body = f.getBody(c, f.base+"/executions?q=echo+7", nil)
	if n := len(rowRe.FindAllString(body, -1)); n != 11 { // 7, 70..79
		t.Errorf("text filter: %d rows, want 11", n)
	}
	_, js := f.getBody(c, f.base+"/executions/rows?after="+url.QueryEscape(lastCursor(t, f, 118)), nil)
	var rows struct{ Rows []Row }
	json.Unmarshal([]byte(js), &rows)
	if len(rows.Rows) != 2 || rows.Rows[0].ID != fmt.Sprintf("%032x", 120) {
		t.Errorf("rows after the 118th: %+v", rows.Rows)
	}
}

// lastCursor is the cursor of the n-th event appended.
func lastCursor(t *testing.T, f *fixture, n int) string {
	e, err := f.trail.Get(context.Background(), fmt.Sprintf("%032x", n))
	if err != nil {
		t.Fatal(err)
	}
	return e.Cursor().String()
}

// The card shows the fields of the event and the chain's verdict on it.
func TestCard(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/executions/"+fmt.Sprintf("%032x", 2), nil)
	for _, want := range []string{"audit verify:\nintact — row 2 matches its HMAC and chains between rows 1 and 3",
		strings.Repeat("ab", 32), "github_token", "evil.example:443", "memory not held: no cgroup v2", "nproc not held", "pids yes (nproc no)",
		"bubblewrap", "12ms of 120 s allowed", "claude-code (surface agent_hook)", "redactions 1", ">echo 1</pre>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the card lacks %q", want)
		}
	}
	if resp := f.get(c, f.base+"/executions/ffff", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("no such event: %s", resp.Status)
	}
}

// Approvals: the buttons offered, the rule always saves shown editable,
// and sent only when edited.
func TestApprovalsAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	f.svc.pending = []api.Approval{{ID: "a7", Kind: api.ApprovalCommand, Command: "git push <b>", Question: "Run it?", Rule: "ask-push",
		SaveRule: "name: approved-git\naction: allow\ncommand: [git]\n", Answers: []string{"once", "session", "always", "deny", "deny_always"}}}
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/approvals", nil)
	for _, want := range []string{"Approve once", "Approve for session", "Always", "Deny always", "git push &lt;b&gt;", "name: approved-git\naction: allow"} {
		if !strings.Contains(body, want) {
			t.Errorf("the approvals page lacks %q", want)
		}
	}
	token := csrfField.FindStringSubmatch(body)[1]
	f.post(c, "/approvals/answer", f.base, url.Values{"csrf": {token}, "id": {"a7"}, "answer": {"always"}, "rule": {"name: approved-git\r\naction: allow\r\ncommand: [git]\r\n"}})
	f.post(c, "/approvals/answer", f.base, url.Values{"csrf": {token}, "id": {"a7"}, "answer": {"always"}, "rule": {"name: mine\naction: allow\ncommand: [git]\n"}})
	f.post(c, "/approvals/answer", f.base, url.Values{"csrf": {token}, "id": {"a7"}, "answer": {"once"}, "rule": {"name: mine\n"}})
	got := f.svc.answered()
	if len(got) != 3 || got[0].Rule != "" || got[1].Rule != "name: mine\naction: allow\ncommand: [git]\n" || got[2].Rule != "" {
		t.Errorf("answers %+v", got)
	}
}

// The approvals page shows what a command holds escaped wherever it
// lands — the heading, the command, the directory — so a bidi control
// cannot reorder what the person reads; a workspace request's buttons say
// what each does: once this call only, trust for the agent or for every
// agent.
func TestApprovalsEscapedAndWorkspaceButtons(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	bidi := "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
	f.svc.pending = []api.Approval{
		{ID: "c1", Kind: api.ApprovalCommand, Agent: "claude-code", Command: "ls " + bidi + " <b>x</b>", Cwd: "/w/app" + bidi,
			Question: "claude-code wants to run `ls " + bidi + "`", Rule: "ask" + bidi, Answers: []string{"once", "deny"}},
		{ID: "w1", Kind: api.ApprovalWorkspace, Agent: "claude-code", Command: "make", Cwd: "/home/u/work/app", Workspace: "/home/u/work/app",
			Question: "claude-code wants to work in ~/work/app, which is in no workspace root", Rule: "workspace", Answers: []string{"once", "trust", "trust_all", "deny"}},
	}
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/approvals", nil)
	for _, r := range bidi {
		if strings.ContainsRune(body, r) {
			t.Errorf("the approvals page holds %U raw", r)
		}
	}
	for _, want := range []string{"<h2>claude-code wants to run `ls \\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069`</h2>", "&lt;b&gt;x&lt;/b&gt;",
		">Approve once (this call only, nothing trusted)<", ">Trust /home/u/work/app for claude-code<", ">Trust /home/u/work/app for every agent<"} {
		if !strings.Contains(body, want) {
			t.Errorf("the approvals page lacks %q", want)
		}
	}
}

// Workspaces: added with the service's refusals, relative paths refused
// here, removed.
func TestWorkspaces(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	c := f.client()
	f.login(c)
	token := f.csrf(c, "/workspaces")
	f.post(c, "/workspaces/add", f.base, url.Values{"csrf": {token}, "dir": {"src/app"}})
	if _, body := f.getBody(c, f.base+"/workspaces", nil); !strings.Contains(body, "Not added: want an absolute path") {
		t.Errorf("a relative path was not refused:\n%s", body)
	}
	f.post(c, "/workspaces/add", f.base, url.Values{"csrf": {token}, "dir": {"/w/app"}})
	f.svc.addError = &trust.RefusedError{Dir: "/", Path: "/", Problem: "it is the root directory"}
	f.post(c, "/workspaces/add", f.base, url.Values{"csrf": {token}, "dir": {"/"}})
	if _, body := f.getBody(c, f.base+"/workspaces", nil); !strings.Contains(body, "Refused: ") || !strings.Contains(body, "trust a project directory") {
		t.Errorf("the refusal is not shown:\n%s", body)
	}
	f.post(c, "/workspaces/remove", f.base, url.Values{"csrf": {token}, "dir": {"/w/trusted"}})
	if len(f.svc.added) != 1 || f.svc.added[0] != "/w/app by dashboard" || len(f.svc.removed) != 1 || f.svc.removed[0] != "/w/trusted" {
		t.Errorf("added %q, removed %q", f.svc.added, f.svc.removed)
	}
}

// Policy: each value with its layer and file, the rules in order with the
// built-in ones marked.
func TestPolicyPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	// A destination an approval saved (always) is on every agent's list.
	f.svc.loaded.Config.Policy.EgressSaved = []string{"registry.npmjs.org:443"}
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/policy", nil)
	if !strings.Contains(body, "<td>every other agent</td><td>policy.egress_allowlist</td><td>registry.npmjs.org:443</td>") {
		t.Error("the policy page does not list the destination an approval saved")
	}
	row := regexp.MustCompile(`data-field="policy.exec_timeout_seconds"><td>policy.exec_timeout_seconds</td><td class="value">77</td><td>user</td><td class="path">[^<]*config.yaml:2</td>`)
	if !row.MatchString(body) {
		t.Errorf("exec_timeout_seconds is not shown from the user file:\n%s", body)
	}
	if !strings.Contains(body, `<td>policy.exec_timeout_seconds</td>`) || !strings.Contains(body, `data-field="exec.shell"><td>exec.shell</td><td class="value">/bin/bash</td><td>embedded</td>`) {
		t.Error("the defaults are not marked embedded")
	}
	rm := strings.Index(body, "<td>rm-root</td>")
	push := strings.Index(body, "<td>ask-push</td>")
	def := strings.Index(body, "<td>default_action</td>")
	if rm < 0 || push < rm || def < push || !strings.Contains(body, `<span class="badge">built-in</span>`) {
		t.Errorf("the rules are not in order (%d %d %d)", rm, push, def)
	}
}

// The workspaces page says for whom each trusted root is.
func TestWorkspacesForAgents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	f.svc.ws = []api.Workspace{
		{Path: "/w/api", Origin: api.WorkspaceTrusted, By: "approval", Agents: []string{"claude-code"}},
		{Path: "/w/web", Origin: api.WorkspaceTrusted, By: "cli"},
	}
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/workspaces", nil)
	for _, want := range []string{"<td>claude-code only</td>", "<td>every agent</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the workspaces page lacks %q", want)
		}
	}
}

// An egress request shows its destination, what always saves, and
// answers that say what they let through.
func TestApprovalsEgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	f.svc.pending = []api.Approval{{ID: "e1", Kind: api.ApprovalEgress, Agent: "claude-code", Command: "npm install", Cwd: "/w/app",
		Host: "registry.npmjs.org", Port: 443, SaveEntry: "registry.npmjs.org:443", Rule: "egress_unknown",
		Question: "claude-code wants to reach registry.npmjs.org:443 (during `npm install`, in /w/app)",
		Answers:  []string{"once", "session", "always", "deny", "deny_always"}}}
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/approvals", nil)
	for _, want := range []string{"<dt>destination</dt><dd>registry.npmjs.org:443</dd>",
		`Always adds <code class="pick">registry.npmjs.org:443</code> to policy.egress_allowlist`,
		">Allow for this command<", ">Allow for this session<", `>Always allow <span class="pick">registry.npmjs.org:443</span><`,
		`>Always deny <span class="pick">registry.npmjs.org:443</span><`} {
		if !strings.Contains(body, want) {
			t.Errorf("the approvals page lacks %q", want)
		}
	}
	// No picks, no local-service box, no preset where the service offers none.
	for _, not := range []string{`name="entry"`, `name="local_service"`, "answer-preset"} {
		if strings.Contains(body, not) {
			t.Errorf("the approvals page offers %q", not)
		}
	}
}

// An egress request's picks are the exact destination (chosen) and the
// entries the service offers, no other; the preset answer names its hosts
// and agent; a host-loopback request has the local-service box, which is
// sent with an answer that lets the connection through and no other; the
// entry is sent only when it is not the exact destination.
func TestApprovalsEgressPicks(t *testing.T) {
	t.Parallel()
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
	c := f.client()
	f.login(c)
	_, body := f.getBody(c, f.base+"/approvals", nil)
	e1, l1, _ := strings.Cut(body, `id="approval-l1"`)
	picks := regexp.MustCompile(`<input type="radio" name="entry" value="([^"]*)"( checked)?>`).FindAllStringSubmatch(e1, -1)
	var got []string
	for _, m := range picks {
		got = append(got, m[1]+m[2])
	}
	if want := []string{"registry.npmjs.org:443 checked", "*.registry.npmjs.org:443", "*.npmjs.org:443", "*.npmjs.org"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the picks are %q, want %q", got, want)
	}
	for _, want := range []string{">Allow the npm registry hosts for claude-code<", "the preset answer adds registry.npmjs.org:443 for claude-code"} {
		if !strings.Contains(e1, want) {
			t.Errorf("the npm request lacks %q", want)
		}
	}
	if strings.Contains(e1, `name="local_service"`) || strings.Contains(l1, `name="entry"`) {
		t.Error("a box or a pick is offered where the service offers none")
	}
	for _, want := range []string{`<input type="checkbox" name="local_service" value="1" required> This is a service on my machine`,
		"<strong>127.0.0.1:8765 is on this machine's own loopback</strong>", `class="answer-deny" formnovalidate>`, `class="answer-once">`} {
		if !strings.Contains(l1, want) {
			t.Errorf("the loopback request lacks %q", want)
		}
	}
	token := csrfField.FindStringSubmatch(body)[1]
	for _, form := range []url.Values{
		{"id": {"e1"}, "answer": {"always"}, "entry": {"registry.npmjs.org:443"}},
		{"id": {"e1"}, "answer": {"deny_always"}, "entry": {"*.npmjs.org"}},
		{"id": {"e1"}, "answer": {"preset"}, "entry": {"*.npmjs.org"}},
		{"id": {"l1"}, "answer": {"once"}, "local_service": {"1"}},
		{"id": {"l1"}, "answer": {"deny"}, "local_service": {"1"}},
	} {
		form.Set("csrf", token)
		f.post(c, "/approvals/answer", f.base, form)
	}
	want := []api.AnswerRequest{
		{ID: "e1", Answer: "always", By: "dashboard"},
		{ID: "e1", Answer: "deny_always", Entry: "*.npmjs.org", By: "dashboard"},
		{ID: "e1", Answer: "preset", By: "dashboard"},
		{ID: "l1", Answer: "once", LocalService: true, By: "dashboard"},
		{ID: "l1", Answer: "deny", By: "dashboard"},
	}
	if got := f.svc.answered(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers\n%+v\nwant\n%+v", got, want)
	}
}
