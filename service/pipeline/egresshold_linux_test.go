package pipeline

// Egress approvals: under policy.egress_unknown: ask, a command's
// connection to a destination no entry covers waits for a person's answer
// through a real approvals broker, whose answers these tests give as a
// person would (Broker.Answer). The destination is a name the test
// resolver maps to a server on host loopback.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// person answers every egress request with the next of its answers (the
// last one repeats), and counts the requests.
type person struct {
	b       *approvals.Broker
	mu      sync.Mutex
	answers []string
	asked   []api.Approval
	results []error
}

func newPerson(saveEgress func(string, bool) (string, error), answers ...string) *person {
	p := &person{answers: answers}
	p.b = approvals.New(approvals.Options{
		SaveEgress: saveEgress,
		Opened: func(a api.Approval) {
			p.mu.Lock()
			p.asked = append(p.asked, a)
			ans := p.answers[0]
			if len(p.answers) > 1 {
				p.answers = p.answers[1:]
			}
			p.mu.Unlock()
			if ans == "" {
				return // nobody answers
			}
			go func() {
				_, err := p.b.Answer(api.AnswerRequest{ID: a.ID, Answer: ans, By: api.ByCLI})
				p.mu.Lock()
				p.results = append(p.results, err)
				p.mu.Unlock()
			}()
		},
	})
	return p
}

func (p *person) requests() []api.Approval {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, err := range p.results {
		if err != nil {
			panic(err)
		}
	}
	return append([]api.Approval(nil), p.asked...)
}

