// Package card is the execution card: how one audit event reads to a
// person, built once as an ordered list of fields. Every face that shows
// an event (gatehouse audit show, the dashboard's card, the tray's card,
// the MCP tool's structured result) renders this list and adds nothing of
// its own, so they carry the same fields in the same order; one table of
// marks (Marks) gives every face the same glyph for a status.
//
// Values are the event's own text, unescaped: each face escapes for where
// it writes (service/termesc for a terminal or a label, html/template for
// the dashboard). It imports nothing of app/ or the dashboard.
package card

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A Field is one line of the card.
type Field struct {
	// Key names the field for a program; Label for a person.
	Key   string `json:"key"`
	Label string `json:"label"`
	Value string `json:"value"`
	// Notes say what the value alone does not: why a limit did not hold
	// (the platform's gap), who answered an approval.
	Notes []string `json:"notes,omitempty"`
	// Link is the id of the event the value names (a decision, an
	// execution), for faces that link.
	Link string `json:"link,omitempty"`
}

// A Stream is one kept output stream, redacted, as the trail stores it.
type Stream struct {
	Name string
	Text []byte
	// Kept is false when the trail did not keep it (exec.audit.keep_output).
	Kept bool
	// Note is "first N of M bytes" when only the head was kept.
	Note string
}

// Input is what the card is built from: the event, and what the trail
// keeps beside it.
type Input struct {
	Event api.Event
	// Command is the judged text; "" when the face has only the event.
	Command string
	// SandboxReason says why the sandbox mode is what it is.
	SandboxReason string
	// Kids are the event's executions (a decision's), oldest first.
	Kids []api.Event
	// Output says Stdout and Stderr are what the trail kept (nil: not
	// kept); a face without the trail leaves it false and gets no streams.
	Output         bool
	Stdout, Stderr []byte
	// CacheSize, when set, measures the tool cache now (toolcache.Size),
	// for a note beside its path.
	CacheSize func(dir string) (int64, error)
	// Loc is the zone times are shown in; nil is the local zone.
	Loc *time.Location
}

// Card is the built card.
type Card struct {
	Mark    Mark
	Fields  []Field
	Streams []Stream
}

// Labels are the labels of c's fields, in order.
func (c *Card) Labels() []string {
	out := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		out[i] = f.Label
	}
	return out
}

