package pipeline

// Egress approvals of a destination on the host's own loopback (a service
// on this machine, outside the sandbox), and of a preset's host.

import (
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// tickingPerson answers each egress request first without the
// local-service tick (which the broker must refuse, leaving the request
// pending), then with answer and the tick.
type tickingPerson struct {
	b      *approvals.Broker
	answer string
	mu     sync.Mutex
	asked  []api.Approval
	first  []error // the answers without the tick
	second []error
}

func newTickingPerson(answer string) *tickingPerson {
	p := &tickingPerson{answer: answer}
	p.b = approvals.New(approvals.Options{
		Opened: func(a api.Approval) {
			go func() {
				_, err1 := p.b.Answer(api.AnswerRequest{ID: a.ID, Answer: p.answer, By: api.ByCLI})
				var err2 error
				if err1 != nil {
					_, err2 = p.b.Answer(api.AnswerRequest{ID: a.ID, Answer: p.answer, LocalService: true, By: api.ByCLI})
				}
				p.mu.Lock()
				p.asked = append(p.asked, a)
				p.first, p.second = append(p.first, err1), append(p.second, err2)
				p.mu.Unlock()
			}()
		},
	})
	return p
}

// A command's connection to 127.0.0.1:PORT or localhost:PORT through the
// proxy, which no entry covers, is asked about — not refused at once — as
// a host-loopback request whose question warns; approving it without the
// local-service tick is refused and it stays pending; with the tick, the
// body arrives. A name that resolves to loopback is still refused.
func TestEgressAskHostLoopback(t *testing.T) {
	t.Parallel()
	p := newTickingPerson(api.AnswerOnce)
	f := egressFixture(t, nil, testResolver{"lo.test": "127.0.0.1"})
	f.ex.SetApprover(p.b)
	s := startServers(t, f)
	o := f.run(`curl -sS --noproxy '' http://127.0.0.1:` + s.port + `/lit; curl -sS --noproxy '' http://localhost:` + s.port + `/name`)
	if !strings.Contains(o.Result.Stdout, "uri=/lit") || !strings.Contains(o.Result.Stdout, "uri=/name") {
		t.Fatalf("stdout %q, stderr %q", o.Result.Stdout, o.Result.Stderr)
	}
	p.mu.Lock()
	asked, first, second := p.asked, p.first, p.second
	p.mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("%d requests, want 2: %+v", len(asked), asked)
	}
	for i, a := range asked {
		dest := []string{"127.0.0.1:", "localhost:"}[i] + s.port
		if !a.HostLoopback || a.SaveEntry != dest || a.Literal != (i == 0) || len(a.Entries) != 0 ||
			!strings.Contains(a.Question, "warning: it is this machine's own loopback, so approving lets the command reach a service running on this machine, outside the sandbox") {
			t.Errorf("request %+v", a)
		}
		if first[i] == nil || !strings.Contains(first[i].Error(), "--local-service") || second[i] != nil {
			t.Errorf("%s: without the tick %v; with it %v", dest, first[i], second[i])
		}
	}
	if got := o.Event.Egress.Approved; len(got) != 2 || got[0].Answer != api.AnswerOnce || got[0].Host != "127.0.0.1" || got[1].Host != "localhost" {
		t.Errorf("egress.approved %+v", got)
	}
	o = f.run(`curl -sS --noproxy '' http://lo.test:` + s.port + `/resolved`)
	if strings.Contains(o.Result.Stdout, "uri=/resolved") || !strings.Contains(o.Result.Stdout, "which is a loopback address") {
		t.Errorf("a name resolving to loopback: stdout %q", o.Result.Stdout)
	}
}

// A request about one of a preset's hosts offers the preset answer for
// the agent that asked; answered, the preset is saved for that agent and
// the connection goes on (here to nothing listening: the proxy's 502, not
// its 403), and the event records the answer preset, with what was saved
// and where.
func TestEgressAskPresetAnswer(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var saved []string
	var b *approvals.Broker
	var asked []api.Approval
	b = approvals.New(approvals.Options{
		SavePreset: func(name, agent string) (string, []string, error) {
			mu.Lock()
			saved = append(saved, name+" for "+agent)
			mu.Unlock()
			p, _ := policy.EgressPresetNamed(name)
			return "/state/rules.yaml", p.Entries, nil
		},
		Opened: func(a api.Approval) {
			mu.Lock()
			asked = append(asked, a)
			mu.Unlock()
			go b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerPreset, By: api.ByDashboard})
		},
	})
	f := egressFixture(t, nil, testResolver{"registry.npmjs.org": "127.0.0.1"}, "registry.npmjs.org")
	f.ex.SetApprover(b)
	o := f.run(`curl -sS -o /dev/null -w '%{http_code}\n' -x "$HTTP_PROXY" -p https://registry.npmjs.org/ ; true`, session("s1"))
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].Preset != "npm" || strings.Join(asked[0].Answers, " ") != "once session always preset deny deny_always" {
		t.Fatalf("requests %+v", asked)
	}
	if strings.Join(saved, ",") != "npm for claude-code" {
		t.Errorf("saved %v", saved)
	}
	if got := o.Event.Egress.Approved; len(got) != 1 || got[0].Answer != api.AnswerPreset || got[0].By != api.ByDashboard ||
		got[0].SavedEntry != "registry.npmjs.org:443" || got[0].SavedFile != "/state/rules.yaml" {
		t.Errorf("egress.approved %+v", got)
	}
	if o.Event.Egress.Allowed != 1 || o.Event.Egress.Denied != 0 {
		t.Errorf("egress %+v, stdout %q, stderr %q", o.Event.Egress, o.Result.Stdout, o.Result.Stderr)
	}
}
