// Package approvals is the hold stage's broker: a call an ask rule (or a
// project outside every workspace root, or a running command's connection
// to a destination no egress allowlist entry covers) holds becomes a
// pending request
// that waits for a person's answer — from the tray, the dashboard or
// `gatehouse approve` on a terminal — until it expires. It keeps the
// approve-for-session grants, and hands an "always" answer's rule to be
// saved (docs/approvals.md).
package approvals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// SessionTTL is how long an approve-for-session answer lasts at most.
const SessionTTL = 12 * time.Hour

// Answers of a held call that nobody gave.
const (
	AnswerTimeout   = "timeout"
	AnswerCancelled = "cancelled"
	// AnswerTooMany: MaxPending requests were already waiting.
	AnswerTooMany = "too_many_pending"
)

// MaxPending bounds the requests waiting at once: each holds a caller's
// connection to the service, and the person's answers need one too.
const MaxPending = 32

// BySession marks a call a session grant answered without asking.
const BySession = "session"

// A Hold is what the pipeline asks a person about.
type Hold struct {
	// Request describes the call; the broker sets its id, times and the
	// answers offered.
	Request api.Approval
	// Save is the rule an always answer saves (as allow) and deny always
	// (as deny); nil when neither is offered (a managed rule holds it, or
	// the deciding node is not a command a rule can name).
	Save *policy.Rule
	// Matches reports whether a rule matches the held command's deciding
	// node: an answer's own rule must, and a session grant answers a later
	// hold when its rule does. Nil for a workspace request.
	Matches func(r *policy.Rule) bool
	// Timeout is how long the call waits (policy.approval_timeout_seconds).
	Timeout time.Duration
	// TrustAgent, for a workspace request, is the agent the trust answer
	// trusts the directory for; "" offers trust for every agent only.
	TrustAgent string
	// PresetAgent, for an egress request naming a preset
	// (Request.Preset), is the agent the preset answer saves the preset's
	// entries for; "" offers no preset answer.
	PresetAgent string
}

// An Outcome is how a hold ended.
type Outcome struct {
	Approved bool
	// LocalService says the approving answer (or the session grant)
	// carried the person's tick on "this is a service on my machine": only
	// then does an approved host-loopback destination get reached.
	LocalService bool
	Record       api.ApprovalRecord
}

// Options configure a Broker. Every field may be nil.
type Options struct {
	// SaveRule saves r in the saved rules file and puts it in force; an
	// error refuses the answer, which stays pending.
	SaveRule func(r *policy.Rule) error
	// SaveEgress saves the egress entry (host:port) an egress request's
	// always (allow) or deny_always (!allow) answer gives, puts it in
	// force, and returns the file it is in; an error refuses the answer.
	SaveEgress func(entry string, allow bool) (file string, err error)
	// SavePreset saves the entries of the egress preset called name for
	// agent (policy.AllowEgressPreset), puts them in force, and returns
	// the file and the preset's entries; an error refuses the answer.
	SavePreset func(name, agent string) (file string, entries []string, err error)
	// Trust trusts dir as a workspace root for agent ("" for every agent)
	// and returns the path trusted; an error refuses the answer.
	Trust func(dir, agent, by string) (string, error)
	// Publish puts a notice on the live stream.
	Publish func(api.StreamNotice)
	// Opened is told of each new request (the notification).
	Opened func(a api.Approval)
	// Answered is told when a request is no longer pending.
	Answered func(a api.Approval, rec api.ApprovalRecord)
}

// A Broker holds the pending requests and the session grants. It is safe
// for concurrent use.
type Broker struct {
	opts Options

	mu      sync.Mutex
	pending map[string]*pending
	order   []string
	grants  []grant
}

type pending struct {
	a        api.Approval
	h        *Hold
	claimed  bool // an answer is being applied
	answered chan Outcome
}

// A grant is an approve-for-session answer: later holds of the same agent,
// session and holding rule whose command its rule matches run without
// asking, until it expires. An egress grant (kind egress) lets the same
// agent session's commands reach dest, host:port.
type grant struct {
	kind, dest           string
	local                bool // the answer confirmed a service on this machine
	agent, session, rule string
	match                *policy.Rule // nil: the exact command
	command              string
	expires              time.Time
}

// New returns a Broker.
func New(opts Options) *Broker {
	return &Broker{opts: opts, pending: map[string]*pending{}}
}

