package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/notify"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

type fakeNotifier struct {
	mu       sync.Mutex
	degraded []notify.Degraded
	redacted [][]string
	audit    []string
}

func (f *fakeNotifier) AuditUnavailable(agent, cause string, ran bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.audit = append(f.audit, fmt.Sprintf("%s ran=%v: %s", agent, ran, cause))
	return true
}

func (f *fakeNotifier) SandboxDegraded(d notify.Degraded) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.degraded = append(f.degraded, d)
	return true
}

func (f *fakeNotifier) OutputRedacted(agent string, creds []string, n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.redacted = append(f.redacted, append([]string{agent}, creds...))
	return true
}

// observed builds a fixture whose executor records into a real audit
// store (keys in memory) and a fake notifier.
func observed(t *testing.T, mutate func(*policy.Config)) (*fixture, *audit.Store, *fakeNotifier) {
	f := newFixture(t, sandboxtest.Dir(t), mutate)
	s, err := audit.Open(context.Background(), audit.Options{Path: filepath.Join(f.dir, "state", "audit.db"), Keys: keyring.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	n := &fakeNotifier{}
	f.ex.SetObservers(s, n)
	return f, s, n
}

func only(t *testing.T, s *audit.Store) *audit.Entry {
	t.Helper()
	all, err := s.List(context.Background(), audit.Filter{})
	if err != nil || len(all) != 1 {
		t.Fatalf("%d events recorded (%v), want 1", len(all), err)
	}
	e, err := s.Get(context.Background(), all[0].Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestObserveModeNone(t *testing.T) {
	f, s, n := observed(t, func(c *policy.Config) {
		c.Exec.Sandbox.Backend = "none"
		c.Policy.SandboxRequired = false
		c.Exec.Audit.OutputMaxBytes = 8
	})
	// Streamed to the caller: the audit keeps its own capped copy.
	var out, errOut bytes.Buffer
	o, err := f.ex.Execute(context.Background(), api.ExecRequest{Command: "echo 0123456789; echo err >&2", Agent: "cli", Surface: api.SurfaceCLI},
		sandbox.Streams{Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	e := only(t, s)
	if e.Event.ID != o.Event.ID || e.Command != "echo 0123456789; echo err >&2" || e.Event.SandboxMode != "none" {
		t.Errorf("recorded %+v", e)
	}
	if string(e.Stdout) != "01234567" || string(e.Stderr) != "err\n" {
		t.Errorf("kept stdout %q stderr %q, want the first 8 bytes of each", e.Stdout, e.Stderr)
	}
	if !strings.Contains(e.SandboxReason, "backend none") {
		t.Errorf("sandbox reason %q", e.SandboxReason)
	}
	if len(n.degraded) != 1 {
		t.Fatalf("%d degraded notifications, want 1", len(n.degraded))
	}
	d := n.degraded[0]
	if d.Agent != "cli" || d.Mode != "none" || !d.Ran || d.RequestedBackend != "none" || d.SandboxRequired ||
		!strings.Contains(d.HostReason, "backend none") || !strings.Contains(strings.Join(d.Missing, ","), "kernel isolation") {
		t.Errorf("degraded notification %+v", d)
	}
	rep, err := s.Verify(context.Background())
	if err != nil || rep.Problem != nil {
		t.Errorf("verify: %v %v", err, rep.Problem)
	}
}

func TestObserveDenials(t *testing.T) {
	f, s, n := observed(t, func(c *policy.Config) {
		c.Exec.Sandbox.Backend = "none"
		c.Policy.SandboxRequired = true
	})
	if _, err := f.try("touch x", func(r *api.ExecRequest) { r.Agent = "claude-code" }); denial(err) == nil {
		t.Fatalf("not denied: %v", err)
	}
	e := only(t, s)
	if e.Event.SandboxMode != "unavailable_denied" || e.Event.Decision != "deny" || e.Command != "touch x" || e.Stdout != nil {
		t.Errorf("recorded %+v", e)
	}
	if len(n.degraded) != 1 || n.degraded[0].Ran || n.degraded[0].Mode != "unavailable_denied" || !n.degraded[0].SandboxRequired {
		t.Errorf("notifications %+v", n.degraded)
	}
	// A denial before the sandbox is recorded too, without a notification.
	if _, err := f.try("true", func(r *api.ExecRequest) { r.Cwd = "/etc" }); denial(err) == nil {
		t.Fatal("cwd outside not denied")
	}
	all, _ := s.List(context.Background(), audit.Filter{Status: "denied"})
	if len(all) != 2 || all[0].Event.BlockedBy != DenyCwdOutside || all[0].Command != "true" {
		t.Errorf("denials recorded: %+v", all)
	}
	if len(n.degraded) != 1 {
		t.Errorf("%d degraded notifications, want 1", len(n.degraded))
	}
}

func TestObserveBubblewrap(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	f, s, n := observed(t, nil)
	f.cfg.Exec.Audit.KeepOutput = false
	o := f.run("echo hi")
	e := only(t, s)
	if e.Event.SandboxMode != "bubblewrap" || e.Stdout != nil || e.Event.Output.SHA256 != o.Event.Output.SHA256 {
		t.Errorf("recorded %+v", e)
	}
	if len(n.degraded) != 0 {
		t.Errorf("a full sandbox notified: %+v", n.degraded)
	}
	// A redaction with credentials notifies (the redaction itself lands
	// with DLP).
	ev := o.Event
	ev.ID, ev.Credentials, ev.Output.RedactionCount = NewID(), []string{"github_token"}, 2
	f.ex.Record(&ev)
	if len(n.redacted) != 1 || n.redacted[0][1] != "github_token" {
		t.Errorf("redaction notifications %v", n.redacted)
	}
}

// slowStartAudit records the order of its calls; its Started takes a
// while and fails with failStart.
type slowStartAudit struct {
	mu        sync.Mutex
	calls     []string
	failStart error
}

func (a *slowStartAudit) Started(ctx context.Context, rec audit.Record) error {
	time.Sleep(100 * time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, "started "+rec.Event.Status)
	return a.failStart
}

func (a *slowStartAudit) Append(ctx context.Context, rec audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, "append "+rec.Event.Status)
	return nil
}

// Nothing runs before its start is on the record, however long that
// takes; no end is recorded before its start; and a start that cannot be
// recorded stops the command (audit_required) or lets it run with a
// warning.
func TestStartRecordedBeforeTheCommand(t *testing.T) {
	f := newFixture(t, sandboxtest.Dir(t), nil)
	a := &slowStartAudit{}
	f.ex.SetObservers(a, nil)
	o := f.run(`echo ran`)
	if o.Result.Stdout != "ran\n" || !slices.Equal(a.calls, []string{"started ", "append completed"}) {
		t.Errorf("stdout %q, audit calls %q", o.Result.Stdout, a.calls)
	}

	mark := filepath.Join(f.ws, "mark")
	a.calls, a.failStart = nil, errors.New("disk full")
	_, err := f.try(`touch mark`)
	var den *Denial
	if !errors.As(err, &den) || den.Code != DenyAuditUnavailable {
		t.Fatalf("a start that could not be recorded: %v, want %s", err, DenyAuditUnavailable)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the command ran though its start was not recorded")
	}
	if !slices.Equal(a.calls, []string{"started ", "append never_ran"}) {
		t.Errorf("audit calls %q", a.calls)
	}

	f.cfg.Policy.AuditRequired = false
	a.calls = nil
	o = f.run(`touch mark`)
	if _, err := os.Stat(mark); err != nil || !strings.Contains(o.Warning, "ran without an audit record") {
		t.Errorf("audit_required false: mark %v, warning %q", err, o.Warning)
	}
}
