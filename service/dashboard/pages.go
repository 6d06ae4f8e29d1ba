package dashboard

// Approvals, workspaces, the policy in force and doctor: each calls the
// service's own functions, as the admission API and the CLI do.

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// answerLabels are the buttons of each answer.
var answerLabels = map[string]string{
	api.AnswerOnce:       "Approve once",
	api.AnswerSession:    "Approve for session",
	api.AnswerAlways:     "Always",
	api.AnswerDeny:       "Deny",
	api.AnswerDenyAlways: "Deny always",
	api.AnswerTrustAll:   "Trust this directory for every agent",
}

// answerLabel is the button of the answer ans to a.
func answerLabel(a api.Approval, ans string) string {
	switch {
	case a.Kind == api.ApprovalWorkspace && ans == api.AnswerOnce:
		return "Approve once (this call only, nothing trusted)"
	case a.Kind == api.ApprovalEgress && ans == api.AnswerOnce:
		return "Allow for this command"
	case a.Kind == api.ApprovalEgress && ans == api.AnswerSession:
		return "Allow for this session"
	case a.Kind == api.ApprovalEgress && ans == api.AnswerAlways:
		return "Always allow"
	case a.Kind == api.ApprovalEgress && ans == api.AnswerDenyAlways:
		return "Always deny"
	case ans == api.AnswerPreset:
		return "Allow " + presetWhat(a.Preset) + " hosts for " + termesc.Line(a.Agent)
	case ans == api.AnswerTrust:
		return "Trust " + termesc.Line(a.Workspace) + " for " + termesc.Line(a.Agent)
	case ans == api.AnswerTrustAll:
		return "Trust " + termesc.Line(a.Workspace) + " for every agent"
	}
	if l, ok := answerLabels[ans]; ok {
		return l
	}
	return ans
}

// presetWhat names the preset's hosts, as the preset table words it
// (policy.EgressPresets): "the npm registry".
func presetWhat(name string) string {
	if p, ok := policy.EgressPresetNamed(name); ok {
		return p.What
	}
	return "the " + termesc.Line(name) + " preset's"
}

// An answerButton is one answer. Pick, for always and deny always on an
// egress request, is the entry it saves: the one picked, which the page's
// script keeps in step with the choice.
type answerButton struct {
	Value, Label, Pick string
	// Allows says the answer lets the connection through: on a request
	// to the host's loopback it needs the local-service box ticked.
	Allows bool
}

// A pick is one entry always and deny always may save: the exact
// destination (the default) or one of the *.domain entries the service
// offers (api.Approval.Entries), no other.
type pick struct {
	Entry   string
	Checked bool
}

type approvalView struct {
	A       api.Approval
	Buttons []answerButton
	// Always says the request offers a rule to save, shown editable;
	// RuleRows is how many rows show it whole.
	Always   bool
	RuleRows int
	// Picks are the entries always and deny always may save, when the
	// service offers more than the exact one.
	Picks []pick
	// Preset names the hosts the preset answer allows, and for whom.
	Preset string
}

// viewApproval is a request as the page shows it: its answers, what each
// saves, and the picks offered, only as the service gave them.
func viewApproval(a api.Approval) approvalView {
	av := approvalView{A: a}
	for _, ans := range a.Answers {
		b := answerButton{Value: ans, Label: answerLabel(a, ans), Allows: api.Lets(ans)}
		if a.Kind == api.ApprovalEgress && (ans == api.AnswerAlways || ans == api.AnswerDenyAlways) {
			b.Pick = a.SaveEntry
		}
		av.Buttons = append(av.Buttons, b)
		av.Always = av.Always || (ans == api.AnswerSession || ans == api.AnswerAlways || ans == api.AnswerDenyAlways) && a.SaveRule != ""
	}
	av.RuleRows = strings.Count(a.SaveRule, "\n") + 2
	if a.Kind == api.ApprovalEgress && len(a.Entries) > 0 && (slices.Contains(a.Answers, api.AnswerAlways) || slices.Contains(a.Answers, api.AnswerDenyAlways)) {
		av.Picks = append(av.Picks, pick{a.SaveEntry, true})
		for _, e := range a.Entries {
			av.Picks = append(av.Picks, pick{Entry: e})
		}
	}
	if p, ok := policy.EgressPresetNamed(a.Preset); ok && slices.Contains(a.Answers, api.AnswerPreset) {
		av.Preset = strings.Join(p.Entries, ", ") + " for " + termesc.Line(a.Agent)
	}
	return av
}

