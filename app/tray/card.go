package tray

import (
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Card is the summary of an execution's card (its audit event) that a
// click on a recent execution shows as a notification: what ran, for
// whom, how it was decided and how it ended, in which sandbox, and what
// left it. Every value from the event is escaped.
func Card(ev api.Event, now time.Time) (title, body string) {
	title = "Gatehouse: " + Glyph(ev) + " " + Shorten(CommandOf(ev), commandWidth)
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("%s (%s), %s ago", Escape(ev.Agent), Escape(ev.Surface), Age(now.Sub(ev.Time)))
	if ev.Cwd != "" {
		line("in %s", Escape(ev.Cwd))
	}
	decision := "decision: " + Escape(ev.Decision)
	if ev.BlockedBy != "" {
		decision += " by " + Escape(ev.BlockedBy)
	}
	if ev.Reason != "" {
		decision += ": " + Shorten(ev.Reason, 160)
	}
	line("%s", decision)
	if a := ev.Approval; a != nil {
		answer := "approval: " + Escape(a.Answer)
		if a.By != "" {
			answer += " (" + Escape(a.By) + ")"
		}
		line("%s", answer)
	}
	switch {
	case ev.Status == "" && ev.Decision == "allow" && ev.Routed:
		line("routed: waits for its relay")
	case ev.Status == "" && ev.Decision == "allow":
		line("running")
	case ev.Status != "":
		st := Escape(ev.Status)
		if ev.ExitCode != nil {
			st += fmt.Sprintf(", exit %d", *ev.ExitCode)
		}
		if ev.StatusReason != "" {
			st += " (" + Escape(ev.StatusReason) + ")"
		}
		if ev.Status != "never_ran" {
			st += ", " + (time.Duration(ev.DurationMS) * time.Millisecond).String()
		}
		line("%s", st)
	}
	if ev.SandboxMode != "" {
		line("sandbox: %s", Escape(ev.SandboxMode))
	}
	if ev.Status != "" && ev.Status != "never_ran" {
		o := ev.Output
		out := fmt.Sprintf("output: %s stdout, %s stderr", humanize.IBytes(uint64(o.StdoutBytes)), humanize.IBytes(uint64(o.StderrBytes)))
		if o.Truncated {
			out += ", truncated"
		}
		if o.RedactionCount > 0 {
			out += ", " + plural(o.RedactionCount, "redaction")
		}
		line("%s", out)
	}
	if e := ev.Egress; e.Allowed+e.Denied > 0 {
		eg := fmt.Sprintf("network: %d allowed, %d denied", e.Allowed, e.Denied)
		if len(e.DeniedHosts) > 0 {
			eg += " (" + Shorten(strings.Join(e.DeniedHosts, ", "), 80) + ")"
		}
		line("%s", eg)
	}
	if len(ev.Credentials) > 0 {
		line("credentials: %s", Escape(strings.Join(ev.Credentials, ", ")))
	}
	if len(ev.CredentialsMasked) > 0 {
		line("masked credentials: %s", Escape(strings.Join(ev.CredentialsMasked, ", ")))
	}
	for _, n := range ev.CredentialNotes {
		line("credential: %s", Escape(n.String()))
	}
	line("event %s; gatehouse audit show %s", Escape(ev.ID), Escape(ev.ID))
	return title, strings.TrimRight(b.String(), "\n")
}

// DoctorSummary is the notification of one run of gatehouse doctor: out is
// its output, ok whether it found no problem, report the file the full
// report is in.
func DoctorSummary(out []byte, ok bool, report string) (title, body string) {
	var problems []string
	for l := range strings.Lines(string(out)) {
		if p, found := strings.CutPrefix(strings.TrimRight(l, "\n"), "problem: "); found {
			problems = append(problems, p)
		}
	}
	where := "The full report is in " + report + " (Open doctor report in the tray's menu)."
	if ok {
		return "Gatehouse doctor: ok", "The governed shell can serve. " + where
	}
	if len(problems) == 0 {
		return "Gatehouse doctor failed", where
	}
	var b strings.Builder
	for i, p := range problems {
		if i == 3 {
			fmt.Fprintf(&b, "… and %d more\n", len(problems)-i)
			break
		}
		fmt.Fprintf(&b, "• %s\n", Shorten(p, 160))
	}
	b.WriteString(where)
	return "Gatehouse doctor: " + plural(len(problems), "problem"), b.String()
}
