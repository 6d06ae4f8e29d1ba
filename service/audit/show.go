package audit

// This file is how an event reads to a person, for every surface that
// shows the trail (gatehouse audit, the dashboard): the filters' words,
// the status, exit and duration columns (from service/card, which builds
// the whole card), and a command on one line.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// Statuses are the values Filter.Status takes.
var Statuses = []string{api.StatusCompleted, api.StatusTimedOut, api.StatusKilled, api.StatusFailedToStart, api.StatusNeverRan, "denied"}

// Modes are the values Filter.SandboxMode takes.
var Modes = []string{
	string(sandbox.ModeBubblewrap), string(sandbox.ModeBubblewrapNoSeccomp), string(sandbox.ModeSeatbelt),
	string(sandbox.ModeNone), string(sandbox.ModeUnavailableDenied),
}

// Surfaces are the values Filter.Surface takes.
var Surfaces = []string{api.SurfaceAgentHook, api.SurfaceMCP, api.SurfaceCLI}

// ParseSince reads a time back from now (90m, 36h, 7d) or a time
// (2025-03-01, 2025-03-01T12:00:00Z), for Filter.Since.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d > 0 {
			return now.Add(-time.Duration(d) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%q is not a positive duration", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (90m, 36h, 7d) nor a time (2025-03-01, 2025-03-01T12:00:00Z)", s)
}

// StatusText is an event's status in a word (card.StatusText).
func StatusText(ev *api.Event) string { return card.StatusText(ev) }

// ExitText is "exit N", or "-" without an exit code (card.ExitText).
func ExitText(ev *api.Event) string { return card.ExitText(ev) }

// DurationText is how long the command ran, "-" when it did not
// (card.DurationText).
func DurationText(ev *api.Event) string { return card.DurationText(ev) }

// CardInput is what the card of e is built from: e, its kept output and
// its executions (kids).
func CardInput(e *Entry, kids []api.Event) card.Input {
	return card.Input{Event: e.Event, Command: e.Command, SandboxReason: e.SandboxReason, Kids: kids,
		Output: true, Stdout: e.Stdout, Stderr: e.Stderr}
}

// OneLine folds a command onto one line: newlines become " ⏎ ". Terminal
// controls are escaped first (service/termesc), so that folding hides
// none of them (a CR is shown as \x0d, never folded into a space).
func OneLine(s string) string {
	s = strings.ReplaceAll(termesc.String(strings.TrimSpace(s)), "\n", " ⏎ ")
	return strings.Join(strings.Fields(s), " ")
}

// Shorten folds s onto one line (OneLine) and cuts it at n runes; "-"
// for nothing.
func Shorten(s string, n int) string {
	s = OneLine(s)
	if s == "" {
		return "-"
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