// Hold asks about h and waits for the answer, until it expires (denied,
// answer timeout) or ctx ends (denied, cancelled: the caller is gone). A
// session grant answers it at once.
func (b *Broker) Hold(ctx context.Context, h *Hold) Outcome {
	start := time.Now()
	if out, ok := b.granted(h, start); ok {
		return out
	}
	a := h.Request
	a.ID = newID()
	a.Created = start.UTC()
	a.Expires = start.Add(h.Timeout).UTC()
	a.Answers = offered(h)
	if a.Kind == api.ApprovalEgress && !a.Literal {
		// The *.domain picks always may save instead of the exact
		// destination: computed once, here, for every face.
		a.Entries = egress.Wildcards(a.Host, uint16(a.Port))
	}
	p := &pending{a: a, h: h, answered: make(chan Outcome, 1)}
	b.mu.Lock()
	if len(b.pending) >= MaxPending {
		b.mu.Unlock()
		return Outcome{Record: api.ApprovalRecord{Kind: a.Kind, Answer: AnswerTooMany, Rule: a.Rule}}
	}
	b.pending[a.ID] = p
	b.order = append(b.order, a.ID)
	b.mu.Unlock()
	b.publish(api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &a})
	if b.opts.Opened != nil {
		b.opts.Opened(a)
	}
	if fn, ok := ctx.Value(waitingKey{}).(func(api.Approval)); ok {
		fn(a)
	}

	timer := time.NewTimer(h.Timeout)
	defer timer.Stop()
	var out Outcome
	select {
	case out = <-p.answered:
	case <-timer.C:
		out = b.abandon(p, AnswerTimeout)
	case <-ctx.Done():
		out = b.abandon(p, AnswerCancelled)
	}
	out.Record.WaitedMS = time.Since(start).Milliseconds()
	b.publish(api.StreamNotice{Type: api.NoticeApprovalAnswered, Approval: &a, Answer: &out.Record})
	if b.opts.Answered != nil {
		b.opts.Answered(a, out.Record)
	}
	return out
}

// abandon ends p unanswered, unless an answer is being applied: then that
// answer is the outcome.
func (b *Broker) abandon(p *pending, why string) Outcome {
	b.mu.Lock()
	if p.claimed {
		b.mu.Unlock()
		return <-p.answered
	}
	b.remove(p.a.ID)
	b.mu.Unlock()
	return Outcome{Record: api.ApprovalRecord{ID: p.a.ID, Kind: p.a.Kind, Answer: why, Rule: p.a.Rule, Workspace: p.a.Workspace}}
}

// remove drops id from the pending requests; b.mu is held.
func (b *Broker) remove(id string) {
	delete(b.pending, id)
	b.order = slices.DeleteFunc(b.order, func(s string) bool { return s == id })
}

// offered returns the answers a hold offers, in menu order.
func offered(h *Hold) []string {
	if h.Request.Kind == api.ApprovalEgress {
		out := []string{api.AnswerOnce}
		if h.Request.SessionID != "" {
			out = append(out, api.AnswerSession)
		}
		if h.Request.SaveEntry != "" {
			out = append(out, api.AnswerAlways)
		}
		if h.Request.Preset != "" && h.PresetAgent != "" && !h.Request.HostLoopback {
			out = append(out, api.AnswerPreset)
		}
		out = append(out, api.AnswerDeny)
		if h.Request.SaveEntry != "" {
			out = append(out, api.AnswerDenyAlways)
		}
		return out
	}
	if h.Request.Kind == api.ApprovalWorkspace {
		out := []string{api.AnswerOnce}
		if h.TrustAgent != "" {
			out = append(out, api.AnswerTrust)
		}
		return append(out, api.AnswerTrustAll, api.AnswerDeny)
	}
	out := []string{api.AnswerOnce}
	if h.Request.SessionID != "" {
		out = append(out, api.AnswerSession)
	}
	if h.Save != nil {
		out = append(out, api.AnswerAlways)
	}
	out = append(out, api.AnswerDeny)
	if h.Save != nil {
		out = append(out, api.AnswerDenyAlways)
	}
	return out
}

// granted answers h from a session grant, when one covers it.
func (b *Broker) granted(h *Hold, now time.Time) (Outcome, bool) {
	r := h.Request
	if r.Kind != api.ApprovalCommand && r.Kind != api.ApprovalEgress || r.SessionID == "" {
		return Outcome{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grants = slices.DeleteFunc(b.grants, func(g grant) bool { return now.After(g.expires) })
	for _, g := range b.grants {
		if g.kind != r.Kind || g.agent != r.Agent || g.session != r.SessionID || g.rule != r.Rule {
			continue
		}
		rec := api.ApprovalRecord{Kind: r.Kind, Answer: api.AnswerSession, By: BySession, Rule: r.Rule}
		if r.Kind == api.ApprovalEgress {
			if g.dest == egressDest(r) && g.local == r.HostLoopback {
				return Outcome{Approved: true, LocalService: g.local, Record: rec}, true
			}
			continue
		}
		if (g.match != nil && h.Matches != nil && h.Matches(g.match)) || (g.match == nil && g.command == r.Command) {
			return Outcome{Approved: true, Record: rec}, true
		}
	}
	return Outcome{}, false
}

// EndSession drops the session grants of agent's session.
func (b *Broker) EndSession(agent, session string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grants = slices.DeleteFunc(b.grants, func(g grant) bool { return g.agent == agent && g.session == session })
}

// Pending returns the pending requests, oldest first.
func (b *Broker) Pending() []api.Approval {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]api.Approval, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, b.pending[id].a)
	}
	return out
}

