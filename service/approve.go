package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/waitline"
)

// The service's side of the hold stage: the broker every generation's
// pipeline holds calls in, the answers (localapi), the rules an "always"
// saves, and the live stream.

// Approvals returns the pending approval requests, oldest first.
func (s *Service) Approvals() []api.Approval { return s.approvals.Pending() }

// Answer applies a person's answer to a pending request.
func (s *Service) Answer(req api.AnswerRequest) api.AnswerResponse {
	resp, err := s.approvals.Answer(req)
	if err != nil {
		return api.AnswerResponse{Error: err.Error()}
	}
	s.log.Info("approval answered", "id", req.ID, "answer", req.Answer, "by", req.By)
	return resp
}

// Subscribe returns the live stream until ctx ends: the service's state
// and the pending requests first, then every notice as it happens. The
// channel is closed when ctx ends, the service stops, or the subscriber
// falls behind.
func (s *Service) Subscribe(ctx context.Context) (first []api.StreamNotice, rest <-chan api.StreamNotice) {
	rest = s.hub.subscribe(ctx)
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		// The stream is over (hub.end): say so, not "running".
		return []api.StreamNotice{{Type: api.NoticeService, State: "stopping", Time: time.Now().UTC()}}, rest
	}
	st := s.Status(ctx)
	first = append(first, api.StreamNotice{Type: api.NoticeService, State: "running", Status: st, Sandbox: &st.Sandbox})
	for _, a := range s.approvals.Pending() {
		first = append(first, api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &a})
	}
	return first, rest
}

// saveRule saves r in the saved rules file and reloads the configuration
// with it; when that configuration does not load, the file is put back and
// the error says why.
func (s *Service) saveRule(r *policy.Rule) error {
	path := s.opts.SavedRulesFile
	if path == "" {
		return errors.New("this service has no saved rules file")
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	rs, err := policy.ReadSavedRules(path)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(rs, func(x policy.Rule) bool { return x.Name == r.Name }) {
		return nil // saved before: the same rule has the same name
	}
	return s.rewriteSaved(path, func() error { return policy.WriteSavedRules(path, append(rs, *r)) })
}

// rewriteSaved writes the saved rules file at path (write) and reloads the
// configuration with it; when that does not load, the file is put back as
// it was (or removed, when there was none) and the error says why. The
// caller holds saveMu.
func (s *Service) rewriteSaved(path string, write func() error) error {
	old, oerr := os.ReadFile(path)
	if err := write(); err != nil {
		return err
	}
	if res := s.Reload(); !res.OK {
		if oerr == nil {
			os.WriteFile(path, old, 0o600)
		} else {
			os.Remove(path)
		}
		s.Reload()
		return fmt.Errorf("the configuration with it does not load: %s", res.Error)
	}
	return nil
}

// saveEgress saves an egress request's always (allow) or deny_always
// answer: entry (host:port) goes into the saved rules file's
// policy.egress_allowlist or policy.egress_denylist, and the
// configuration is reloaded with it; when that does not load, the file is
// put back and the error says why. It returns the file.
func (s *Service) saveEgress(entry string, allow bool) (string, error) {
	path := s.opts.SavedRulesFile
	if path == "" {
		return "", errors.New("this service has no saved rules file")
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	saved, err := policy.ReadSaved(path)
	if err != nil {
		return "", err
	}
	list := &saved.EgressAllow
	if !allow {
		list = &saved.EgressDeny
	}
	if slices.Contains(*list, entry) {
		return path, nil // saved before
	}
	*list = append(*list, entry)
	if err := s.rewriteSaved(path, func() error { return policy.WriteSaved(path, saved) }); err != nil {
		return "", err
	}
	return path, nil
}

// savePreset saves the entries of the egress preset called name for agent
// (an egress request's preset answer) in the saved rules file, through
// the one function `gatehouse egress allow --preset NAME --agent AGENT`
// uses (policy.AllowEgressPreset, within the managed bound), and reloads
// the configuration with them. It returns the file and the preset's
// entries.
func (s *Service) savePreset(name, agent string) (string, []string, error) {
	path := s.opts.SavedRulesFile
	if path == "" {
		return "", nil, errors.New("this service has no saved rules file")
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	saved, err := policy.ReadSaved(path)
	if err != nil {
		return "", nil, err
	}
	p, added, err := policy.AllowEgressPreset(&saved, s.Config().Config.ManagedEgress, name, agent)
	if err != nil {
		return "", nil, err
	}
	if len(added) > 0 {
		if err := s.rewriteSaved(path, func() error { return policy.WriteSaved(path, saved) }); err != nil {
			return "", nil, err
		}
	}
	return path, p.Entries, nil
}

// WaitingLine is the line a held call's caller prints: it waits, for
// what, and how to answer (waitline.Line, the same on every face).
func WaitingLine(a api.Approval) string { return waitline.Line(a, time.Now()) }

// Workspaces lists the workspace roots in force, then the trusted ones
// not in force now with the reason.
func (s *Service) Workspaces() []api.Workspace {
	if s.opts.Workspaces != nil {
		ws, err := s.opts.Workspaces(&s.Config().Config)
		if err == nil {
			return nonNilWorkspaces(ws)
		}
		s.log.Warn("listing the workspaces", "err", err)
	}
	g := s.gen.Load()
	var out []api.Workspace
	for _, r := range g.ex.WorkspaceRoots() {
		out = append(out, api.Workspace{Path: r, Origin: api.WorkspacePolicy})
	}
	return nonNilWorkspaces(out)
}

func nonNilWorkspaces(w []api.Workspace) []api.Workspace {
	if w == nil {
		return []api.Workspace{}
	}
	return w
}

// EndSession ends the approve-for-session grants of an agent's session.
func (s *Service) EndSession(agent, session string) {
	s.approvals.EndSession(agent, session)
	s.sessions.EndSession(agent, session)
	s.log.Info("session ended", "agent", agent, "session", session)
}
