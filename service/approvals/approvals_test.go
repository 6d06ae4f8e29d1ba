package approvals

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// hold returns a command hold for agent and session whose command is cmd;
// its node "matches" a rule whose name holds cmd.
func hold(session, cmd string, timeout time.Duration) *Hold {
	save := &policy.Rule{Name: "approved-" + cmd, Action: policy.ActionAllow, Command: []string{cmd}}
	return &Hold{
		Request: api.Approval{Kind: api.ApprovalCommand, Agent: "claude-code", SessionID: session, Command: cmd, Rule: "ask-it", Reason: "asked"},
		Save:    save,
		Matches: func(r *policy.Rule) bool { return len(r.Command) == 1 && r.Command[0] == cmd },
		Timeout: timeout,
	}
}

// start holds h in the background and returns the request once pending
// and a channel with the outcome.
func start(t *testing.T, b *Broker, h *Hold) (api.Approval, <-chan Outcome) {
	t.Helper()
	pending := make(chan api.Approval, 1)
	ctx := WithWaiting(context.Background(), func(a api.Approval) { pending <- a })
	out := make(chan Outcome, 1)
	go func() { out <- b.Hold(ctx, h) }()
	select {
	case a := <-pending:
		return a, out
	case <-time.After(10 * time.Second):
		t.Fatal("the hold never became pending")
	}
	return api.Approval{}, nil
}

func outcome(t *testing.T, c <-chan Outcome) Outcome {
	t.Helper()
	select {
	case o := <-c:
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("the hold did not end")
	}
	return Outcome{}
}

func TestAnswers(t *testing.T) {
	t.Parallel()
	var saved []*policy.Rule
	var notices []string
	var mu sync.Mutex
	b := New(Options{
		SaveRule: func(r *policy.Rule) error { saved = append(saved, r); return nil },
		Publish:  func(n api.StreamNotice) { mu.Lock(); notices = append(notices, n.Type); mu.Unlock() },
	})

	a, out := start(t, b, hold("s1", "git", time.Minute))
	if got := strings.Join(a.Answers, ","); got != "once,session,always,deny,deny_always" {
		t.Errorf("answers offered: %s", got)
	}
	if p := b.Pending(); len(p) != 1 || p[0].ID != a.ID || b.Count() != 1 {
		t.Fatalf("pending %v", p)
	}
	// Refused answers leave it pending.
	for _, bad := range []api.AnswerRequest{
		{ID: "nope", Answer: api.AnswerOnce, By: api.ByCLI},
		{ID: a.ID, Answer: "maybe", By: api.ByCLI},
		{ID: a.ID, Answer: api.AnswerOnce, By: "agent"},
		{ID: a.ID, Answer: api.AnswerOnce, Rule: "name: x", By: api.ByCLI},
		{ID: a.ID, Answer: api.AnswerAlways, Rule: "{name: other, action: allow, command: [rm]}", By: api.ByCLI},
		{ID: a.ID, Answer: api.AnswerAlways, Rule: "{name: [", By: api.ByCLI},
	} {
		if _, err := b.Answer(bad); err == nil {
			t.Errorf("answer %+v was taken", bad)
		}
	}
	if b.Count() != 1 || len(saved) != 0 {
		t.Fatalf("a refused answer changed something: %d pending, %d saved", b.Count(), len(saved))
	}
	resp, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, By: api.ByTray})
	if err != nil || !resp.OK || !strings.Contains(resp.SavedRule, "approved-git") {
		t.Fatalf("always: %+v %v", resp, err)
	}
	o := outcome(t, out)
	if !o.Approved || o.Record.Answer != api.AnswerAlways || o.Record.By != api.ByTray || o.Record.SavedRule != "approved-git" || o.Record.ID != a.ID {
		t.Errorf("outcome %+v", o)
	}
	if len(saved) != 1 || saved[0].Action != policy.ActionAllow {
		t.Errorf("saved %+v", saved)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerOnce, By: api.ByCLI}); err == nil {
		t.Error("an answered request took a second answer")
	}

	// Deny always saves the rule as a deny, and refuses the call.
	a, out = start(t, b, hold("s1", "curl", time.Minute))
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDenyAlways, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); o.Approved || o.Record.Answer != api.AnswerDenyAlways {
		t.Errorf("deny always: %+v", o)
	}
	if len(saved) != 2 || saved[1].Action != policy.ActionDeny || !strings.HasPrefix(saved[1].Name, "denied-") {
		t.Errorf("saved %+v", saved[1])
	}

	// An answer's own rule must match the held command.
	a, out = start(t, b, hold("", "make", time.Minute))
	if strings.Contains(strings.Join(a.Answers, ","), api.AnswerSession) {
		t.Errorf("session offered without a session: %v", a.Answers)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, Rule: "{name: my-make, action: deny, command: [make]}", By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || o.Record.SavedRule != "my-make" || saved[2].Action != policy.ActionAllow {
		t.Errorf("own rule: %+v %+v", o, saved[2])
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Count(strings.Join(notices, " "), api.NoticeApprovalOpened) != 3 || strings.Count(strings.Join(notices, " "), api.NoticeApprovalAnswered) != 3 {
		t.Errorf("notices %v", notices)
	}
}

// A save that fails refuses the answer; the request stays pending and a
// later answer is taken.
func TestSaveFails(t *testing.T) {
	t.Parallel()
	b := New(Options{SaveRule: func(r *policy.Rule) error { return errors.New("disk full") }})
	a, out := start(t, b, hold("s", "git", time.Minute))
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, By: api.ByCLI}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); o.Approved || o.Record.Answer != api.AnswerDeny {
		t.Errorf("%+v", o)
	}
}