// Build builds the card of in.
func Build(in Input) Card {
	ev := &in.Event
	c := Card{Mark: MarkOf(ev)}
	add := func(key, label, value string, notes ...string) *Field {
		c.Fields = append(c.Fields, Field{Key: key, Label: label, Value: value, Notes: notes})
		return &c.Fields[len(c.Fields)-1]
	}
	add("id", "event", ev.ID)
	if ev.ParentID != "" {
		add("parent_id", "decision event", ev.ParentID, "this is its execution").Link = ev.ParentID
	}
	for i := range in.Kids {
		k := &in.Kids[i]
		add("execution", "execution event", k.ID+" ("+StatusText(k)+")").Link = k.ID
	}
	loc := in.Loc
	if loc == nil {
		loc = time.Local
	}
	add("time", "time", ev.Time.In(loc).Format("2006-01-02 15:04:05.000 MST"))
	add("agent", "agent", dash(ev.Agent)+" (surface "+dash(ev.Surface)+")")
	if ev.SessionID != "" {
		add("session_id", "session", ev.SessionID)
	}
	add("action_type", "action", dash(ev.ActionType))
	add("cwd", "cwd", dash(ev.Cwd))
	dec := dash(string(ev.Decision))
	if ev.BlockedBy != "" {
		dec += " (" + ev.BlockedBy + ")"
	}
	add("decision", "decision", dec)
	if ev.Reason != "" {
		add("reason", "reason", ev.Reason)
	}
	if a := ev.Approval; a != nil {
		add("approval", "approval", fmt.Sprintf("%s by %s after %d ms", a.Answer, dash(a.By), a.WaitedMS), approvalNotes(a)...)
	}
	if ev.Tool != "" {
		add("tool", "tool", ev.Tool+" "+strings.Join(ev.Paths, " "))
	}
	add("command", "command", dash(in.Command))
	add("command_hash", "command sha256", dash(ev.CommandHash))
	add("dialect", "dialect", dash(ev.Dialect))
	add("resolved_commands", "resolved commands", dash(strings.Join(ev.ResolvedCmds, ", ")))
	st := dash(ev.Status)
	if ev.StatusReason != "" {
		st += " (" + ev.StatusReason + ")"
	}
	add("status", "status", st)
	add("exit_code", "exit code", strings.TrimPrefix(ExitText(ev), "exit "))
	add("duration", "duration", fmt.Sprintf("%s of %d s allowed", DurationText(ev), ev.TimeoutSeconds))
	var modeNotes []string
	if in.SandboxReason != "" {
		modeNotes = append(modeNotes, in.SandboxReason)
	}
	if ev.SeccompReason != "" && ev.SeccompReason != in.SandboxReason {
		modeNotes = append(modeNotes, "seccomp: "+ev.SeccompReason)
	}
	add("sandbox_mode", "sandbox mode", dash(ev.SandboxMode), modeNotes...)
	if ev.SandboxStart != "" {
		start := ev.SandboxStart
		if ev.SandboxStartReason != "" {
			start += " (" + ev.SandboxStartReason + ")"
		}
		add("sandbox_start", "sandbox start", start)
	}
	if ev.Network != "" {
		var notes []string
		if ev.NetworkReason != "" {
			notes = []string{ev.NetworkReason}
		} else if strings.HasPrefix(ev.Network, api.NetworkSessionPrefix) {
			notes = []string{"loopback shared with the session's other executions"}
		}
		add("network", "network", ev.Network, notes...)
	}
	if ev.ReadPosture != "" {
		f := add("read_posture", "read posture", ev.ReadPosture)
		if n := postureNotes[ev.ReadPosture]; n != "" {
			f.Notes = []string{n}
		}
	}
	value, gaps := limitsOf(ev.Limits)
	add("limits_enforced", "limits enforced", value, gaps...)
	if len(ev.PinnedScripts) == 0 {
		add("pinned_scripts", "pinned scripts", "none")
	}
	for _, p := range ev.PinnedScripts {
		var notes []string
		if ev.PinCoverage != "" {
			notes = append(notes, "coverage "+ev.PinCoverage)
		}
		add("pinned_script", "pinned script", fmt.Sprintf("%s  sha256 %s  %d bytes  %s", p.Path, p.SHA256, p.Size, p.PinMethod), notes...)
	}
	add("credentials_injected", "credentials", none(strings.Join(ev.Credentials, ", ")))
	if len(ev.CredentialsMasked) > 0 {
		parts := make([]string, len(ev.CredentialsMasked))
		for i, id := range ev.CredentialsMasked {
			u := ev.Egress.Placeholders[id]
			parts[i] = fmt.Sprintf("%s (%d to its hosts, %d elsewhere)", id, u.Bound, u.Elsewhere)
		}
		add("credentials_masked", "credentials masked", strings.Join(parts, ", "))
	}
	for _, n := range ev.CredentialNotes {
		add("credential_note", "credential", n.String())
	}
	add("egress", "egress", fmt.Sprintf("%d allowed, %d denied", ev.Egress.Allowed, ev.Egress.Denied))
	if len(ev.Egress.AllowedHosts) > 0 {
		add("allowed_hosts", "allowed hosts", strings.Join(ev.Egress.AllowedHosts, ", "))
	}
	if len(ev.Egress.DeniedHosts) > 0 {
		add("denied_hosts", "denied hosts", strings.Join(ev.Egress.DeniedHosts, ", "))
	}
	for _, a := range ev.Egress.Approved {
		v := fmt.Sprintf("%s: %s", net.JoinHostPort(a.Host, strconv.Itoa(a.Port)), a.Answer)
		if a.By != "" {
			v += " by " + a.By
		}
		if a.ID != "" {
			v += " (approval " + a.ID + ")"
		}
		if a.SavedEntry != "" {
			v += ", saved " + a.SavedEntry + " in " + a.SavedFile
		}
		add("egress_approved", "egress approval", v)
	}
	if len(ev.WriteBlocked) > 0 {
		add("write_deny_blocked", "writes blocked", strings.Join(ev.WriteBlocked, ", "))
	}
	if ev.ToolCache != "" {
		f := add("tool_cache", "tool cache", ev.ToolCache)
		if in.CacheSize != nil {
			if n, err := in.CacheSize(ev.ToolCache); err == nil {
				f.Notes = []string{humanize.IBytes(uint64(n)) + " now"}
			}
		}
	}
	o := ev.Output
	add("output", "output", fmt.Sprintf("stdout %d B, stderr %d B, discarded %d B, truncated %s, redactions %d",
		o.StdoutBytes, o.StderrBytes, o.DiscardedBytes, yesNo(o.Truncated), o.RedactionCount))
	if o.SHA256 != "" {
		add("stdout_sha256", "stdout sha256", o.SHA256)
	}
	if o.StderrSHA256 != "" {
		add("stderr_sha256", "stderr sha256", o.StderrSHA256)
	}
	if in.Output {
		c.Streams = streams(ev, in.Stdout, in.Stderr)
	}
	return c
}

