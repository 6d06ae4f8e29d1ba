package pipeline

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/notify"
)

// An AuditLog records events; *audit.Store implements it. Its methods
// must be safe for concurrent use.
type AuditLog interface {
	// Started records that the execution rec describes is about to start;
	// Append of its end event (same id) closes it.
	Started(ctx context.Context, rec audit.Record) error
	Append(ctx context.Context, rec audit.Record) error
}

// A Notifier raises native notifications; *notify.Notifier implements it.
// Its methods dedupe, never fail and never panic on a nil receiver.
type Notifier interface {
	SandboxDegraded(d notify.Degraded) bool
	OutputRedacted(agent string, credentials []string, redactions int) bool
	AuditUnavailable(agent, cause string, ran bool) bool
}

// DenyAuditUnavailable is the denial of a command that could not be put
// on the audit record before it started (under policy.audit_required).
const DenyAuditUnavailable = "audit_unavailable"

// appendTimeout bounds one audit append (it waits for other writers).
const appendTimeout = 30 * time.Second

// observe is called once per request that reached a decision: with the
// outcome when the command ran (or failed to start), with nil when it was
// denied. It records the event and raises notifications; it never changes
// the outcome. It returns why the event is not on the record, nil when it
// is.
func (e *Executor) observe(ev *api.Event, o *Outcome) error {
	var err error
	if e.opts.Audit != nil {
		rec := audit.Record{Event: *ev, Command: ev.Command(), SandboxReason: sandboxHostReason(ev, o)}
		if o != nil {
			rec.Stdout, rec.Stderr = o.KeptStdout, o.KeptStderr
		}
		ctx, cancel := context.WithTimeout(context.Background(), appendTimeout)
		err = e.opts.Audit.Append(ctx, rec)
		cancel()
		if err != nil {
			e.opts.Logger.Warn("audit: event not recorded", "event", ev.ID, "err", err)
		}
	}
	if e.opts.Notifier != nil {
		e.notify(ev, o)
		if err != nil && ev.BlockedBy != DenyAuditUnavailable {
			// A decision alone (o nil) that is allowed is run by the agent
			// when the policy lets unrecorded calls through.
			ran := o != nil && eventRan(ev) || o == nil && ev.Decision == api.DecisionAllow && !e.cfg.Policy.AuditRequired
			e.opts.Notifier.AuditUnavailable(ev.Agent, err.Error(), ran)
		}
	}
	return err
}

// started puts the execution ev describes on the record before it
// starts. It returns nil when the command may start: recorded, or not
// recorded under policy.audit_required false (warning then says so). A
// *Denial (audit_unavailable) means it must not start.
func (e *Executor) started(ev *api.Event, warning *string) error {
	if e.opts.Audit == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), appendTimeout)
	err := e.opts.Audit.Started(ctx, audit.Record{Event: *ev, Command: ev.Command()})
	cancel()
	if err == nil {
		return nil
	}
	e.opts.Logger.Warn("audit: execution not recorded before its start", "event", ev.ID, "err", err)
	if !e.cfg.Policy.AuditRequired {
		*warning = "this command ran without an audit record (policy.audit_required is false): " + err.Error()
		if e.opts.Notifier != nil {
			e.opts.Notifier.AuditUnavailable(ev.Agent, err.Error(), true)
		}
		return nil
	}
	reason := "the audit record could not be written (" + err.Error() + "), so the command did not run; free space in Gatehouse's state directory or repair its audit database, then try again"
	if e.opts.Notifier != nil {
		e.opts.Notifier.AuditUnavailable(ev.Agent, err.Error(), false)
	}
	return denyNeverRan(ev, DenyAuditUnavailable, reason, DenyAuditUnavailable)
}

// notRecorded is the warning of an event that is not on the record.
func notRecorded(err error) string {
	return "this command is not on the audit record: " + err.Error()
}

