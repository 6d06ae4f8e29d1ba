package sandbox

import (
	"context"
	"time"
)

// DefaultKillGrace is the time between SIGTERM and SIGKILL when a Spec
// names none.
const DefaultKillGrace = 5 * time.Second

// Supervise waits for the end of a started execution, delivered on waitC.
// At spec's timeout, or when ctx ends, it calls term (SIGTERM to everything
// the command started), and kill spec.KillGrace later. It records in res
// whether the timeout (TimedOut) or the context (Status killed) ended the
// run, and returns what waitC delivered. Backends differ only in how they
// signal.
func Supervise(ctx context.Context, spec *Spec, res *Result, waitC <-chan error, term, kill func()) error {
	var timeoutC, killC <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	grace := spec.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	terminate := func() {
		if killC == nil {
			term()
			killC = time.After(grace)
		}
	}
	done := ctx.Done()
	for {
		select {
		case err := <-waitC:
			return err
		case <-timeoutC:
			res.TimedOut = true
			terminate()
		case <-done:
			done = nil
			if !res.TimedOut {
				res.Status = StatusKilled
			}
			terminate()
		case <-killC:
			killC = nil
			kill()
		}
	}
}