// Approve for session answers the same agent's later holds in the same
// session for the same rule and command, and no others.
func TestSessionGrant(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	a, out := start(t, b, hold("s1", "git", time.Minute))
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerSession, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || o.Record.Answer != api.AnswerSession {
		t.Fatalf("%+v", o)
	}
	// The same: answered at once, without a request.
	o := b.Hold(context.Background(), hold("s1", "git", time.Minute))
	if !o.Approved || o.Record.By != BySession || b.Count() != 0 {
		t.Errorf("same session: %+v, %d pending", o, b.Count())
	}
	// Another session, another command, another agent: asked.
	other := []*Hold{hold("s2", "git", 50*time.Millisecond), hold("s1", "curl", 50*time.Millisecond), hold("s1", "git", 50*time.Millisecond)}
	other[2].Request.Agent = "codex"
	for i, h := range other {
		if o := b.Hold(context.Background(), h); o.Approved || o.Record.Answer != AnswerTimeout {
			t.Errorf("other %d: %+v", i, o)
		}
	}
	b.EndSession("claude-code", "s1")
	if o := b.Hold(context.Background(), hold("s1", "git", 50*time.Millisecond)); o.Approved {
		t.Errorf("after the session ended: %+v", o)
	}
}

// A hold ends unanswered when it expires or its caller goes away, and is
// no longer pending.
func TestUnanswered(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	o := b.Hold(context.Background(), hold("s", "git", 20*time.Millisecond))
	if o.Approved || o.Record.Answer != AnswerTimeout || o.Record.WaitedMS < 20 {
		t.Errorf("timeout: %+v", o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := hold("s", "git", time.Minute)
	pending := make(chan api.Approval, 1)
	done := make(chan Outcome, 1)
	go func() { done <- b.Hold(WithWaiting(ctx, func(a api.Approval) { pending <- a }), h) }()
	a := <-pending
	cancel()
	if o := outcome(t, done); o.Approved || o.Record.Answer != AnswerCancelled {
		t.Errorf("cancelled: %+v", o)
	}
	if b.Count() != 0 {
		t.Errorf("%d pending", b.Count())
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerOnce, By: api.ByCLI}); err == nil {
		t.Error("a cancelled request took an answer")
	}
}

// A workspace request offers once, trust for the agent, trust for every
// agent and deny. Once approves this call and trusts nothing; each trust
// answer trusts the directory for whom it says, and a refusal to trust
// refuses the answer, which stays pending.
func TestWorkspace(t *testing.T) {
	t.Parallel()
	var trusted []string
	fail := true
	b := New(Options{Trust: func(dir, agent, by string) (string, error) {
		if fail {
			return "", errors.New("refused")
		}
		trusted = append(trusted, dir+" for "+agent+" by "+by)
		return dir, nil
	}})
	wsHold := func() *Hold {
		return &Hold{Request: api.Approval{Kind: api.ApprovalWorkspace, Agent: "claude-code", SessionID: "s", Workspace: "/w/api"}, TrustAgent: "claude-code", Timeout: time.Minute}
	}

	// Once: this call, nothing trusted.
	a, out := start(t, b, wsHold())
	if got := strings.Join(a.Answers, ","); got != "once,trust,trust_all,deny" {
		t.Errorf("answers %s", got)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerOnce, By: api.ByTray}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || o.Record.Answer != api.AnswerOnce || o.Record.Workspace != "/w/api" || len(trusted) != 0 {
		t.Errorf("once: %+v, trusted %v", o, trusted)
	}

	// Trust for the agent: refused first, then taken.
	a, out = start(t, b, wsHold())
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerTrust, By: api.ByTray}); err == nil {
		t.Fatal("a refused trust was taken")
	}
	fail = false
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerTrust, By: api.ByTray}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || o.Record.Workspace != "/w/api" || len(trusted) != 1 || trusted[0] != "/w/api for claude-code by approval" {
		t.Errorf("trust: %+v %v", o, trusted)
	}

	// Trust for every agent.
	a, out = start(t, b, wsHold())
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerTrustAll, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || len(trusted) != 2 || trusted[1] != "/w/api for  by approval" {
		t.Errorf("trust_all: %+v %v", o, trusted)
	}

	// Without an agent to name, only every agent's trust is offered; a
	// command request never offers trust.
	h := wsHold()
	h.TrustAgent = ""
	a, out = start(t, b, h)
	if got := strings.Join(a.Answers, ","); got != "once,trust_all,deny" {
		t.Errorf("answers without an agent %s", got)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerTrust, By: api.ByCLI}); err == nil {
		t.Error("trust for an unnamed agent was taken")
	}
	b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByCLI})
	outcome(t, out)
	a, out = start(t, b, hold("s", "git", time.Minute))
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerTrustAll, By: api.ByCLI}); err == nil {
		t.Error("a command request took a trust answer")
	}
	b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByCLI})
	outcome(t, out)
}

