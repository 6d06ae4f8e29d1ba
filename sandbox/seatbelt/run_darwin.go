package seatbelt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/direct"
)

// Run runs spec under sandbox-exec: the init's sandbox-exec stage (the
// file-size limit, no core dumps) confined by the profile, then the
// shell, in a session and process group of their own, killed as a group
// at the timeout and when the shell exits. A descendant that calls setsid
// survives (daemon_kill false); there is no memory or process limit.
func (Runner) Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	t0 := time.Now()
	fail := func(reason, msg string) *sandbox.Result {
		return &sandbox.Result{Mode: sandbox.ModeSeatbelt, Status: sandbox.StatusFailedToStart,
			StatusReason: reason, Error: msg, Duration: time.Since(t0)}
	}
	if _, err := os.Stat(SandboxExec); err != nil {
		res := fail(sandbox.ReasonSandboxUnavailable, SandboxExec+" not found; Seatbelt cannot run on this system")
		res.Mode = sandbox.ModeUnavailableDenied
		return res
	}
	// The private temporary directory, in the user's own (0700) one.
	tmp, err := os.MkdirTemp("", "gatehouse-tmp-")
	if err != nil {
		return fail(sandbox.ReasonSpawnError, "making the private temporary directory: "+err.Error())
	}
	defer os.RemoveAll(tmp)
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real // Seatbelt matches resolved paths: /var is /private/var
	}
	// The write-deny set as it is on the host now: the same survey
	// bubblewrap's mount plan is made from (sandbox/bwrap, portable).
	survey, err := bwrap.Discover(spec.WorkspaceRoots, nil, spec.WriteDeny)
	if errors.Is(err, bwrap.ErrSweepBound) {
		return fail(sandbox.ReasonSweepBound, err.Error()+"; nothing ran: make a smaller directory the workspace root")
	}
	if err != nil {
		return fail(sandbox.ReasonSpawnError, "preparing the write-deny set: "+err.Error())
	}
	defer survey.Close()
	protect := append(append(append([]string{}, survey.Mounts.ProtectDirs...), survey.Mounts.ProtectFiles...), survey.Watch...)
	p, err := Prepare(resolved(spec, filepath.EvalSymlinks), tmp, protect)
	if err != nil {
		return fail(sandbox.ReasonSpawnError, err.Error())
	}
	// The copies, hashed once more just before the start.
	if err := VerifyPins(spec.Pins); err != nil {
		return fail("pin_mismatch", err.Error())
	}
	res := direct.RunWith(ctx, p.Spec, out, direct.Options{
		Mode:       sandbox.ModeSeatbelt,
		Wrap:       []string{SandboxExec, "-p", p.Profile},
		NewSession: true,
	})
	// What the profile could not stop: a hard link made to a protected
	// file and written through, a repository the command created.
	moved, sweepErr := survey.Sweep(blockedSuffix(spec.ID))
	if len(moved) > 0 {
		res.Blocked = moved
	}
	if sweepErr != nil {
		res.StatusReason, res.Error = sandbox.ReasonSweepIncomplete, sweepErr.Error()
	}
	return res
}

// blockedSuffix names the files an execution's sweep moves aside.
func blockedSuffix(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
