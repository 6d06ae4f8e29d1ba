package decide

import (
	"context"
	"io"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/waitline"
)

// waitingPoll is how often the hook looks, while the service decides, for
// the approval its call is held for. Claude Code reads a running hook's
// output about once a second.
const waitingPoll = 500 * time.Millisecond

// sayWaiting writes waitline.Line to w once, when the call the hook
// asked about (command, in session) is held for a person's
// approval, until ctx ends. The service does not name the hold to the
// hook, so the hook finds it among the pending approvals: one of the
// hook's surface and session created since the call was asked, the one of
// the same command when several are.
func sayWaiting(ctx context.Context, w io.Writer, c *localapi.Client, session, command string, asked time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(waitingPoll):
		}
		list, err := c.Approvals(ctx)
		if err != nil {
			continue
		}
		if a, ok := heldFor(list, session, command, asked); ok {
			if ctx.Err() == nil {
				io.WriteString(w, waitline.Line(a, time.Now()))
			}
			return
		}
	}
}

// heldFor picks the approval a hook's call is held for among the pending
// ones: of the hook's surface and session, created at or after asked (less
// a second of clock rounding), the one of command, or the only one.
func heldFor(list []api.Approval, session, command string, asked time.Time) (api.Approval, bool) {
	var cands []api.Approval
	for _, a := range list {
		if a.Surface != api.SurfaceAgentHook || a.SessionID != session || a.Created.Before(asked.Add(-time.Second)) {
			continue
		}
		if a.Command == command {
			return a, true
		}
		cands = append(cands, a)
	}
	if len(cands) == 1 {
		return cands[0], true
	}
	return api.Approval{}, false
}