// Many answers racing one request: exactly one is taken.
func TestAnswerRace(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	a, out := start(t, b, hold("s", "git", time.Minute))
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerOnce, By: api.ByCLI}); err == nil {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	outcome(t, out)
	if taken != 1 {
		t.Errorf("%d answers taken", taken)
	}
}

// At most MaxPending requests wait; one more is refused at once.
func TestMaxPending(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var outs []<-chan Outcome
	for range MaxPending {
		_, out := start(t, b, hold("s", "git", time.Minute))
		outs = append(outs, out)
	}
	if o := b.Hold(ctx, hold("s", "git", time.Minute)); o.Approved || o.Record.Answer != AnswerTooMany {
		t.Errorf("one more: %+v", o)
	}
	for _, a := range b.Pending() {
		if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByCLI}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range outs {
		outcome(t, o)
	}
}

// egressHold is an egress request for host:443 of agent's session.
func egressHold(session, host string) *Hold {
	return &Hold{
		Request: api.Approval{Kind: api.ApprovalEgress, Agent: "claude-code", SessionID: session, Command: "npm install",
			Rule: "egress_unknown", Host: host, Port: 443, SaveEntry: host + ":443"},
		Timeout: time.Minute,
	}
}

// Egress requests: the answers offered, a session grant per destination
// and session, always and deny always through SaveEgress, and no rule.
func TestEgressAnswers(t *testing.T) {
	t.Parallel()
	var saved []string
	b := New(Options{SaveEgress: func(entry string, allow bool) (string, error) {
		saved = append(saved, fmt.Sprintf("%s %v", entry, allow))
		return "/state/rules.yaml", nil
	}})
	a, out := start(t, b, egressHold("s1", "registry.npmjs.org"))
	if got := strings.Join(a.Answers, " "); got != "once session always deny deny_always" {
		t.Errorf("answers %q", got)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, Rule: "match: npm", By: api.ByCLI}); err == nil || !strings.Contains(err.Error(), "takes no rule") {
		t.Errorf("a rule for an egress request: %v", err)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerSession, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || o.Record.Answer != api.AnswerSession {
		t.Errorf("outcome %+v", o)
	}
	// The grant covers this session and destination only.
	if o := b.Hold(context.Background(), egressHold("s1", "registry.npmjs.org")); !o.Approved || o.Record.By != BySession {
		t.Errorf("same session and destination: %+v", o)
	}
	for _, h := range []*Hold{egressHold("s2", "registry.npmjs.org"), egressHold("s1", "pypi.org"), hold("s1", "npm install", time.Minute)} {
		a, out := start(t, b, h)
		if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByCLI}); err != nil {
			t.Fatal(err)
		}
		if o := outcome(t, out); o.Approved {
			t.Errorf("%s %s %s: approved by another's grant", h.Request.Kind, h.Request.SessionID, h.Request.Host)
		}
	}
	a, out = start(t, b, egressHold("", "pypi.org"))
	resp, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, By: api.ByTray})
	if o := outcome(t, out); err != nil || !o.Approved || o.Record.SavedEntry != "pypi.org:443" || resp.SavedFile != "/state/rules.yaml" {
		t.Errorf("always: %+v %+v %v", o, resp, err)
	}
	a, out = start(t, b, egressHold("", "evil.test"))
	b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDenyAlways, By: api.ByCLI})
	if o := outcome(t, out); o.Approved || o.Record.SavedEntry != "evil.test:443" {
		t.Errorf("deny always: %+v", o)
	}
	if got := strings.Join(saved, ", "); got != "pypi.org:443 true, evil.test:443 false" {
		t.Errorf("saved %q", got)
	}
}