type approvalsView struct {
	Pending []approvalView
	History []historyRow
	Error   string
}

type historyRow struct {
	Row Row
	A   *api.ApprovalRecord
}

func (s *Server) approvals(w http.ResponseWriter, r *http.Request, ss *session) {
	var v approvalsView
	for _, a := range s.opts.Service.Approvals() {
		v.Pending = append(v.Pending, viewApproval(a))
	}
	if s.opts.Trail != nil {
		es, err := s.opts.Trail.List(r.Context(), audit.Filter{Answered: true, Calls: true, Limit: pageSize})
		if err != nil {
			v.Error = err.Error()
		}
		for i := range es {
			v.History = append(v.History, historyRow{rowOf(&es[i]), es[i].Event.Approval})
		}
	}
	s.render(w, http.StatusOK, "approvals", "Approvals", ss, v)
}

// answer applies the person's answer. The rule is sent only with always
// and deny_always, and only when it was edited: unchanged, the request's
// own rule is saved. So is the entry picked: only when it is not the
// exact destination, which the service saves without one. The
// local-service tick goes with the answers that let a connection
// through; the service judges both.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, ss *session) {
	req := api.AnswerRequest{ID: r.PostFormValue("id"), Answer: r.PostFormValue("answer"), By: api.ByDashboard}
	pending := s.opts.Service.Approvals()
	var a api.Approval
	if i := slices.IndexFunc(pending, func(a api.Approval) bool { return a.ID == req.ID }); i >= 0 {
		a = pending[i]
	}
	if req.Answer == api.AnswerAlways || req.Answer == api.AnswerDenyAlways {
		rule := strings.ReplaceAll(r.PostFormValue("rule"), "\r\n", "\n")
		if a.ID != "" && strings.TrimSpace(rule) != strings.TrimSpace(a.SaveRule) {
			req.Rule = rule
		}
		if e := r.PostFormValue("entry"); e != "" && e != a.SaveEntry {
			req.Entry = e
		}
	}
	req.LocalService = r.PostFormValue("local_service") != "" && api.Lets(req.Answer)
	resp := s.opts.Service.Answer(req)
	switch {
	case resp.Error != "":
		s.setFlash(ss, "Not answered: "+resp.Error)
	case resp.SavedRule != "":
		s.setFlash(ss, "Answered "+req.Answer+"; saved the rule:\n"+resp.SavedRule)
	case resp.SavedEntry != "":
		s.setFlash(ss, "Answered "+req.Answer+"; saved "+resp.SavedEntry+" in "+resp.SavedFile+".")
	default:
		s.setFlash(ss, "Answered "+req.Answer+".")
	}
	http.Redirect(w, r, "/approvals", http.StatusSeeOther)
}

type workspacesView struct {
	Workspaces []api.Workspace
}

func (s *Server) workspaces(w http.ResponseWriter, r *http.Request, ss *session) {
	s.render(w, http.StatusOK, "workspaces", "Workspaces", ss, workspacesView{s.opts.Service.Workspaces()})
}

// addWorkspace trusts a directory, with gatehouse workspace add's
// refusals. The path must be absolute: the service's working directory
// means nothing to the person typing it.
func (s *Server) addWorkspace(w http.ResponseWriter, r *http.Request, ss *session) {
	dir := strings.TrimSpace(r.PostFormValue("dir"))
	var re *trust.RefusedError
	switch p, err := s.addDir(dir); {
	case errors.As(err, &re):
		s.setFlash(ss, "Refused: "+err.Error()+"\n"+trust.RefusedHint)
	case err != nil:
		s.setFlash(ss, "Not added: "+err.Error())
	default:
		s.setFlash(ss, "Trusted "+p+".")
	}
	http.Redirect(w, r, "/workspaces", http.StatusSeeOther)
}