func approvalNotes(a *api.ApprovalRecord) []string {
	notes := []string{"request " + a.ID}
	if a.Rule != "" {
		notes = append(notes, "held by "+a.Rule)
	}
	if a.SavedRule != "" {
		notes = append(notes, "saved rule "+a.SavedRule)
	}
	if a.Workspace != "" {
		notes = append(notes, "workspace "+a.Workspace)
	}
	return notes
}

// postureNotes say what each read posture let the command read.
var postureNotes = map[string]string{
	"host":      "the host's files, minus the deny-read set",
	"workspace": "of the user's data, only the workspace roots, read_allow and the tool cache",
}

// limits is every limit in the order the card lists them, with the
// platform's gap when it did not hold (docs/executor.md).
var limits = []struct {
	name string
	held func(*api.Limits) bool
	gap  string
}{
	{"pids", func(l *api.Limits) bool { return l.Pids }, "the number of processes was bounded by nothing: no delegated cgroup with the pids controller, and RLIMIT_NPROC did not hold"},
	{"nproc", func(l *api.Limits) bool { return l.NProc }, "RLIMIT_NPROC does not bind root, and is not set where no sandbox runs the command"},
	{"memory", func(l *api.Limits) bool { return l.Memory }, "no cgroup v2 with the memory controller is delegated to the user here (the systemd user unit asks for Delegate=yes); macOS has no memory limit"},
	{"tmpfs", func(l *api.Limits) bool { return l.Tmpfs }, "the private /tmp is sized only under bubblewrap"},
	{"file_size", func(l *api.Limits) bool { return l.FileSize }, "RLIMIT_FSIZE was not set"},
	{"daemon_kill", func(l *api.Limits) bool { return l.DaemonKill }, "a process that left the command's process group (setsid) may outlive it: only bubblewrap's pid namespace kills everything"},
}

// limitsOf is the limits' value ("pids yes (nproc yes), memory no, …")
// and a note for each that did not hold; "-" when Gatehouse ran nothing.
func limitsOf(l *api.Limits) (string, []string) {
	if l == nil {
		return "-", []string{"Gatehouse did not run this command"}
	}
	var parts, gaps []string
	for _, x := range limits {
		held := x.held(l)
		if x.name == "nproc" { // the fallback of pids, shown beside it
			parts[len(parts)-1] += " (nproc " + yesNo(held) + ")"
		} else {
			parts = append(parts, x.name+" "+yesNo(held))
		}
		if !held {
			gaps = append(gaps, x.name+" not held: "+x.gap)
		}
	}
	return strings.Join(parts, ", "), gaps
}

// streams are the kept stdout and stderr of ev: a stream not kept is
// listed only when the command ran; an empty one is left out.
func streams(ev *api.Event, stdout, stderr []byte) []Stream {
	ran := ev.Status != "" && ev.Status != string(sandbox.StatusNeverRan)
	var out []Stream
	for _, s := range []struct {
		name  string
		kept  []byte
		total int64
	}{{"stdout", stdout, ev.Output.StdoutBytes}, {"stderr", stderr, ev.Output.StderrBytes}} {
		switch {
		case s.kept == nil && ran:
			out = append(out, Stream{Name: s.name})
		case s.kept == nil || len(s.kept) == 0 && s.total == 0:
		default:
			st := Stream{Name: s.name, Text: s.kept, Kept: true}
			if int64(len(s.kept)) < s.total {
				st.Note = fmt.Sprintf("first %d of %d bytes", len(s.kept), s.total)
			}
			out = append(out, st)
		}
	}
	return out
}

// StatusText is an event's status in a word: denied:CODE, decided (a
// decision whose execution is its own event), or the status.
func StatusText(ev *api.Event) string {
	switch {
	case ev.Decision == api.DecisionDeny:
		if ev.BlockedBy != "" {
			return "denied:" + ev.BlockedBy
		}
		return "denied"
	case ev.Status == "":
		return "decided"
	}
	return ev.Status
}

// ExitText is "exit N", or "-" without an exit code.
func ExitText(ev *api.Event) string {
	if ev.ExitCode == nil {
		return "-"
	}
	return "exit " + strconv.Itoa(*ev.ExitCode)
}

// DurationText is how long the command ran, "-" when it did not.
func DurationText(ev *api.Event) string {
	if ev.Status == "" || ev.Status == string(sandbox.StatusNeverRan) {
		return "-"
	}
	d := time.Duration(ev.DurationMS) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ev.DurationMS)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func none(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