// notify raises the notifications ev calls for.
func (e *Executor) notify(ev *api.Event, o *Outcome) {
	if sandbox.Mode(ev.SandboxMode).Degraded() {
		e.opts.Notifier.SandboxDegraded(notify.Degraded{
			Agent:            ev.Agent,
			Mode:             ev.SandboxMode,
			Ran:              eventRan(ev),
			RequestedBackend: e.cfg.Exec.Sandbox.Backend,
			HostReason:       sandboxHostReason(ev, o),
			SandboxRequired:  e.cfg.Policy.SandboxRequired,
			Seccomp:          e.cfg.Exec.Sandbox.Seccomp,
			Missing:          degradedMissing(ev),
		})
	}
	if ev.Output.RedactionCount > 0 && len(ev.Credentials) > 0 {
		e.opts.Notifier.OutputRedacted(ev.Agent, ev.Credentials, ev.Output.RedactionCount)
	}
}

// eventRan reports whether the command ran at all.
func eventRan(ev *api.Event) bool {
	switch sandbox.Status(ev.Status) {
	case sandbox.StatusCompleted, sandbox.StatusTimedOut, sandbox.StatusKilled:
		return true
	}
	return false
}

// sandboxHostReason is the host's reason for the isolation ev ran (or was denied)
// with.
func sandboxHostReason(ev *api.Event, o *Outcome) string {
	switch sandbox.Mode(ev.SandboxMode) {
	case sandbox.ModeUnavailableDenied:
		return ev.Reason
	case sandbox.ModeBubblewrapNoSeccomp:
		return ev.SeccompReason
	}
	if o != nil {
		return o.SandboxReason
	}
	return ""
}

// degradedMissing lists what a degraded run did not have.
func degradedMissing(ev *api.Event) []string {
	var m []string
	switch sandbox.Mode(ev.SandboxMode) {
	case sandbox.ModeUnavailableDenied:
		return []string{"a usable sandbox backend"}
	case sandbox.ModeNone:
		m = append(m, "kernel isolation (the host file system, secrets and network were reachable)", "seccomp filter")
	case sandbox.ModeBubblewrapNoSeccomp:
		m = append(m, "seccomp filter")
	}
	if l := ev.Limits; l != nil {
		for _, x := range []struct {
			ok   bool
			name string
		}{
			{l.Memory, "memory limit"}, {l.Pids, "process-count limit"}, {l.Tmpfs, "private /tmp size limit"},
			{l.FileSize, "file-size limit"}, {l.DaemonKill, "daemon kill"},
		} {
			if !x.ok {
				m = append(m, x.name)
			}
		}
	}
	return m
}

// keeper returns the writer that keeps one stream's output for the audit
// trail: at most exec.audit.output_max_bytes, nothing when output is not
// kept.
func (e *Executor) keeper() *keepWriter {
	a := e.cfg.Exec.Audit
	if e.opts.Audit == nil || !a.KeepOutput || a.OutputMaxBytes <= 0 {
		return &keepWriter{off: true}
	}
	return &keepWriter{max: int(a.OutputMaxBytes)}
}

// keepWriter keeps the first max bytes written to it and drops the rest;
// it never fails. It is safe for concurrent use.
type keepWriter struct {
	mu  sync.Mutex
	off bool
	max int
	buf bytes.Buffer
}

func (k *keepWriter) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.off {
		if room := k.max - k.buf.Len(); room > 0 {
			k.buf.Write(p[:min(len(p), room)])
		}
	}
	return len(p), nil
}

// Bytes returns what was kept: nil when keeping is off, else a non-nil
// (possibly empty) slice.
func (k *keepWriter) Bytes() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.off {
		return nil
	}
	return append([]byte{}, k.buf.Bytes()...)
}

// SetApprover sets who answers e's held calls, as Options.Approver does.
// Call it before e is first used.
func (e *Executor) SetApprover(a Approver) { e.opts.Approver = a }

// SetObservers sets where e records events and raises notifications, as
// Options.Audit and Options.Notifier do. Call it before e is first used.
func (e *Executor) SetObservers(a AuditLog, n Notifier) {
	e.opts.Audit, e.opts.Notifier = a, n
}
