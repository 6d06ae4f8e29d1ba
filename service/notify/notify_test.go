package notify

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeSender struct {
	mu    sync.Mutex
	sent  []string
	err   error
	block chan struct{}
}

func (f *fakeSender) Send(title, body string) error {
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, title+"\n"+body)
	return f.err
}

func (f *fakeSender) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

var degraded = Degraded{
	Agent: "claude-code", Mode: "none", Ran: true, RequestedBackend: "auto",
	HostReason: "bubblewrap unusable: bwrap not found in PATH; install bubblewrap", SandboxRequired: false, Seccomp: "required",
	Missing: []string{"kernel isolation", "seccomp filter", "memory limit"},
}

func TestDegradedText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		d     func(d *Degraded)
		title string
		body  []string
	}{
		{"none", func(*Degraded) {}, "Sandbox degraded: claude-code ran a command with no isolation",
			[]string{"Requested backend: auto", "Host: bubblewrap unusable: bwrap not found", "Ran: yes, in sandbox mode none",
				"Policy requires: sandbox_required false, seccomp required", "Without: kernel isolation, seccomp filter, memory limit"}},
		{"no seccomp", func(d *Degraded) {
			d.Mode, d.HostReason, d.Seccomp = "bubblewrap_no_seccomp", "seccomp not supported by the kernel", "preferred"
		},
			"Sandbox degraded: claude-code ran a command without seccomp", []string{"Host: seccomp not supported", "seccomp preferred"}},
		{"denied", func(d *Degraded) { d.Mode, d.Ran, d.SandboxRequired = "unavailable_denied", false, true },
			"Denied: no sandbox for a command from claude-code", []string{"Ran: no, nothing ran", "sandbox_required true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := degraded
			tc.d(&d)
			title, body := DegradedText(d)
			if title != tc.title {
				t.Errorf("title %q, want %q", title, tc.title)
			}
			for _, want := range tc.body {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
		})
	}
}

func TestDedupe(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	f := &fakeSender{}
	n := New(Options{SandboxDegraded: true, OutputRedacted: true, Sender: f, Now: clock})

	if !n.SandboxDegraded(degraded) {
		t.Fatal("first degraded notification not sent")
	}
	if n.SandboxDegraded(degraded) {
		t.Error("an identical notification within the hour was sent")
	}
	other := degraded
	other.Agent = "cli"
	if !n.SandboxDegraded(other) {
		t.Error("another agent's notification was held back")
	}
	other.Mode = "bubblewrap_no_seccomp"
	if !n.SandboxDegraded(other) {
		t.Error("another mode's notification was held back")
	}
	advance(59 * time.Minute)
	if n.SandboxDegraded(degraded) {
		t.Error("sent again after 59 minutes")
	}
	advance(2 * time.Minute)
	if !n.SandboxDegraded(degraded) {
		t.Error("not sent again after an hour")
	}

	if !n.OutputRedacted("cli", []string{"github_token"}, 2) {
		t.Error("first redaction notification not sent")
	}
	if n.OutputRedacted("cli", []string{"github_token"}, 1) {
		t.Error("same agent and credential within the hour was sent")
	}
	if !n.OutputRedacted("cli", []string{"github_token", "npm_token"}, 1) {
		t.Error("a new credential was held back")
	}
	if !strings.Contains(f.sent[len(f.sent)-1], "npm_token") || strings.Contains(f.sent[len(f.sent)-1], "github_token") {
		t.Errorf("the second redaction notification names: %q", f.sent[len(f.sent)-1])
	}
	if n.OutputRedacted("cli", nil, 3) {
		t.Error("sent with no credential")
	}
	if f.count() != 6 {
		t.Errorf("%d sent, want 6", f.count())
	}
}

func TestOff(t *testing.T) {
	t.Parallel()
	f := &fakeSender{}
	n := New(Options{Sender: f})
	if n.SandboxDegraded(degraded) || n.OutputRedacted("cli", []string{"x"}, 1) || f.count() != 0 {
		t.Error("a notification turned off was sent")
	}
	var nilN *Notifier
	if nilN.SandboxDegraded(degraded) {
		t.Error("a nil Notifier sent")
	}
}

type failingLedger struct{}

func (failingLedger) Claim(string, time.Time, time.Duration) (bool, error) {
	return false, errors.New("database is locked")
}

func TestFailuresAreLogged(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	f := &fakeSender{err: errors.New("org.freedesktop.DBus.Error.ServiceUnknown")}
	n := New(Options{SandboxDegraded: true, Sender: f, Ledger: failingLedger{}, Logger: logger})
	if n.SandboxDegraded(degraded) {
		t.Error("reported sent though sending failed")
	}
	if f.count() != 1 {
		t.Error("a failing ledger stopped the notification")
	}
	for _, want := range []string{"dedupe unavailable", "notification not shown", "ServiceUnknown"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}

	// A sender that hangs is abandoned after the timeout.
	hang := &fakeSender{block: make(chan struct{})}
	defer close(hang.block)
	n = New(Options{SandboxDegraded: true, Sender: hang, Timeout: 50 * time.Millisecond, Logger: logger})
	start := time.Now()
	if n.SandboxDegraded(degraded) || time.Since(start) > 2*time.Second {
		t.Error("a hanging sender was waited for")
	}
}
