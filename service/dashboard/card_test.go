package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"html/template"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/card/cardtest"
)

var update = flag.Bool("update", false, "rewrite testdata/card.golden")

// The card page is the card's fields in its order, then the kept output,
// then the command tree.
func TestCardGolden(t *testing.T) {
	t.Parallel()
	tm, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, tc := range cardtest.Cases() {
		in := tc.In
		in.Loc = time.UTC
		e := &audit.Entry{Record: audit.Record{Event: in.Event, Command: in.Command, Stdout: in.Stdout, Stderr: in.Stderr}}
		v := cardView{Ev: &e.Event, Row: rowOf(e), Card: card.Build(in), VerifyError: "not verified here", Tree: "#0 " + in.Command}
		for _, st := range v.Card.Streams {
			v.Streams = append(v.Streams, outputView{Name: st.Name, Text: string(st.Text), Note: st.Note, Kept: st.Kept})
		}
		var b bytes.Buffer
		if err := tm.pages["card"].ExecuteTemplate(&b, "content", view{Data: v}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		cardtest.CheckOrder(t, tc.Name, page, v.Card, func(f card.Field) string {
			return "<dt>" + template.HTMLEscapeString(f.Label) + "</dt>"
		})
		if out, tree := strings.Index(page, `<pre class="output"`), strings.Index(page, `id="tree"`); out >= 0 && out > tree {
			t.Errorf("%s: the output is under the command tree", tc.Name)
		}
		all.WriteString("<!-- " + tc.Name + " -->" + page + "\n")
	}
	cardtest.Golden(t, "card.golden", all.String(), *update)
}

// appendRouted appends a routed call: its decision (held, approved) and,
// a second later, its execution.
func appendRouted(t *testing.T, st *audit.Store, dec, exe string, at time.Time) {
	t.Helper()
	approval := &api.ApprovalRecord{ID: "ap-1", Answer: "once", By: "dashboard", Rule: "ask-push", WaitedMS: 900}
	code := 0
	ev := api.Event{ID: dec, Time: at.UTC(), Agent: "claude-code", Surface: api.SurfaceAgentHook, ActionType: api.ActionShellExecute,
		Decision: "allow", Routed: true, Approval: approval, ResolvedCmds: []string{"git"}, PinnedScripts: []api.Pin{}, Credentials: []string{}}
	if err := st.Append(context.Background(), audit.Record{Event: ev, Command: "git push"}); err != nil {
		t.Fatal(err)
	}
	ev.ID, ev.ParentID, ev.Time = exe, dec, at.Add(time.Second).UTC()
	ev.Status, ev.ExitCode, ev.SandboxMode = "completed", &code, "bubblewrap"
	if err := st.Append(context.Background(), audit.Record{Event: ev, Command: "git push"}); err != nil {
		t.Fatal(err)
	}
}

// A routed call is one row in the executions list, in the live rows and
// in the approvals history: its execution, joined with its decision.
func TestRoutedCallOneRow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	dec, exe := strings.Repeat("d", 32), strings.Repeat("e", 32)
	appendRouted(t, f.trail, dec, exe, time.Now().Add(-time.Minute))
	c := f.client()
	f.login(c)
	rowRe := regexp.MustCompile(`<tr [^>]*data-id="([0-9a-f]{32})"`)
	ids := func(body string) []string {
		var out []string
		for _, m := range rowRe.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	_, body := f.getBody(c, f.base+"/executions", nil)
	if got, want := ids(body), []string{exe, strings.Repeat("0", 31) + "1"}; !slices.Equal(got, want) {
		t.Errorf("executions list: rows %v, want %v", got, want)
	}
	var rows struct{ Rows []Row }
	_, js := f.getBody(c, f.base+"/executions/rows?after="+url.QueryEscape(lastCursor(t, f, 1)), nil)
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows.Rows) != 1 || rows.Rows[0].ID != exe || rows.Rows[0].Decision != dec {
		t.Errorf("live rows %s (%v): want the execution alone, naming its decision", js, err)
	}
	_, body = f.getBody(c, f.base+"/approvals", nil)
	hist := body[strings.Index(body, `id="history"`):]
	if n := strings.Count(hist, `href="/executions/`); n != 1 || !strings.Contains(hist, `href="/executions/`+exe+`"`) {
		t.Errorf("the approvals history holds %d rows, want the execution alone:\n%s", n, hist)
	}
}
