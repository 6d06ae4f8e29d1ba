package card

import (
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A Mark is how a status looks in a list: one glyph, a class (ok, warn,
// bad) for colour, and what the glyph means.
type Mark struct {
	Glyph, Class, Meaning string
}

// Marks is the one table of status marks, in the order MarkOf tries them;
// the tray and the dashboard show these and no others.
var Marks = []struct {
	Mark
	match func(ev *api.Event) bool
}{
	{Mark{"⊘", "bad", "denied"}, func(ev *api.Event) bool { return ev.Decision == api.DecisionDeny }},
	{Mark{"✓", "ok", "completed, exit 0"}, func(ev *api.Event) bool {
		return ev.Status == string(sandbox.StatusCompleted) && ev.ExitCode != nil && *ev.ExitCode == 0
	}},
	{Mark{"✗", "warn", "completed, exit not 0"}, func(ev *api.Event) bool { return ev.Status == string(sandbox.StatusCompleted) }},
	{Mark{"⏱", "warn", "timed out"}, func(ev *api.Event) bool { return ev.Status == string(sandbox.StatusTimedOut) }},
	{Mark{"✗", "bad", "killed, failed to start or never ran"}, func(ev *api.Event) bool { return ev.Status != "" }},
	{Mark{"↪", "ok", "decided; waits for its relay"}, func(ev *api.Event) bool { return ev.Routed }},
	{Mark{"▶", "ok", "allowed; no end on the record yet"}, func(*api.Event) bool { return true }},
}

// MarkOf is ev's mark.
func MarkOf(ev *api.Event) Mark {
	for _, m := range Marks {
		if m.match(ev) {
			return m.Mark
		}
	}
	return Marks[len(Marks)-1].Mark
}
