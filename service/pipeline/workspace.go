package pipeline

// This file is where a command may run and what it may not read: the
// workspace roots and the working directory, resolved and judged at each
// step (decide, run, the last check before the start), and the deny-read
// set.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// resolveCwd returns the working directory after symlink resolution; it
// must be a directory inside one of roots, the resolved workspace roots.
func (e *Executor) resolveCwd(cwd string, roots []string) (string, error) {
	base := e.cfg.Exec.DefaultCWD
	if cwd == "" {
		cwd = base
	} else if !filepath.IsAbs(cwd) {
		cwd = base + string(filepath.Separator) + cwd // not Join: its Clean would take ".." before the symlinks
	}
	real := filepath.FromSlash(fspath.Resolve(filepath.ToSlash(cwd)))
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("cwd %q does not resolve: %v", cwd, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("cwd %q is not a directory", cwd)
	}
	for _, root := range roots {
		if sandbox.Within(real, root) {
			return real, nil
		}
	}
	return "", &outsideError{real: real, msg: fmt.Sprintf("cwd %q resolves to %q, outside the workspace roots (%s)", cwd, real, strings.Join(roots, ", "))}
}

// An outsideError is a working directory in no workspace root.
type outsideError struct{ real, msg string }

func (e *outsideError) Error() string { return e.msg }

// roots returns the workspace roots of any agent as workspaceRoots judges
// them now, or none when one is refused (the decision has been denied
// then).
func (e *Executor) roots() []string {
	roots, err := e.workspaceRootsBy(e.rootJudge(), anyAgent)
	if err != nil {
		return nil
	}
	return roots
}

// anyAgent asks workspaceRootsBy for the roots trusted for any agent.
const anyAgent = "\x00any"

// workspaceRoots resolves agent's workspace roots now and judges them
// (policy.Config.ResolveWorkspaceRoots), Gatehouse's private paths among
// the places no root may lie in or above: the policy's roots, and the
// directories trusted for every agent or for agent by name. A root is
// bound at the resolved path returned here, never through its symlinks.
func (e *Executor) workspaceRoots(agent string) ([]string, error) {
	return e.workspaceRootsBy(e.rootJudge(), agent)
}

// rootJudge resolves what workspaceRoots judges the roots against now
// (policy.RootJudge): one serves the checks of one execution.
func (e *Executor) rootJudge() *policy.RootJudge {
	return e.cfg.RootJudge(e.opts.Home, e.opts.PrivatePaths)
}

// workspaceRootsBy is workspaceRoots with the roots judged by j: they
// are resolved now, j's deny-read set as it resolved when j was made.
func (e *Executor) workspaceRootsBy(j *policy.RootJudge, agent string) ([]string, error) {
	roots, err := j.Roots()
	if err != nil || e.opts.Trusted == nil {
		return roots, err
	}
	trusted := e.opts.Trusted.Roots()
	if agent != anyAgent {
		trusted = e.opts.Trusted.RootsFor(agent)
	}
	// The trusted roots, each judged again where it resolves now: one
	// that no longer may be is left out, not the call refused. The guard
	// is built on the first root it judges (it resolves the deny-read set
	// twice over), so a user who trusted none never pays for it.
	for _, r := range trusted {
		if !slices.Contains(roots, r) && e.guard().NotInForce(r) == "" {
			roots = append(roots, r)
		}
	}
	return roots, nil
}

// recheckWorkspace resolves d's workspace roots (its agent's, and the
// directory a person let this one call work in: onceRoot) and its decided
// working directory again, and returns the roots; a *Denial when a root
// is refused now or the directory no longer resolves to itself inside
// one. The roots are judged by j (one judge serves one execution's
// checks).
func (e *Executor) recheckWorkspace(d *Admitted, j *policy.RootJudge) ([]string, error) {
	dir := d.dir
	roots, err := e.workspaceRootsBy(j, d.req.Agent)
	if err != nil {
		return nil, &Denial{Code: DenyWorkspaceRoot, Reason: err.Error()}
	}
	if once := onceRoot(d.Event.Approval); once != "" && !slices.Contains(roots, once) {
		if problem := e.guard().NotInForce(once); problem != "" {
			return nil, &Denial{Code: DenyWorkspaceRoot, Reason: fmt.Sprintf("%s, approved for this call, %s", once, problem)}
		}
		roots = append(roots, once)
	}
	real := filepath.FromSlash(fspath.Resolve(filepath.ToSlash(dir)))
	if _, err := os.Stat(real); err != nil || real != dir || !slices.ContainsFunc(roots, func(r string) bool { return sandbox.Within(dir, r) }) {
		return nil, &Denial{Code: DenyCwdOutside, Reason: fmt.Sprintf("cwd %q no longer resolves to itself inside a workspace root; run the command again", dir)}
	}
	return roots, nil
}

// onceRoot is the directory an approval let one call work in without
// trusting it (a workspace request answered once), or "". It is the
// call's own: its decision event carries the answer, and nothing else
// keeps it.
func onceRoot(rec *api.ApprovalRecord) string {
	if rec == nil || rec.Kind != api.ApprovalWorkspace || rec.Answer != api.AnswerOnce {
		return ""
	}
	return rec.Workspace
}

// denyRead returns the mandatory deny-read set for this user plus the
// configured additions and Gatehouse's private paths, each resolved
// (policy.Resolve), so that a deny-read path that is a symlink hides
// what it points at.
func (e *Executor) denyRead() []string { return resolveEach(e.denyReadAsWritten()) }

// denyReadBy is denyRead resolved through j, the judge of the step that
// asks (policy.RootJudge.ResolveEach): the directories j resolved are not
// looked up again.
func (e *Executor) denyReadBy(j *policy.RootJudge) []string {
	return dedup(j.ResolveEach(e.denyReadAsWrittenBy(j)))
}

// denyReadAsWritten is the deny-read set before symlinks are resolved.
func (e *Executor) denyReadAsWritten() []string {
	return DenyRead(e.opts.Home, e.opts.PrivatePaths, e.cfg.Exec.Sandbox.DenyRead)
}

// denyReadAsWrittenBy is denyReadAsWritten with the hidden entries looked
// at through j (sandbox.DenyReadBy): its step has looked at them already.
func (e *Executor) denyReadAsWrittenBy(j *policy.RootJudge) []string {
	return denyReadLstat(e.opts.Home, e.opts.PrivatePaths, e.cfg.Exec.Sandbox.DenyRead, j.Lstat)
}

// DenyRead returns the mandatory deny-read set under home, then private
// (Gatehouse's own paths) and extra (exec.sandbox.deny_read), and what they
// lead to: symlink targets and the keys ~/.ssh/config names
// (sandbox.DenyRead). Managed settings render their file-tool rules from
// the same list.
func DenyRead(home string, private, extra []string) []string {
	return denyReadLstat(home, private, extra, os.Lstat)
}

// denyReadLstat is DenyRead with the hidden entries looked at by lstat
// (sandbox.DenyReadBy).
func denyReadLstat(home string, private, extra []string, lstat func(string) (fs.FileInfo, error)) []string {
	return sandbox.DenyReadBy(home, append(slices.Clone(private), extra...), lstat)
}

// resolveEach returns paths resolved by policy.ResolveEach, deduplicated.
func resolveEach(paths []string) []string { return dedup(policy.ResolveEach(paths)) }

// dedup returns paths without repeats, in their first order.
func dedup(paths []string) []string {
	var out []string
	for _, r := range paths {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
