// Package notify raises Gatehouse's native desktop notifications (through
// github.com/gen2brain/beeep) and keeps each kind from repeating: a given
// agent, sandbox mode and reason notifies at most once an hour, as does a
// given agent and credential. A failure to notify is logged and never
// reaches the caller.
package notify

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Notification kinds.
const (
	KindSandboxDegraded = "execution.sandbox_degraded"
	KindOutputRedacted  = "execution.output_redacted"
	// KindAuditUnavailable: a command could not be put on the audit
	// record. It is always on: what is not on the record must not pass
	// unseen.
	KindAuditUnavailable = "execution.audit_unavailable"
)

// DefaultWindow is how long an identical notification stays quiet.
const DefaultWindow = time.Hour

// A Sender delivers one notification.
type Sender interface {
	Send(title, body string) error
}

// A Ledger remembers what was sent, across processes.
type Ledger interface {
	// Claim reports whether key may be sent at now — nothing was claimed
	// for it less than window before — and records the claim if so.
	Claim(key string, now time.Time, window time.Duration) (bool, error)
}

// Options configure a Notifier.
type Options struct {
	// SandboxDegraded and OutputRedacted turn each kind on
	// (exec.notify.*).
	SandboxDegraded bool
	OutputRedacted  bool
	// Sender delivers; nil means the desktop (Desktop).
	Sender Sender
	// Ledger dedupes across processes; nil means within this process only.
	Ledger Ledger
	// Window is the dedupe window; zero means DefaultWindow.
	Window time.Duration
	// Timeout bounds one delivery; zero means 5s.
	Timeout time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
}

// Notifier raises notifications. It is safe for concurrent use; a nil
// *Notifier raises nothing.
type Notifier struct {
	opts Options
}

