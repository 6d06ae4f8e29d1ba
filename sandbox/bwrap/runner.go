package bwrap

import "log/slog"

// Runner runs executions under bubblewrap: it is the sandbox.Runner (and
// sandbox.WarmStarter) of the bubblewrap backend. Each execution gets the
// cgroup of its own where the host delegates one (sandbox/limits). It is
// safe for concurrent use.
type Runner struct {
	// Options are facts about the bwrap binary (sandbox/probe).
	Options
	// Logger reports limits that could not be applied; nil discards.
	Logger *slog.Logger
}
