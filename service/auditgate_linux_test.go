package service

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// brokenAudit is a store that can write nothing.
type brokenAudit struct{}

var errFull = errors.New("audit: database or disk is full")

func (brokenAudit) Started(context.Context, audit.Record) error { return errFull }
func (brokenAudit) Append(context.Context, audit.Record) error  { return errFull }

// A store that fails: under policy.audit_required nothing runs, on any
// surface; without it the command runs and the warning reaches the
// caller: the hook's decision, the relay's stderr, the execute answer.
func TestAuditUnavailable(t *testing.T) {
	fixtureAudit = brokenAudit{}
	t.Cleanup(func() { fixtureAudit = nil })

	f := start(t, nil)
	r, err := f.c.Decide(context.Background(), api.DecideRequest{Route: true, Request: api.ExecRequest{
		Command: "touch ran", Cwd: f.ws, Agent: "claude-code", Surface: api.SurfaceAgentHook}})
	if err != nil || r.Decision != "deny" || r.BlockedBy != pipeline.DenyAuditUnavailable || r.Ticket != "" ||
		!strings.Contains(r.Reason, "disk is full") {
		t.Errorf("routed decision: %v %+v", err, r)
	}
	end, err := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
		Command: "touch ran", Agent: "cli", Surface: api.SurfaceCLI}}, io.Discard, io.Discard)
	if err != nil || end.Exit != api.ExitCannotRun || end.Error == nil || end.Error.BlockedBy != pipeline.DenyAuditUnavailable {
		t.Errorf("execute: %v %+v", err, end)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "ran")); err == nil {
		t.Error("a command ran off the record")
	}
	f.shutdown()

	f = start(t, func(c *policy.Config) { c.Policy.AuditRequired = false })
	r = f.decide("echo routed")
	if !strings.Contains(r.Warning, "not on the audit record") {
		t.Errorf("decision warning %q", r.Warning)
	}
	code, out, stderr := f.runRelay(r.Ticket)
	if code != 0 || out != "routed\n" || !strings.Contains(stderr, "gatehouse relay: warning: this command ran without an audit record") {
		t.Errorf("relay: %d %q %q", code, out, stderr)
	}
	end, err = f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
		Command: "echo direct", Agent: "cli", Surface: api.SurfaceCLI}}, io.Discard, io.Discard)
	if err != nil || end.Exit != 0 || !strings.Contains(end.Warning, "policy.audit_required is false") {
		t.Errorf("execute: %v %+v", err, end)
	}
}