// A person may save the *.domain form of the destination's domain
// instead of its exact host:port, and nothing wider: not a one-label
// domain, not another domain, not another port, not for an IP address,
// and only with always or deny always.
func TestEgressAlwaysWildcardPicked(t *testing.T) {
	t.Parallel()
	var saved []string
	b := New(Options{SaveEgress: func(entry string, allow bool) (string, error) {
		saved = append(saved, entry)
		return "/state/rules.yaml", nil
	}})
	a, out := start(t, b, egressHold("", "registry.npmjs.org"))
	for _, c := range []struct{ answer, entry, err string }{
		{api.AnswerAlways, "*.org", "too broad"},
		{api.AnswerAlways, "*", "want the *.domain form"},
		{api.AnswerAlways, "*.pypi.org", "registry.npmjs.org is not in pypi.org"},
		{api.AnswerAlways, "*.npmjs.org:80", "the destination's port is 443"},
		{api.AnswerAlways, "registry.npmjs.org:443", "want the *.domain form"},
		{api.AnswerOnce, "*.npmjs.org", "goes with always or deny_always"},
	} {
		if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: c.answer, Entry: c.entry, By: api.ByCLI}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %q: %v, want %q", c.answer, c.entry, err, c.err)
		}
	}
	resp, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, Entry: "*.npmjs.org", By: api.ByCLI})
	if o := outcome(t, out); err != nil || !o.Approved || o.Record.SavedEntry != "*.npmjs.org" || resp.SavedEntry != "*.npmjs.org" {
		t.Errorf("always *.npmjs.org: %+v %+v %v", o, resp, err)
	}
	lit := egressHold("", "203.0.113.7")
	lit.Request.Literal = true
	a, _ = start(t, b, lit)
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, Entry: "*.113.7", By: api.ByCLI}); err == nil || !strings.Contains(err.Error(), "an IP address is saved only as itself") {
		t.Errorf("an IP literal's wildcard: %v", err)
	}
	if strings.Join(saved, ",") != "*.npmjs.org" {
		t.Errorf("saved %q", saved)
	}
}