// Count is how many requests are pending.
func (b *Broker) Count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.order)
}

// Answer applies a person's answer. The request stays pending when the
// answer is refused: an unknown id, an answer not offered, a rule that does
// not match the held command or cannot be saved.
func (b *Broker) Answer(req api.AnswerRequest) (api.AnswerResponse, error) {
	switch req.By {
	case api.ByCLI, api.ByTray, api.ByDashboard, api.ByNotification:
	default:
		return api.AnswerResponse{}, fmt.Errorf("by %q: want cli, tray, dashboard or notification", req.By)
	}
	b.mu.Lock()
	p, ok := b.pending[req.ID]
	switch {
	case !ok:
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("no approval request %q is pending (answered, expired, or never made); list them with gatehouse approvals", req.ID)
	case p.claimed:
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("approval request %s is being answered already", req.ID)
	case !slices.Contains(p.a.Answers, req.Answer):
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("answer %q is not offered for request %s; it offers %v", req.Answer, req.ID, p.a.Answers)
	case req.Entry != "" && (p.a.Kind != api.ApprovalEgress || req.Answer != api.AnswerAlways && req.Answer != api.AnswerDenyAlways):
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("an entry goes with always or deny_always on a request about a destination")
	case req.Entry != "" && wildcardFor(req.Entry, p.a) != nil:
		err := wildcardFor(req.Entry, p.a)
		b.mu.Unlock()
		return api.AnswerResponse{}, err
	case req.LocalService && !p.a.HostLoopback:
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("request %s is not about a service on this machine: the local-service tick (--local-service) goes only with a request about the host's loopback", req.ID)
	case p.a.HostLoopback && !req.LocalService && api.Lets(req.Answer):
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("request %s is about %s, a service on this machine (the host's loopback, outside the sandbox): approving it needs the box \"this is a service on my machine\" ticked (gatehouse approve %s --local-service)", req.ID, p.a.SaveEntry, req.ID)
	case req.Rule != "" && p.a.Kind == api.ApprovalEgress:
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("request %s is about a destination: its always saves %s, and takes no rule", req.ID, p.a.SaveEntry)
	case req.Rule != "" && req.Answer != api.AnswerAlways && req.Answer != api.AnswerDenyAlways:
		b.mu.Unlock()
		return api.AnswerResponse{}, fmt.Errorf("a rule goes with always or deny_always, not %s", req.Answer)
	}
	p.claimed = true
	b.mu.Unlock()

	out, resp, err := b.apply(p, req)
	b.mu.Lock()
	if err != nil {
		p.claimed = false
		b.mu.Unlock()
		return api.AnswerResponse{}, err
	}
	b.remove(p.a.ID)
	b.mu.Unlock()
	p.answered <- out
	return resp, nil
}

