package service

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// A preset answer through a running service: a command's connection to
// one of the npm preset's hosts is held, offers the preset answer, and
// answered so, the preset is saved for the agent that asked
// (policy.egress_allowlist_by_agent in the saved rules file), reported
// with its file, in force at once for that agent's next command, and not
// for another agent's.
func TestEgressPresetAnswerThroughService(t *testing.T) {
	saved := filepath.Join(t.TempDir(), policy.SavedRulesName)
	f := askService(t, saved, map[string]string{"registry.npmjs.org": "127.0.0.1"})
	// Nothing listens on 127.0.0.1:443: a let-through connection gets the
	// proxy's 502, a refused one its 403.
	const curl = `curl -s -o /dev/null -w 'code=%{http_connect}\n' -p -x "$HTTP_PROXY" https://registry.npmjs.org/; true`
	run := func(agent string, interactive bool) (*api.End, string, string) {
		var out, errb bytes.Buffer
		end, err := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
			Command: curl, Agent: agent, Surface: api.SurfaceCLI, Cwd: f.ws, Interactive: interactive,
		}}, &out, &errb)
		if err != nil {
			t.Fatal(err)
		}
		return end, out.String(), errb.String()
	}
	type result struct {
		end      *api.End
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		end, out, errOut := run("claude-code", true)
		done <- result{end, out, errOut}
	}()
	a, resp := f.answerNext(api.AnswerPreset)
	r := <-done
	if a.Preset != "npm" || !strings.Contains(strings.Join(a.Answers, " "), "preset") {
		t.Errorf("request %+v", a)
	}
	if resp.SavedEntry != "registry.npmjs.org:443" || resp.SavedFile != saved {
		t.Errorf("answer %+v", resp)
	}
	if ap := r.end.Event.Egress.Approved; len(ap) != 1 || ap[0].Answer != api.AnswerPreset || !strings.Contains(r.out, "code=502") {
		t.Errorf("approved %+v, stdout %q, stderr %q", ap, r.out, r.err)
	}
	if b, _ := os.ReadFile(saved); !strings.Contains(string(b), "egress_allowlist_by_agent:\n    claude-code:\n      - registry.npmjs.org:443") {
		t.Errorf("saved file:\n%s", b)
	}
	// In force for claude-code: not asked again.
	end, out, _ := run("claude-code", false)
	if len(end.Event.Egress.Approved) != 0 || end.Event.Egress.Allowed != 1 || !strings.Contains(out, "code=502") {
		t.Errorf("claude-code again: %+v %q", end.Event.Egress, out)
	}
	// Not for cli: nobody follows the service, so it is refused at once.
	end, out, errOut := run("cli", false)
	if end.Event.Egress.Allowed != 0 || !strings.Contains(out, "code=403") || !strings.Contains(errOut, "gatehouse: egress to registry.npmjs.org:443 refused") {
		t.Errorf("cli: %+v %q %q", end.Event.Egress, out, errOut)
	}
}