// New returns a Notifier.
func New(opts Options) *Notifier {
	if opts.Sender == nil {
		opts.Sender = Desktop{}
	}
	if opts.Ledger == nil {
		opts.Ledger = NewMemoryLedger()
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Notifier{opts: opts}
}

// Degraded describes an execution that ran, or was denied, without full
// isolation.
type Degraded struct {
	Agent string
	// Mode is the sandbox_mode stamped on the event: none,
	// bubblewrap_no_seccomp or unavailable_denied.
	Mode string
	// Ran says whether the command ran.
	Ran bool
	// RequestedBackend is exec.sandbox.backend.
	RequestedBackend string
	// HostReason is the host's reason: why there is no sandbox, or no
	// seccomp filter.
	HostReason string
	// SandboxRequired and Seccomp are what the policy required
	// (policy.sandbox_required, exec.sandbox.seccomp).
	SandboxRequired bool
	Seccomp         string
	// Missing lists what the run did not have.
	Missing []string
}

// SandboxDegraded notifies execution.sandbox_degraded, once per agent,
// mode and reason per window. It reports whether a notification was sent.
func (n *Notifier) SandboxDegraded(d Degraded) bool {
	if n == nil || !n.opts.SandboxDegraded {
		return false
	}
	title, body := DegradedText(d)
	return n.send(KindSandboxDegraded, []string{d.Agent, d.Mode, d.HostReason}, title, body)
}

// DegradedText returns the title and body of a sandbox_degraded
// notification.
func DegradedText(d Degraded) (title, body string) {
	agent := d.Agent
	if agent == "" {
		agent = "an agent"
	}
	switch {
	case d.Mode == "unavailable_denied":
		title = fmt.Sprintf("Denied: no sandbox for a command from %s", agent)
	case !d.Ran:
		title = fmt.Sprintf("Sandbox degraded: a command from %s could not start (%s)", agent, d.Mode)
	case d.Mode == "bubblewrap_no_seccomp":
		title = fmt.Sprintf("Sandbox degraded: %s ran a command without seccomp", agent)
	default:
		title = fmt.Sprintf("Sandbox degraded: %s ran a command with no isolation", agent)
	}
	var b strings.Builder
	backend := d.RequestedBackend
	if backend == "" {
		backend = "auto"
	}
	fmt.Fprintf(&b, "Requested backend: %s\n", backend)
	if d.HostReason != "" {
		fmt.Fprintf(&b, "Host: %s\n", d.HostReason)
	}
	if d.Ran {
		fmt.Fprintf(&b, "Ran: yes, in sandbox mode %s\n", d.Mode)
	} else {
		fmt.Fprintf(&b, "Ran: no, nothing ran (sandbox mode %s)\n", d.Mode)
	}
	fmt.Fprintf(&b, "Policy requires: sandbox_required %t, seccomp %s\n", d.SandboxRequired, orDash(d.Seccomp))
	if len(d.Missing) > 0 {
		fmt.Fprintf(&b, "Without: %s", strings.Join(d.Missing, ", "))
	}
	return title, strings.TrimRight(b.String(), "\n")
}

// OutputRedacted notifies execution.output_redacted for the credentials
// whose values were redacted from an execution's output, once per agent
// and credential per window. It reports whether a notification was sent.
func (n *Notifier) OutputRedacted(agent string, credentials []string, redactions int) bool {
	if n == nil || !n.opts.OutputRedacted || len(credentials) == 0 {
		return false
	}
	var fresh []string
	for _, c := range credentials {
		if n.claim(KindOutputRedacted, []string{agent, c}) && !slices.Contains(fresh, c) {
			fresh = append(fresh, c)
		}
	}
	if len(fresh) == 0 {
		return false
	}
	title, body := RedactedText(agent, fresh, redactions)
	return n.deliver(KindOutputRedacted, title, body)
}

// AuditUnavailable notifies execution.audit_unavailable: a command was
// denied because it could not be put on the audit record (ran false), or
// ran without a complete record (ran true). cause is the store's error. It
// notifies once per agent, outcome and cause per window, and reports
// whether a notification was sent.
func (n *Notifier) AuditUnavailable(agent, cause string, ran bool) bool {
	if n == nil {
		return false
	}
	title, body := AuditUnavailableText(agent, cause, ran)
	return n.send(KindAuditUnavailable, []string{agent, fmt.Sprint(ran), cause}, title, body)
}

// AuditUnavailableText returns the title and body of an audit_unavailable
// notification.
func AuditUnavailableText(agent, cause string, ran bool) (title, body string) {
	if agent == "" {
		agent = "an agent"
	}
	if ran {
		title = fmt.Sprintf("A command from %s ran without a complete audit record", agent)
		body = fmt.Sprintf("Gatehouse could not write its audit trail: %s.\nFree space in Gatehouse's state directory; run 'gatehouse audit verify' to see what is missing.", cause)
		return title, body
	}
	title = fmt.Sprintf("Denied: a command from %s could not be put on the audit record", agent)
	body = fmt.Sprintf("Gatehouse could not write its audit trail: %s.\nNothing ran (policy.audit_required). Free space in Gatehouse's state directory, then try again.", cause)
	return title, body
}

// RedactedText returns the title and body of an output_redacted
// notification.
func RedactedText(agent string, credentials []string, redactions int) (title, body string) {
	if agent == "" {
		agent = "an agent"
	}
	title = fmt.Sprintf("Credential redacted from %s's output", agent)
	ids := strings.Join(credentials, ", ")
	body = fmt.Sprintf("A command printed the value of %s; Gatehouse replaced it with [REDACTED:credential:<id>] before %s saw it (%d redaction(s)).\nCheck the command in 'gatehouse audit list'.",
		ids, agent, redactions)
	return title, body
}

func (n *Notifier) send(kind string, key []string, title, body string) bool {
	if !n.claim(kind, key) {
		return false
	}
	return n.deliver(kind, title, body)
}

// claim asks the ledger; when the ledger fails it logs and lets the
// notification through (a repeat is better than silence).
func (n *Notifier) claim(kind string, key []string) bool {
	k := kind + "\x00" + strings.Join(key, "\x00")
	ok, err := n.opts.Ledger.Claim(k, n.opts.Now(), n.opts.Window)
	if err != nil {
		n.opts.Logger.Warn("notification dedupe unavailable", "kind", kind, "err", err)
		return true
	}
	return ok
}

// deliver sends with a timeout; a failure is logged, never returned.
func (n *Notifier) deliver(kind, title, body string) bool {
	done := make(chan error, 1)
	go func() { done <- n.opts.Sender.Send(title, body) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(n.opts.Timeout):
		err = fmt.Errorf("no answer within %s", n.opts.Timeout)
	}
	if err != nil {
		n.opts.Logger.Warn("notification not shown", "kind", kind, "title", title, "err", err)
		return false
	}
	return true
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// MemoryLedger dedupes within one process. It is safe for concurrent use.
type MemoryLedger struct {
	mu   sync.Mutex
	sent map[string]time.Time
}

// NewMemoryLedger returns an empty MemoryLedger.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{sent: map[string]time.Time{}} }

// Claim implements Ledger.
func (l *MemoryLedger) Claim(key string, now time.Time, window time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.sent[key]; ok {
		if d := now.Sub(t); d >= 0 && d < window {
			return false, nil
		}
	}
	l.sent[key] = now
	return true, nil
}
