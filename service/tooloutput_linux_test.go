package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// The output of an agent's own tool (here a Read, in the shape Claude Code
// gives it) comes back with every credential the keychain holds redacted
// (another agent's too, and in an encoded form) and the DLP patterns,
// its shape kept; the redaction is on the record, naming what was
// redacted and no value. An output with nothing to redact is handed back
// untouched and not recorded; a credential set later is redacted from the
// next output on.
func TestToolOutputRedacted(t *testing.T) {
	store := keyring.NewMemory()
	const mine, theirs, later = "mine-VALUE-0123456789", "theirs-VALUE-9876543210", "later-VALUE-5555555555"
	now := time.Now()
	for id, v := range map[string]string{"github_token": mine, "deploy_key": theirs} {
		if err := broker.Set(store, id, v, now); err != nil {
			t.Fatal(err)
		}
	}
	f := startWith(t, func(c *policy.Config) {
		c.Policy.CredentialGrants = policy.CredentialGrants{"deploy_key": {"cli"}}
	}, func(o *Options) {
		// The fixture's executor, with the keychain.
		home := filepath.Join(filepath.Dir(o.RelayDir), "home")
		exe, _ := os.Executable()
		o.NewExecutor = func(cfg *policy.Config) (*pipeline.Executor, error) {
			ex, err := pipeline.New(cfg, pipeline.Options{Home: home, InitPath: exe, HostPath: "/usr/local/bin:/usr/bin:/bin", Keyring: store})
			if err == nil && fixtureAudit != nil {
				ex.SetObservers(fixtureAudit, nil)
			}
			return ex, err
		}
	})
	read := func(content string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"type": "text", "file": map[string]any{
			"filePath": f.ws + "/notes.txt", "content": content, "numLines": 3, "startLine": 1, "totalLines": 3}})
		return b
	}
	ask := func(out json.RawMessage) *api.ToolOutputResponse {
		t.Helper()
		r, err := f.c.ToolOutput(context.Background(), api.ToolOutputRequest{
			Tool: "Read", ToolUseID: "toolu_1", Output: out, Cwd: f.ws,
			Agent: "claude-code", Surface: api.SurfaceAgentHook, SessionID: "sess",
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	content := "token=" + mine + "\nb64: " + base64.StdEncoding.EncodeToString([]byte(theirs)) + "\naws AKIAABCDEFGHIJKLMNOP\n"
	r := ask(read(content))
	var got struct {
		Type string `json:"type"`
		File struct {
			FilePath string `json:"filePath"`
			Content  string `json:"content"`
			NumLines int    `json:"numLines"`
		} `json:"file"`
	}
	if err := json.Unmarshal(r.Output, &got); err != nil {
		t.Fatalf("output %s: %v", r.Output, err)
	}
	for _, want := range []string{"[REDACTED:credential:github_token]", "[REDACTED:credential:deploy_key]", "[REDACTED:pattern:aws_access_key_id]"} {
		if !strings.Contains(got.File.Content, want) {
			t.Errorf("content %q lacks %s", got.File.Content, want)
		}
	}
	if got.Type != "text" || got.File.NumLines != 3 || got.File.FilePath != f.ws+"/notes.txt" || r.Redactions != 3 || r.EventID == "" {
		t.Errorf("response %+v, output %s", r, r.Output)
	}
	for _, v := range []string{mine, theirs, "AKIAABCDEFGHIJKLMNOP"} {
		if strings.Contains(string(r.Output), v) {
			t.Errorf("output still holds %q", v)
		}
	}
	ev, _ := f.waitEvent(time.Second, func(e api.Event) bool { return e.ID == r.EventID })
	if ev.ActionType != api.ActionToolOutput || ev.Tool != "Read" || ev.Agent != "claude-code" || ev.SessionID != "sess" ||
		ev.Output.RedactionCount != 3 || ev.Output.SHA256 == "" ||
		!strings.Contains(ev.Reason, "credential github_token") || !strings.Contains(ev.Reason, "credential deploy_key") ||
		!strings.Contains(ev.Reason, "pattern aws_access_key_id") || strings.Contains(ev.Reason, "VALUE") {
		t.Errorf("event %+v", ev)
	}

	before := len(f.svc.Events(0))
	if r := ask(read("nothing to see\n")); len(r.Output) != 0 || r.Redactions != 0 || r.EventID != "" {
		t.Errorf("a clean output: %+v", r)
	}
	if n := len(f.svc.Events(0)); n != before {
		t.Errorf("a clean output was recorded (%d events, %d before)", n, before)
	}

	if err := broker.Set(store, "late_token", later, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if r := ask(read(later)); !strings.Contains(string(r.Output), "[REDACTED:credential:late_token]") {
		t.Errorf("a credential set later is not redacted: %s", r.Output)
	}
}