// apply carries out an answer's effects: the grant, the saved rule, the
// trusted workspace.
func (b *Broker) apply(p *pending, req api.AnswerRequest) (Outcome, api.AnswerResponse, error) {
	a := p.a
	rec := api.ApprovalRecord{ID: a.ID, Kind: a.Kind, Answer: req.Answer, By: req.By, Rule: a.Rule, Workspace: a.Workspace}
	out := Outcome{Record: rec}
	var resp api.AnswerResponse
	switch req.Answer {
	case api.AnswerOnce:
		// For a workspace request too: this call, and nothing trusted.
		out.Approved = true
	case api.AnswerPreset:
		if b.opts.SavePreset == nil {
			return out, resp, errors.New("presets cannot be saved here")
		}
		file, entries, err := b.opts.SavePreset(a.Preset, p.h.PresetAgent)
		if err != nil {
			return out, resp, fmt.Errorf("saving preset %s for %s: %w", a.Preset, p.h.PresetAgent, err)
		}
		saved := strings.Join(entries, ", ")
		out.Approved = true
		out.Record.SavedEntry, out.Record.SavedFile = saved, file
		resp.SavedEntry, resp.SavedFile = saved, file
	case api.AnswerTrust, api.AnswerTrustAll:
		if b.opts.Trust == nil {
			return out, resp, errors.New("workspaces cannot be trusted here")
		}
		agent := p.h.TrustAgent
		if req.Answer == api.AnswerTrustAll {
			agent = ""
		}
		dir, err := b.opts.Trust(a.Workspace, agent, "approval")
		if err != nil {
			return out, resp, fmt.Errorf("trusting %s: %w", a.Workspace, err)
		}
		out.Approved = true
		out.Record.Workspace = dir
	case api.AnswerSession:
		out.Approved = true
		g := grant{kind: a.Kind, agent: a.Agent, session: a.SessionID, rule: a.Rule, command: a.Command, expires: time.Now().Add(SessionTTL), local: req.LocalService}
		if a.Kind == api.ApprovalEgress {
			g.dest = egressDest(a)
		}
		if p.h.Save != nil {
			m := *p.h.Save
			m.Action = policy.ActionAllow
			g.match = &m
		}
		b.mu.Lock()
		b.grants = append(b.grants, g)
		b.mu.Unlock()
	case api.AnswerAlways, api.AnswerDenyAlways:
		if a.Kind == api.ApprovalEgress {
			if b.opts.SaveEgress == nil {
				return out, resp, errors.New("destinations cannot be saved here")
			}
			allow := req.Answer == api.AnswerAlways
			entry := a.SaveEntry
			if req.Entry != "" {
				entry = req.Entry // the person's own pick (wildcardFor)
			}
			file, err := b.opts.SaveEgress(entry, allow)
			if err != nil {
				return out, resp, fmt.Errorf("saving %s: %w", entry, err)
			}
			out.Approved = allow
			out.Record.SavedEntry, out.Record.SavedFile = entry, file
			resp.SavedEntry, resp.SavedFile = entry, file
			break
		}
		action := policy.ActionAllow
		if req.Answer == api.AnswerDenyAlways {
			action = policy.ActionDeny
		}
		r, err := b.ruleOf(p, req.Rule, action)
		if err != nil {
			return out, resp, err
		}
		if b.opts.SaveRule == nil {
			return out, resp, errors.New("rules cannot be saved here")
		}
		if err := b.opts.SaveRule(r); err != nil {
			return out, resp, fmt.Errorf("saving rule %s: %w", r.Name, err)
		}
		out.Approved = action == policy.ActionAllow
		out.Record.SavedRule = r.Name
		resp.SavedRule = policy.RuleYAML(r)
	}
	out.LocalService = out.Approved && req.LocalService
	resp.OK = true
	return out, resp, nil
}

// ruleOf returns the rule an always answer saves: the request's, or the
// one the answer gives, which must match the held command.
func (b *Broker) ruleOf(p *pending, text, action string) (*policy.Rule, error) {
	if text == "" {
		if p.h.Save == nil {
			return nil, errors.New("this request offers no rule to save")
		}
		r := *p.h.Save
		r.Action = action
		if action == policy.ActionDeny {
			r.Name = policy.SavedRuleName("denied", &r)
			r.Reason = "denied always by a person"
		}
		return &r, nil
	}
	r, err := policy.ParseRule(text)
	if err != nil {
		return nil, fmt.Errorf("rule: %w", err)
	}
	r.Action = action
	if p.h.Matches == nil || !p.h.Matches(r) {
		return nil, fmt.Errorf("rule %s does not match the held command %q; a saved rule must cover the call it answers", r.Name, p.a.Command)
	}
	return r, nil
}

func (b *Broker) publish(n api.StreamNotice) {
	if b.opts.Publish != nil {
		n.Time = time.Now().UTC()
		b.opts.Publish(n)
	}
}

// egressDest is an egress request's destination as host:port.
func egressDest(a api.Approval) string {
	return net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
}

type waitingKey struct{}

// WithWaiting returns ctx carrying fn, which Hold calls with the request
// once it is pending: the caller tells its user it waits, and for what.
func WithWaiting(ctx context.Context, fn func(api.Approval)) context.Context {
	return context.WithValue(ctx, waitingKey{}, fn)
}

// newID returns a short id a person can type: 8 hex digits.
func newID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// wildcardFor checks entry, the person's pick for an egress request's
// always, instead of its exact host:port: only the *.domain form of a
// domain the host is or lies in, of at least two labels (never *.com or
// *), with the destination's port or none; never for an IP address.
func wildcardFor(entry string, a api.Approval) error {
	bad := func(why string) error {
		return fmt.Errorf("entry %q for %s: %s; the exact %s needs no entry", entry, a.SaveEntry, why, a.SaveEntry)
	}
	if a.Literal {
		return bad("an IP address is saved only as itself")
	}
	e, err := egress.ParseEntry(entry)
	if err != nil {
		return bad(err.Error())
	}
	d, ok := e.Wildcard()
	switch {
	case !ok:
		return bad("want the *.domain form")
	case !strings.Contains(d, "."):
		return bad("the domain needs at least two labels")
	case a.Host != d && !strings.HasSuffix(a.Host, "."+d):
		return bad(a.Host + " is not in " + d)
	case e.Port != 0 && int(e.Port) != a.Port:
		return bad(fmt.Sprintf("the destination's port is %d", a.Port))
	}
	return nil
}
