package service

// This file cleans the output of an agent's own tools (Claude Code's Read
// and Grep, MCP tools' results: they run in the agent's process, outside
// every sandbox) before the model sees it. Its rules:
//
//   - the output goes through the same redaction as a command's output
//     (service/dlp): the values of the credentials in the keychain, in
//     their plain and encoded forms, then the built-in and configured
//     patterns. Every string in the output's JSON is redacted; its shape
//     (keys, numbers, the tool's own fields) is kept, so that the agent
//     shows it as it would have;
//   - every credential Gatehouse holds is redacted, not only those granted
//     to the asking agent: a file may hold the value another agent's
//     command was given;
//   - the keychain's values are read once and kept (a redactor) while the
//     configuration and the keychain's list of credentials, with the time
//     each was set, stay the same, and for at most outputCacheTTL;
//   - an output with something redacted is an audit event (action type
//     tool:output) naming the credentials and patterns, never a value; an
//     output with nothing to redact is handed back untouched and is not
//     recorded.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/dlp"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
)

// outputCacheTTL bounds how long a redactor is kept: a value replaced in
// the keychain by another tool (which leaves Gatehouse's set time as it
// was) is redacted at the latest this much later.
const outputCacheTTL = 30 * time.Second

// outputRedactors keeps the redactor of the configuration in force.
type outputRedactors struct {
	mu  sync.Mutex
	ex  *pipeline.Executor
	key string
	at  time.Time
	red *dlp.Redactor
}

// get returns the redactor for ex: the keychain's credentials and the
// configuration's patterns. A keychain that cannot be read gives a
// redactor of the patterns alone (no credential can be brokered from it
// either), logged.
func (c *outputRedactors) get(ex *pipeline.Executor, log *slog.Logger) (*dlp.Redactor, error) {
	store := ex.Keyring()
	var entries []broker.Entry
	var listErr error
	if store != nil {
		entries, listErr = broker.List(store)
	}
	var key strings.Builder
	if listErr != nil {
		fmt.Fprintf(&key, "error: %v\n", listErr)
	}
	for _, e := range entries {
		fmt.Fprintf(&key, "%s@%s\n", e.ID, e.SetAt.Format(time.RFC3339Nano))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.red != nil && c.ex == ex && c.key == key.String() && time.Since(c.at) < outputCacheTTL {
		return c.red, nil
	}
	// Logged when the redactor is made, not on every output.
	if listErr != nil {
		log.Warn("tool output: the keychain cannot be listed; redacting patterns only", "err", listErr)
	}
	var secrets []dlp.Secret
	for _, e := range entries {
		v, err := store.Get(e.ID)
		if err != nil {
			log.Warn("tool output: a credential cannot be read; it is not redacted", "credential", e.ID, "err", err)
			continue
		}
		if len(v) < dlp.MinSecretLen || len(v) > dlp.MaxSecretLen {
			continue // refused by cred set; stored by another tool
		}
		secrets = append(secrets, dlp.Secret{ID: e.ID, Value: v})
	}
	red, err := dlp.New(secrets, ex.Config().DLP())
	if err != nil {
		return nil, fmt.Errorf("tool output redaction: %w", err)
	}
	c.ex, c.key, c.at, c.red = ex, key.String(), time.Now(), red
	return red, nil
}

// ToolOutput redacts req's output, and records the redaction.
func (s *Service) ToolOutput(ctx context.Context, req api.ToolOutputRequest) (*api.ToolOutputResponse, error) {
	g := s.gen.Load()
	if len(req.Output) > api.MaxToolOutput {
		return nil, fmt.Errorf("the tool output is larger than %d bytes", api.MaxToolOutput)
	}
	red, err := s.outRed.get(g.ex, s.log)
	if err != nil {
		return nil, err
	}
	out, n, err := api.MapStrings(req.Output, red.RedactString)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return &api.ToolOutputResponse{}, nil
	}
	ev := api.Event{
		ID:            pipeline.NewID(),
		Time:          time.Now().UTC(),
		Agent:         req.Agent,
		Surface:       req.Surface,
		SessionID:     req.SessionID,
		ActionType:    api.ActionToolOutput,
		Decision:      api.DecisionAllow,
		Cwd:           req.Cwd,
		Tool:          req.Tool,
		Reason:        redactedReason(req.Tool, string(req.Output), string(out), n),
		ResolvedCmds:  []string{},
		PinnedScripts: []api.Pin{},
		Credentials:   []string{},
		Egress:        api.Egress{DeniedHosts: []string{}},
		Output: api.Output{
			StdoutBytes:    int64(len(req.Output)),
			RedactionCount: n,
			SHA256:         fmt.Sprintf("%x", sha256.Sum256(out)),
		},
	}
	resp := &api.ToolOutputResponse{Output: out, Redactions: n, EventID: ev.ID}
	// The output is clean whether or not the record could be written: the
	// model gets it, with the warning.
	if err := g.ex.Record(&ev); err != nil {
		resp.Warning = warningOf(err)
	}
	s.ring.add(ev)
	return resp, nil
}

// redactedReason says what was redacted from a tool's output: the
// credentials and patterns by name (labels the redaction added), never a
// value.
func redactedReason(tool, before, after string, n int) string {
	var names []string
	for _, l := range labels(after) {
		if !strings.Contains(before, l) && !slices.Contains(names, l) {
			names = append(names, l)
		}
	}
	what := strings.Join(names, ", ")
	for _, r := range []struct{ old, new string }{{"[REDACTED:credential:", "credential "}, {"[REDACTED:pattern:", "pattern "}, {"]", ""}} {
		what = strings.ReplaceAll(what, r.old, r.new)
	}
	return fmt.Sprintf("%d redaction(s) in the output of %s before the model saw it: %s", n, tool, what)
}

// labels returns the redaction labels in s, in order.
func labels(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "[REDACTED:")
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			return out
		}
		out = append(out, s[i:i+j+1])
		s = s[i+j+1:]
	}
}
