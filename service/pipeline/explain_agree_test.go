//go:build linux || darwin

package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// approveAll is a person who approves every held call, the workspace
// ones for this call alone; it counts what it was asked.
type approveAll struct{ asked int }

func (a *approveAll) Hold(_ context.Context, h *approvals.Hold) approvals.Outcome {
	a.asked++
	return approvals.Outcome{Approved: true, Record: api.ApprovalRecord{
		ID: "test", Kind: h.Request.Kind, Answer: api.AnswerOnce, By: "test", Workspace: h.Request.Workspace,
	}}
}

// agreeCase is one request of the agreement test.
type agreeCase struct {
	cmd, stdin, cwd, agent string
	env                    map[string]string
}

// agreeCases are the requests whose decision needs more than analysis:
// credentials mapped, referenced and ungranted, a directory in no root,
// pinned scripts, an ask rule, a deny rule.
func agreeCases(f *decideFixture, outside string) []agreeCase {
	return []agreeCase{
		{cmd: `curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user`},
		{cmd: `echo ${credential:x}`},
		{cmd: `echo ${credential:deploy_key}`},
		{cmd: `echo ${credential:deploy_key}`, agent: "claude-code"},
		{cmd: `printenv AUTH`, agent: "claude-code", env: map[string]string{"AUTH": "Bearer ${credential:deploy_key}"}},
		{cmd: `curl -H "$AUTH" https://example.com`, agent: "claude-code", env: map[string]string{"AUTH": "Bearer ${credential:deploy_key}"}},
		{cmd: `cat sa.json`},
		{cmd: `ls`, cwd: outside},
		{cmd: `echo hi > f.txt`, cwd: outside},
		{cmd: `curl -H "Authorization: Bearer $GITHUB_TOKEN" x`, cwd: outside},
		{cmd: `terraform plan`, cwd: outside},
		{cmd: `./build.sh`},
		{cmd: `bash scripts/test.sh`},
		{cmd: `make build`},
		{cmd: `terraform plan`},
		{cmd: `terraform apply -auto-approve`},
		{cmd: `terraform apply && echo $GITHUB_TOKEN`},
		{cmd: `kubectl delete pod web`},
		{cmd: `echo ok`, cwd: filepath.Join(f.ws, "missing")},
		{cmd: "echo\x00x"},
		{cmd: `   `},
	}
}

// Explain is the decision with execution and recording switched off: for
// every request — the analysis corpus, the everyday seeds, and the cases
// whose decision needs credentials, grants, workspaces, pins, an ask rule
// or a deny rule — it says what Decide decides, in process (nobody to
// ask: an ask is refused) and with a person to ask (an ask is held, and
// explain says so).
func TestExplainAgreesWithDecide(t *testing.T) {
	f := newDecideFixture(t)
	f.cfg.Policy.Rules = append(policy.Rules{
		{Name: "ask-terraform-apply", Action: policy.ActionAsk, Command: []string{"terraform"}, Args: []policy.ArgMatch{{Seq: []string{"apply"}}}},
		{Name: "no-kubectl-delete", Action: policy.ActionDeny, Command: []string{"kubectl"}, Args: []policy.ArgMatch{{Seq: []string{"delete"}}}},
	}, f.cfg.Policy.Rules...)
	outside := filepath.Join(f.dir, "work", "proj")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}

	var reqs []api.ExecRequest
	for _, c := range agreeCases(f, outside) {
		agent := c.agent
		if agent == "" {
			agent = "cli"
		}
		reqs = append(reqs, api.ExecRequest{Command: c.cmd, Stdin: c.stdin, Cwd: c.cwd, Agent: agent, Env: c.env, Surface: api.SurfaceCLI})
	}
	for _, s := range decideSeeds {
		req := api.ExecRequest{Command: s.cmd, Stdin: s.stdin, Agent: "cli", Surface: api.SurfaceCLI}
		if d := decideDirs[s.where&7]; d != "" {
			req.Cwd = filepath.Join(f.ws, d)
		}
		reqs = append(reqs, req)
	}
	for _, c := range analysisCorpus(t) {
		reqs = append(reqs, api.ExecRequest{Command: c, Agent: "cli", Surface: api.SurfaceCLI})
	}

	person := &approveAll{}
	for _, mode := range []struct {
		name   string
		person *approveAll
	}{{"in process", nil}, {"with a person to ask", person}} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.person != nil {
				f.ex.opts.Approver = mode.person
				f.ex.opts.Trusted = trust.Open(filepath.Join(f.dir, "trusted.json"))
				defer func() { f.ex.opts.Approver, f.ex.opts.Trusted = nil, nil }()
			}
			seen := map[string]int{}
			for _, req := range reqs {
				x, xerr := f.ex.Explain(context.Background(), req)
				var before int
				if mode.person != nil {
					before = mode.person.asked
				}
				d, derr := f.ex.Decide(context.Background(), req)
				if d != nil {
					d.plan.release()
				}
				var xae, dae *ArgError
				xa, da := errors.As(xerr, &xae), errors.As(derr, &dae)
				if xa || da {
					if xae == nil || dae == nil || *xae != *dae {
						t.Errorf("%q in %q: explain's argument error %v, decide's %v", req.Command, req.Cwd, xerr, derr)
					}
					seen["invalid_argument"]++
					continue
				}
				if xerr != nil {
					t.Fatalf("%q: explain: %v", req.Command, xerr)
				}
				decision, code := "allow", ""
				var den *Denial
				switch {
				case errors.As(derr, &den):
					decision, code = "deny", den.Code
				case derr != nil:
					t.Fatalf("%q: decide: %v", req.Command, derr)
				}
				held := mode.person != nil && mode.person.asked > before
				want := decision
				if held && decision == "allow" {
					want = "ask" // approved, as this person does; explain says it waits
				}
				if x.Decision != want || x.BlockedBy != code {
					t.Errorf("%q in %q (agent %s): explain says %s %q, decide %s %q (held: %v; explain's reason: %s)",
						req.Command, req.Cwd, req.Agent, x.Decision, x.BlockedBy, decision, code, held, x.Reason)
				}
				if held != (len(x.Held) > 0) {
					t.Errorf("%q in %q: held by decide: %v; explain's holds: %q", req.Command, req.Cwd, held, x.Held)
				}
				if x.Decision == "deny" && x.Hint != Remedy(code, den.Hint) {
					t.Errorf("%q: explain's remedy %q, decide's %q", req.Command, x.Hint, den.Hint)
				}
				seen[x.Decision+" "+x.BlockedBy]++
			}
			// The cases reached every stage that decides.
			for _, k := range []string{"allow ", "deny credential_in_argv", "deny credential_not_granted", "deny policy_rule", "invalid_argument"} {
				if seen[k] == 0 {
					t.Errorf("no request was decided %q: %v", k, seen)
				}
			}
			if mode.person == nil {
				for _, k := range []string{"deny cwd_outside_workspace", "deny approval_required"} {
					if seen[k] == 0 {
						t.Errorf("no request was decided %q: %v", k, seen)
					}
				}
			} else if seen["ask "] == 0 {
				t.Errorf("no request was held: %v", seen)
			}
			keys := make([]string, 0, len(seen))
			for k := range seen {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			t.Logf("%d requests: %v", len(reqs), seen)
		})
	}
}
