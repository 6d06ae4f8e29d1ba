package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/card/cardtest"
)

// gatehouse audit show writes the card's fields in its order, then the
// kept output.
func TestAuditCardGolden(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for _, tc := range cardtest.Cases() {
		e := &audit.Entry{Record: audit.Record{Event: tc.In.Event, Command: tc.In.Command, SandboxReason: tc.In.SandboxReason,
			Stdout: tc.In.Stdout, Stderr: tc.In.Stderr}}
		in := audit.CardInput(e, tc.In.Kids)
		in.Loc = time.UTC
		var b strings.Builder
		auditCard(&b, in)
		cardtest.CheckOrder(t, tc.Name, "\n"+b.String(), card.Build(in), func(f card.Field) string { return "\n" + f.Label + ":" })
		all.WriteString("=== " + tc.Name + "\n" + b.String() + "\n")
	}
	cardtest.Golden(t, "card.golden", all.String(), *update)
}

// The MCP tool's structured result carries the card's fields, in its
// order, denied or not.
func TestMCPCardGolden(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for _, tc := range cardtest.Cases() {
		ev := tc.In.Event
		ev.SetCommand(tc.In.Command)
		end := &api.End{Event: &ev, Result: &api.Result{Stdout: string(tc.In.Stdout), Stderr: string(tc.In.Stderr), ExitCode: ev.ExitCode}}
		if ev.Decision == "deny" {
			end = &api.End{Exit: api.ExitCannotRun, Event: &ev, Error: &api.StreamError{Kind: api.ErrDenied, BlockedBy: ev.BlockedBy, Message: ev.Reason}}
		}
		js, err := json.MarshalIndent(toolResult(end).StructuredContent, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		in := card.Input{Event: ev, Command: tc.In.Command, Loc: time.UTC}
		cardtest.CheckOrder(t, tc.Name, string(js), card.Build(in), func(f card.Field) string {
			l, _ := json.Marshal(f.Label)
			return `"label": ` + string(l)
		})
		all.WriteString("=== " + tc.Name + "\n" + string(js) + "\n")
	}
	cardtest.Golden(t, "mcp_card.golden", all.String(), *update)
}

// A routed call is one row in gatehouse audit list: its execution, the
// decision's status; the decision is still shown by audit show.
func TestAuditListRoutedCallOneRow(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	vars := map[string]string{"HOME": home, envKeyringService: "gatehouse-test-" + filepath.Base(home)}
	env := &Env{Stdin: strings.NewReader(""), Getenv: func(k string) string { return vars[k] }}
	ctx := context.Background()
	path := auditPath(env, home)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := audit.Open(ctx, audit.Options{Path: path, Keys: keyStore(env)})
	if err != nil {
		t.Fatal(err)
	}
	dec, exe := strings.Repeat("d", 32), strings.Repeat("e", 32)
	code := 0
	ev := api.Event{ID: dec, Time: time.Now().UTC(), Agent: "claude-code", Surface: api.SurfaceAgentHook, ActionType: api.ActionShellExecute,
		Decision: "allow", Routed: true, Approval: &api.ApprovalRecord{ID: "ap-1", Answer: "once", By: "tray"}}
	if err := st.Append(ctx, audit.Record{Event: ev, Command: "git push"}); err != nil {
		t.Fatal(err)
	}
	ev.ID, ev.ParentID, ev.Time, ev.Status, ev.ExitCode, ev.SandboxMode = exe, dec, ev.Time.Add(time.Second), "completed", &code, "bubblewrap"
	if err := st.Append(ctx, audit.Record{Event: ev, Command: "git push"}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var out, errb bytes.Buffer
	env.Stdout, env.Stderr = &out, &errb
	if code := run(ctx, env, []string{"audit", "list"}); code != 0 {
		t.Fatalf("audit list: exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], exe[:12]) || !strings.Contains(lines[1], "completed") {
		t.Errorf("audit list:\n%s\nwant the header and one row, the execution", out.String())
	}
	out.Reset()
	if code := run(ctx, env, []string{"audit", "show", dec}); code != 0 || !strings.Contains(out.String(), "execution event:") {
		t.Errorf("audit show of the decision: exit %d:\n%s%s", code, out.String(), errb.String())
	}
}