func (s *Server) addDir(dir string) (string, error) {
	if !filepath.IsAbs(dir) && !strings.HasPrefix(dir, "~/") {
		return "", errors.New("want an absolute path, like /home/you/src/app")
	}
	return s.opts.Service.AddWorkspace(dir, api.ByDashboard)
}

func (s *Server) removeWorkspace(w http.ResponseWriter, r *http.Request, ss *session) {
	dir := r.PostFormValue("dir")
	if err := s.opts.Service.RemoveWorkspace(dir); err != nil {
		s.setFlash(ss, "Not removed: "+err.Error())
	} else {
		s.setFlash(ss, "Removed "+dir+".")
	}
	http.Redirect(w, r, "/workspaces", http.StatusSeeOther)
}

// policyView is the configuration in force.
type policyView struct {
	Files   []string
	Entries []entryRow
	Rules   []ruleRow
	Egress  []egressRow
	Grants  []grantRow
}

type entryRow struct {
	Field, Value, Layer, Source string
}

type ruleRow struct {
	N                                       int
	Name, Origin, Action, On, Match, Reason string
}

type egressRow struct {
	Agent, Field string
	List         []string
}

type grantRow struct {
	ID, Mapped string
	Agents     []string
}

func (s *Server) policy(w http.ResponseWriter, r *http.Request, ss *session) {
	l := s.opts.Service.Config()
	c := &l.Config
	v := policyView{Files: l.Files}
	for _, e := range l.Entries() {
		v.Entries = append(v.Entries, entryRow{e.Field, e.ValueString(), l.Layer(e.Source), e.Source.String()})
	}
	// The order Decide applies them in: every built-in rule, then the
	// first matching managed rule, then the first matching user (and
	// saved) rule, then the default and dynamic actions.
	for _, b := range policy.BuiltinRules {
		on := "on"
		if !c.Policy.BuiltinEnabled(b.Name) {
			on = "off (policy.disabled_builtin_rules)"
		}
		v.Rules = append(v.Rules, ruleRow{Name: b.Name, Origin: policy.OriginBuiltin, Action: b.Action, On: on, Match: "shape " + string(b.Shape), Reason: b.Reason})
	}
	for _, rl := range c.Policy.Rules {
		v.Rules = append(v.Rules, ruleRow{Name: rl.Name, Origin: rl.Origin(), Action: rl.Action, On: "on", Match: ruleMatch(&rl), Reason: rl.Reason})
	}
	v.Rules = append(v.Rules,
		ruleRow{Name: "default_action", Origin: l.Layer(l.Sources["policy.default_action"]), Action: c.Policy.DefaultAction, On: "on", Match: "a command no rule decides"},
		ruleRow{Name: "dynamic_action", Origin: l.Layer(l.Sources["policy.dynamic_action"]), Action: c.Policy.DynamicAction, On: "on", Match: "a command analysis cannot resolve statically"})
	for i := range v.Rules {
		v.Rules[i].N = i + 1
	}
	// Each list as the agent's commands get it: the one in force, and the
	// destinations approvals saved (always), within the managed bound.
	v.Egress = append(v.Egress, egressRow{"every other agent", "policy.egress_allowlist", append(slices.Clone(c.Policy.EgressAllowlist), c.EgressSavedFor("")...)})
	for _, a := range sortedKeys(c.Policy.EgressAllowlistByAgent) {
		list, field := c.Policy.EgressAllowlistFor(a)
		v.Egress = append(v.Egress, egressRow{a, field, append(slices.Clone(list), c.EgressSavedFor(a)...)})
	}
	v.Grants = grantRows(c)
	s.render(w, http.StatusOK, "policy", "Policy", ss, v)
}

