package pipeline

// This file plans the read posture of an execution (exec.sandbox.read):
// under workspace the home directory and the other places user data lives
// (policy.ReadHidden) are emptied in the sandbox, and of them only the
// workspace roots, exec.sandbox.read_allow and the agent's tool cache come
// back. The deny-read set holds under either posture.

import (
	"os"
	"slices"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// readPlan returns the posture of an execution whose resolved workspace
// roots are roots, of which writable are bound writable; under workspace,
// the directories hidden and what is bound back read-only: read_allow
// (resolved, existing paths only) and the roots that are not writable.
func (e *Executor) readPlan(roots, writable []string) (sandbox.ReadPosture, []string, []string) {
	if e.cfg.Exec.Sandbox.Read != policy.ReadWorkspace {
		return sandbox.ReadHost, nil, nil
	}
	hide := policy.ReadHidden(e.opts.Home)
	var allow []string
	add := func(p string) {
		if _, err := os.Stat(p); err == nil && !slices.Contains(allow, p) {
			allow = append(allow, p)
		}
	}
	for _, p := range policy.ResolveEach(e.cfg.Exec.Sandbox.ReadAllow) {
		add(p)
	}
	for _, r := range roots {
		if !slices.Contains(writable, r) {
			add(r) // readable, not writable (a settings file's allowWrite)
		}
	}
	return sandbox.ReadWorkspace, hide, allow
}

// readable reports whether the path p is readable under the workspace
// posture that hides hide and brings back allow.
func readable(p string, hide, allow []string) bool {
	in := func(list []string) bool {
		return slices.ContainsFunc(list, func(d string) bool { return sandbox.Within(p, d) })
	}
	return !in(hide) || in(allow)
}

// readPostureHeld is the read posture an execution under backend gets:
// only a backend that binds paths hides anything.
func readPostureHeld(spec *sandbox.Spec, backend sandbox.Backend) string {
	if backend.BindsPaths() && spec.Read == sandbox.ReadWorkspace && len(spec.ReadHide) > 0 {
		return string(sandbox.ReadWorkspace)
	}
	return string(sandbox.ReadHost)
}
