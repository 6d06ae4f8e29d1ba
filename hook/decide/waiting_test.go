package decide

import (
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The hook finds the approval its call is held for among the pending
// ones: of its surface and session, asked since it asked, the same
// command when several are; none when it cannot tell.
func TestHeldFor(t *testing.T) {
	t.Parallel()
	asked := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	hook := func(id, session, command string, created time.Time) api.Approval {
		return api.Approval{ID: id, Surface: api.SurfaceAgentHook, SessionID: session, Command: command, Created: created}
	}
	mcp := api.Approval{ID: "m", Surface: api.SurfaceMCP, SessionID: "s1", Command: "make deploy", Created: asked}
	for _, c := range []struct {
		name string
		list []api.Approval
		want string
	}{
		{"its own", []api.Approval{mcp, hook("a", "s1", "make deploy", asked.Add(time.Millisecond))}, "a"},
		{"the only one of its session (the command judged differently)", []api.Approval{hook("a", "s1", "make  deploy", asked)}, "a"},
		{"another session's", []api.Approval{hook("a", "s2", "make deploy", asked)}, ""},
		{"one older than the call", []api.Approval{hook("a", "s1", "make deploy", asked.Add(-time.Minute))}, ""},
		{"the same command among several", []api.Approval{hook("a", "s1", "make test", asked), hook("b", "s1", "make deploy", asked)}, "b"},
		{"several, none of its command", []api.Approval{hook("a", "s1", "make test", asked), hook("b", "s1", "make lint", asked)}, ""},
		{"none", nil, ""},
	} {
		a, ok := heldFor(c.list, "s1", "make deploy", asked)
		if got := map[bool]string{true: a.ID}[ok]; got != c.want {
			t.Errorf("%s: heldFor = %q (%v), want %q", c.name, a.ID, ok, c.want)
		}
	}
}