// ruleMatch says what a configured rule matches, as its YAML would.
func ruleMatch(r *policy.Rule) string {
	var parts []string
	if len(r.Command) > 0 {
		parts = append(parts, "command "+strings.Join(r.Command, " | "))
	}
	for _, a := range r.Args {
		switch {
		case a.Exact != nil:
			parts = append(parts, "exact ["+strings.Join(a.Exact, " ")+"]")
		case len(a.Flag) > 0:
			parts = append(parts, "flag "+strings.Join(a.Flag, " | "))
		case len(a.Seq) > 0:
			parts = append(parts, "seq "+strings.Join(a.Seq, " "))
		case len(a.Glob) > 0:
			parts = append(parts, "glob "+strings.Join(a.Glob, " | "))
		case a.Regex != "":
			parts = append(parts, "regex "+a.Regex)
		}
	}
	if r.Where != "" && r.Where != policy.WhereAny {
		parts = append(parts, "where "+r.Where)
	}
	if len(r.Script) > 0 {
		parts = append(parts, "script "+strings.Join(r.Script, " | "))
	}
	if len(r.Flags) > 0 {
		parts = append(parts, "flags "+strings.Join(r.Flags, ", "))
	}
	if len(parts) == 0 {
		return "every command"
	}
	return strings.Join(parts, "; ")
}

// grantRows are the credentials commands may get: each id, how it is
// mapped, and the agents it reaches. Ids only: values never leave the
// keychain.
func grantRows(c *policy.Config) []grantRow {
	mapped := map[string][]string{}
	for name, m := range c.Exec.Credentials.Env {
		if id := m.ID(); id != "" {
			mapped[id] = append(mapped[id], "env "+name+" ("+m.EffectiveMode()+")")
		}
	}
	for name, m := range c.Exec.Credentials.Files {
		if id := m.ID(); id != "" {
			mapped[id] = append(mapped[id], "file "+name+" ("+m.EffectiveMode()+")")
		}
	}
	for id := range c.Policy.CredentialGrants {
		if _, ok := mapped[id]; !ok {
			mapped[id] = nil
		}
	}
	var out []grantRow
	for _, id := range sortedKeys(mapped) {
		m := mapped[id]
		sort.Strings(m)
		agents, ok := c.Policy.CredentialGrants[id]
		if !ok {
			agents = []string{"every agent"}
		}
		out = append(out, grantRow{ID: id, Mapped: strings.Join(m, ", "), Agents: agents})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// doctorView is gatehouse doctor's report, as the service's API serves
// it (api.DoctorReport): its verdict, this user's checks, and apart from
// them what IT's managed settings would add.
type doctorView struct {
	Report *api.DoctorReport
	// Verdict says what the checks found; Class is ok, warn or bad.
	Verdict string
	Class   string
	Checks  []doctorRow
	Managed []doctorRow
	Error   string
}

// A doctorRow is one check with its mark.
type doctorRow struct {
	api.DoctorCheck
	Glyph, Class string
}

func (s *Server) doctor(w http.ResponseWriter, r *http.Request, ss *session) {
	var v doctorView
	if s.opts.Doctor == nil {
		v.Error = "doctor is not available here; run gatehouse doctor in a terminal"
	} else if rep, err := s.opts.Doctor(r.Context()); err != nil {
		v.Error = err.Error()
	} else {
		v = viewDoctor(rep)
	}
	s.render(w, http.StatusOK, "doctor", "Doctor", ss, v)
}

// viewDoctor is the page of a report: a verdict that never says "no
// problem" alone above a warning.
func viewDoctor(rep *api.DoctorReport) doctorView {
	v := doctorView{Report: rep}
	problems, warnings := rep.Count(api.DoctorProblem), rep.Count(api.DoctorWarning)
	switch {
	case problems > 0:
		v.Verdict, v.Class = plural(problems, "problem")+" found", "bad"
		if warnings > 0 {
			v.Verdict += " and " + plural(warnings, "warning")
		}
		v.Verdict += ": each says how to fix it"
	case warnings > 0:
		v.Verdict, v.Class = "No problem, "+plural(warnings, "warning")+": each says how to fix it", "warn"
	default:
		v.Verdict, v.Class = "No problem found", "ok"
	}
	for _, c := range rep.Checks {
		v.Checks = append(v.Checks, doctorRowOf(c))
	}
	for _, c := range rep.Managed {
		v.Managed = append(v.Managed, doctorRowOf(c))
	}
	return v
}

func doctorRowOf(c api.DoctorCheck) doctorRow {
	switch c.State {
	case api.DoctorOK:
		return doctorRow{c, "✓", "ok"}
	case api.DoctorWarning:
		return doctorRow{c, "!", "warn"}
	case api.DoctorProblem:
		return doctorRow{c, "✗", "bad"}
	}
	return doctorRow{c, "·", "advice"}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
