package api

// This file names the closed vocabularies of the event and the admission
// answer: decisions, statuses and status reasons. They are strings on the
// wire and in the audit chain (which hashes them): the names change no
// byte.

// Decision is the house's answer to a request (Event.Decision,
// DecideResponse.Decision).
type Decision string

const (
	DecisionAllow Decision = "allow"
	DecisionDeny  Decision = "deny"
)

// Statuses: how an execution ended, the values of Event.Status. A backend
// reports the same names as sandbox.Status.
const (
	StatusCompleted     = "completed"
	StatusTimedOut      = "timed_out"
	StatusKilled        = "killed"
	StatusFailedToStart = "failed_to_start"
	StatusNeverRan      = "never_ran"
)

// Status reasons: why an execution ended as it did, the values of
// Event.StatusReason besides the denial codes a stage that was on its way
// to start the command records as its reason (pipeline's Deny…). Those a
// backend reports are sandbox's (sandbox.ReasonSpawnError, …).
const (
	// The sandbox init is missing, or of another build (failed_to_start).
	StatusReasonInitMissing  = "init_missing"
	StatusReasonInitMismatch = "init_mismatch"
	// A pinned script changed after the decision (never_ran).
	StatusReasonPinMismatch = "pin_mismatch"
	// Routed executions that never started: the concurrency limit, a
	// ticket not redeemed in time, a relay that went away or could not be
	// prepared, the service stopping first.
	StatusReasonConcurrencyLimit = "concurrency_limit"
	StatusReasonTicketExpired    = "ticket_expired"
	StatusReasonRelayGone        = "relay_gone"
	StatusReasonRelayUnavailable = "relay_unavailable"
	StatusReasonServiceStopped   = "service_stopped"
	// Executions the audit found started and never completed: the service
	// died under them (killed, or never_ran when it had not started it),
	// or their process is gone.
	StatusReasonServiceCrashed = "service_crashed"
	StatusReasonProcessCrashed = "process_crashed"
)
