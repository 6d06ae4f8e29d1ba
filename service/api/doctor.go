package api

import "time"

// PathDoctor is GET: gatehouse doctor's report, run by the service now
// (DoctorReport).
const PathDoctor = "/v1/doctor"

// DoctorState is how one of doctor's checks came out.
type DoctorState string

// The states of a check. A problem is what stops the governed shell (or
// every command of one kind) from serving: doctor exits 1. A warning is
// this user's setup working less well than it could, with the remedy.
// Advice is what IT's managed settings would add for every user of the
// machine: never this user's fault, never a problem.
const (
	DoctorOK      DoctorState = "ok"
	DoctorWarning DoctorState = "warning"
	DoctorProblem DoctorState = "problem"
	DoctorAdvice  DoctorState = "advice"
)

// A DoctorCheck is one thing doctor checked: what it found and, when it
// is not ok, the one remedy (empty when Message already says it).
type DoctorCheck struct {
	// Name is stable: service, hook and commands first; then config,
	// credential, audit, sandbox, init, …; a Claude Code drift code
	// (hook/claude Finding) for the settings.
	Name    string      `json:"name"`
	State   DoctorState `json:"state"`
	Message string      `json:"message"`
	Remedy  string      `json:"remedy,omitempty"`
}

// A DoctorFact is one line of what doctor read of the host: a label and
// its value (config, backend, sandbox mode, audit, …).
type DoctorFact struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// DoctorReport is gatehouse doctor's report: what every face (the CLI, the
// dashboard, the tray) shows, and none works out again.
type DoctorReport struct {
	// OK says no check is a problem: the governed shell can serve.
	OK bool      `json:"ok"`
	At time.Time `json:"at,omitzero"`
	// Checks are this user's, truth first: is the service running, is
	// Claude Code's hook installed and reachable, can a command run now;
	// then the other problems and warnings, in that order, and what is
	// ok.
	Checks []DoctorCheck `json:"checks"`
	// Managed is what IT's managed settings would add (Claude Code's
	// hardening for every user of the machine), kept apart from this
	// user's checks: each is advice, and ManagedRemedy the one remedy of
	// those whose Remedy is empty.
	Managed       []DoctorCheck `json:"managed_settings"`
	ManagedRemedy string        `json:"managed_settings_remedy,omitempty"`
	// Facts are what doctor read of the host, in the order it prints them.
	Facts []DoctorFact `json:"facts"`
}

// Count is how many of r's checks (Checks and Managed) are in state st.
func (r *DoctorReport) Count(st DoctorState) int {
	n := 0
	for _, cs := range [][]DoctorCheck{r.Checks, r.Managed} {
		for _, c := range cs {
			if c.State == st {
				n++
			}
		}
	}
	return n
}

// Check returns r's check of that name, and whether there is one.
func (r *DoctorReport) Check(name string) (DoctorCheck, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return DoctorCheck{}, false
}