// askFixture is an egress fixture with no allowlist, a person answering,
// and a server the name unknown.test reaches.
func askFixture(t *testing.T, p *person, mutate func(*policy.Config)) (*fixture, *servers) {
	t.Helper()
	f := egressFixture(t, nil, testResolver{"unknown.test": "127.0.0.1", "other.test": "127.0.0.1", "meta.test": "169.254.169.254"}, "unknown.test", "other.test")
	if mutate != nil {
		mutate(f.cfg)
	}
	f.ex.SetApprover(p.b)
	return f, startServers(t, f)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func session(id string) func(*api.ExecRequest) {
	return func(r *api.ExecRequest) { r.SessionID = id; r.Agent = "claude-code" }
}

// Approved once, the held connection goes through and the body arrives;
// the answer holds for the rest of the execution (a second connection is
// not asked about), and it is on the event.
func TestEgressAskOnce(t *testing.T) {
	t.Parallel()
	p := newPerson(nil, api.AnswerOnce)
	f, s := askFixture(t, p, nil)
	url := "http://unknown.test:" + s.port
	o := f.run(`curl -sS --noproxy '' ` + url + `/a && curl -sS --noproxy '' ` + url + `/b`)
	if exitOf(o) != 0 || !strings.Contains(o.Result.Stdout, "uri=/a") || !strings.Contains(o.Result.Stdout, "uri=/b") {
		t.Fatalf("exit %d, stdout %q, stderr %q", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	reqs := p.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	a := reqs[0]
	if a.Kind != api.ApprovalEgress || a.Host != "unknown.test" || a.Port != atoi(t, s.port) || a.SaveEntry != "unknown.test:"+s.port ||
		!strings.HasPrefix(a.Question, "cli wants to reach unknown.test:"+s.port+" (during `curl") || a.DecisionID != o.Event.ID {
		t.Errorf("request %+v", a)
	}
	want := []api.EgressApproval{{Host: "unknown.test", Port: atoi(t, s.port), Answer: api.AnswerOnce, By: api.ByCLI, ID: a.ID}}
	if got := o.Event.Egress.Approved; len(got) != 1 || got[0] != want[0] {
		t.Errorf("egress.approved = %+v, want %+v", got, want)
	}
	if o.Event.Egress.Allowed != 2 || o.Event.Egress.Denied != 0 {
		t.Errorf("egress = %+v", o.Event.Egress)
	}
	// Once is this execution's: the next one asks again.
	f.run(`curl -sS --noproxy '' ` + url + `/c`)
	if n := len(p.requests()); n != 2 {
		t.Errorf("%d requests after a second execution, want 2", n)
	}
}

// A session answer lets the same agent session's next execution through
// without asking; another session is asked.
func TestEgressAskSession(t *testing.T) {
	t.Parallel()
	p := newPerson(nil, api.AnswerSession, api.AnswerDeny)
	f, s := askFixture(t, p, nil)
	cmd := `curl -sS --noproxy '' http://unknown.test:` + s.port + `/s`
	for i, sess := range []string{"s1", "s1", "s2"} {
		o, err := f.try(cmd, session(sess))
		if err != nil {
			t.Fatal(err)
		}
		got := o.Event.Egress.Approved
		switch i {
		case 0, 1:
			if exitOf(o) != 0 || len(got) != 1 || got[0].Answer != api.AnswerSession {
				t.Errorf("run %d (%s): exit %d, approved %+v, stderr %q", i, sess, exitOf(o), got, o.Result.Stderr)
			}
			if i == 1 && got[0].By != approvals.BySession {
				t.Errorf("run 1 answered by %q, want the session grant", got[0].By)
			}
		case 2:
			if strings.Contains(o.Result.Stdout, "uri=/s") || len(got) != 1 || got[0].Answer != api.AnswerDeny {
				t.Errorf("other session: stdout %q, approved %+v", o.Result.Stdout, got)
			}
		}
	}
	if n := len(p.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (s1 once, s2 once)", n)
	}
}

// Denied, or not answered in time, the connection is refused as without
// an answer, and the command's stderr ends with the Gatehouse line; the
// proxy's 403 says why.
func TestEgressAskDeniedAndTimeout(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ answer, why, line string }{
		{api.AnswerDeny, "a person denied unknown.test:", "; a person denied it, approval "},
		{"", "nobody answered approval request", "; nobody answered approval "},
	} {
		p := newPerson(nil, c.answer)
		f, s := askFixture(t, p, func(cfg *policy.Config) { cfg.Policy.EgressApprovalTimeoutSeconds = 1 })
		o := f.run(`curl -sS --noproxy '' http://unknown.test:` + s.port + `/x`)
		line := "gatehouse: egress to unknown.test:" + s.port + " refused (not in policy.egress_allowlist" + c.line
		if exitOf(o) != 0 || !strings.Contains(o.Result.Stdout, c.why) || !strings.Contains(o.Result.Stderr, line) {
			t.Errorf("answer %q: exit %d, stdout %q, stderr %q", c.answer, exitOf(o), o.Result.Stdout, o.Result.Stderr)
		}
		want := c.answer
		if want == "" {
			want = approvals.AnswerTimeout
		}
		if got := o.Event.Egress.Approved; len(got) != 1 || got[0].Answer != want {
			t.Errorf("approved %+v, want %s", got, want)
		}
		if len(s.seen.hosts()) != 0 {
			t.Errorf("the server was reached: %v", s.seen.hosts())
		}
	}
}

// Metadata, link-local and this machine's (non-loopback) addresses are
// refused whatever a person would answer, and nobody is asked about them;
// a name is asked about, then refused by what it resolves to. (The host's
// loopback is asked about with a warning: egresshold_loopback_linux_test.go.)
func TestEgressAskNeverForInternal(t *testing.T) {
	t.Parallel()
	p := newPerson(nil, api.AnswerOnce)
	f, _ := askFixture(t, p, nil)
	targets := []string{"169.254.169.254", "169.254.10.1", "[fe80::1]:9"}
	if h := hostAddr(); h != "" {
		targets = append(targets, h+":9")
	}
	var cmd []string
	for _, d := range targets {
		cmd = append(cmd, `curl -sS --noproxy '' http://`+d+`/`)
	}
	o := f.run(strings.Join(cmd, "; "))
	if n := len(p.requests()); n != 0 {
		t.Errorf("asked %d times about internal addresses: %+v", n, p.requests())
	}
	if o.Event.Egress.Denied != len(targets) || o.Event.Egress.Allowed != 0 {
		t.Errorf("egress %+v, want %d refused", o.Event.Egress, len(targets))
	}
	o = f.run(`curl -sS --noproxy '' http://meta.test/`)
	if n := len(p.requests()); n != 1 || !strings.Contains(o.Result.Stdout, "cloud metadata endpoint") {
		t.Errorf("%d requests, stdout %q", n, o.Result.Stdout)
	}
}

// A managed allowlist bounds what may be asked: a destination outside it
// is refused at once, naming the managed file; one inside it is asked
// about. A managed (or any) egress_unknown: deny asks nothing.
func TestEgressAskManagedBound(t *testing.T) {
	t.Parallel()
	p := newPerson(nil, api.AnswerOnce)
	f, s := askFixture(t, p, func(c *policy.Config) {
		c.ManagedEgress = &policy.ManagedEgress{File: "/etc/gatehouse/managed.yaml", Allowlist: []string{"other.test"}, HasAllowlist: true, Ports: []int{443, 80}}
	})
	o := f.run(`curl -sS --noproxy '' http://unknown.test:` + s.port + `/`)
	if n := len(p.requests()); n != 0 || !strings.Contains(o.Result.Stdout, "not allowed by the managed policy.egress_allowlist (/etc/gatehouse/managed.yaml)") {
		t.Errorf("%d requests, stdout %q", n, o.Result.Stdout)
	}
	f.cfg.ManagedEgress.Allowlist = []string{"other.test:" + s.port}
	o = f.run(`curl -sS --noproxy '' http://other.test:` + s.port + `/in`)
	if n := len(p.requests()); n != 1 || !strings.Contains(o.Result.Stdout, "uri=/in") {
		t.Errorf("%d requests, stdout %q", n, o.Result.Stdout)
	}
	f.cfg.Policy.EgressUnknown = policy.EgressDeny
	o = f.run(`curl -sS --noproxy '' http://other.test:` + s.port + `/deny`)
	if n := len(p.requests()); n != 1 || !strings.Contains(o.Result.Stdout, "policy.egress_allowlist is empty: no egress") {
		t.Errorf("under deny: %d requests, stdout %q", n, o.Result.Stdout)
	}
}

// Always saves the exact host:port in the saved rules file: a fresh
// configuration loaded from it allows the destination without asking.
// Deny always adds it to the denylist there.
func TestEgressAskAlways(t *testing.T) {
	t.Parallel()
	saved := filepath.Join(t.TempDir(), policy.SavedRulesName)
	save := func(entry string, allow bool) (string, error) {
		s, err := policy.ReadSaved(saved)
		if err != nil {
			return "", err
		}
		if allow {
			s.EgressAllow = append(s.EgressAllow, entry)
		} else {
			s.EgressDeny = append(s.EgressDeny, entry)
		}
		return saved, policy.WriteSaved(saved, s)
	}
	p := newPerson(save, api.AnswerAlways, api.AnswerDenyAlways)
	f, s := askFixture(t, p, nil)
	o := f.run(`curl -sS --noproxy '' http://unknown.test:` + s.port + `/a`)
	if !strings.Contains(o.Result.Stdout, "uri=/a") {
		t.Fatalf("stdout %q stderr %q", o.Result.Stdout, o.Result.Stderr)
	}
	l, err := policy.Load(policy.LoadOptions{Home: f.home, SavedRulesFile: saved})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config.Policy.EgressSaved; len(got) != 1 || got[0] != "unknown.test:"+s.port {
		t.Fatalf("saved %v", got)
	}
	f.cfg.Policy.EgressSaved = l.Config.Policy.EgressSaved
	fresh, _ := askFixture(t, p, func(c *policy.Config) { c.Policy.EgressSaved = l.Config.Policy.EgressSaved })
	o = fresh.run(`curl -sS --noproxy '' http://unknown.test:` + s.port + `/b`)
	if n := len(p.requests()); n != 1 || !strings.Contains(o.Result.Stdout, "uri=/b") || len(o.Event.Egress.Approved) != 0 {
		t.Errorf("%d requests, stdout %q, approved %+v", n, o.Result.Stdout, o.Event.Egress.Approved)
	}
	// Deny always.
	o = f.run(`curl -sS --noproxy '' http://other.test:` + s.port + `/c`)
	l, err = policy.Load(policy.LoadOptions{Home: f.home, SavedRulesFile: saved})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config.Policy.EgressDenylist; len(got) != 1 || got[0] != "other.test:"+s.port || strings.Contains(o.Result.Stdout, "uri=/c") {
		t.Errorf("denylist %v, stdout %q", got, o.Result.Stdout)
	}
	data, _ := os.ReadFile(saved)
	if !strings.Contains(string(data), "egress_allowlist: ['unknown.test:"+s.port+"']") {
		t.Errorf("saved file:\n%s", data)
	}
}

// Without a person to ask (no Approver: gatehouse exec in process), ask
// refuses as deny does.
func TestEgressAskWithoutApprover(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, testResolver{"unknown.test": "127.0.0.1"}, "unknown.test")
	s := startServers(t, f)
	o := f.run(`curl -sS --noproxy '' http://unknown.test:` + s.port + `/`)
	if !strings.Contains(o.Result.Stdout, "policy.egress_allowlist is empty: no egress") || len(o.Event.Egress.Approved) != 0 {
		t.Errorf("stdout %q, approved %+v", o.Result.Stdout, o.Event.Egress.Approved)
	}
}

// A request for one of a preset's hosts names the preset.
func TestEgressAskNamesPreset(t *testing.T) {
	t.Parallel()
	p := newPerson(nil, api.AnswerDeny)
	f, _ := askFixture(t, p, nil)
	f.run(`curl -sS --noproxy '' https://registry.npmjs.org/ || true`)
	reqs := p.requests()
	if len(reqs) != 1 || reqs[0].Preset != "npm" || reqs[0].SaveEntry != "registry.npmjs.org:443" {
		t.Errorf("requests %+v", reqs)
	}
}
