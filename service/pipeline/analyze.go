package pipeline

// This file is the analysis stage of the pipeline: it builds the command
// tree (service/analysis), judges it under the policy, and keeps the
// judged bytes of every script the tree read so that they, and only they,
// run.
//
// Pinning happens in three steps:
//
//  1. At the decision, analysis reads each script (inside the inspection
//     roots only) and the plan keeps its bytes and SHA-256.
//  2. Right before the start (recheckPins), each script's path must still
//     hold the judged bytes, else the hard denial
//     modified_outside_governance; then a private copy of the judged bytes
//     (0400, 0500 when the command runs it by path) is written to a fresh
//     directory outside the workspace, and read back and hashed once more.
//  3. A backend that binds paths (bubblewrap) binds each copy read-only
//     over its path (sandbox.Spec.Pins) and binds every directory between
//     the workspace root and the script over itself, so that neither the
//     script nor a directory above it can be renamed away and replaced
//     (EBUSY). Seatbelt rewrites the command line to run the copies
//     (pin_method "copy", pin_coverage "partial"). The copies are removed
//     after the run.
//
// With backend none nothing is copied: the path is checked right before
// the start and the event says pin_method "checked".

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Denials of the analysis stage. command_analysis_off and
// modified_outside_governance are hard denials no knob relaxes.
const (
	DenyAnalysisOff = "command_analysis_off"
	DenyModified    = "modified_outside_governance"
	DenyParseError  = policy.CodeParseError
	DenyPolicyRule  = policy.CodePolicyRule
	DenyDefault     = policy.CodeDefaultAction
	DenyDynamic     = policy.CodeDynamic
	// DenyPinFailed: the pinned copies could not be made; nothing ran.
	DenyPinFailed = "pin_failed"
)

// Pin methods on the event (sandbox.Backend.PinMethod).
const (
	PinBindMount = sandbox.PinBindMount
	PinCopy      = sandbox.PinCopy
	PinChecked   = sandbox.PinChecked
)

// StatusReasonPinMismatch is the status_reason of an execution refused
// because a pinned script changed.
const StatusReasonPinMismatch = api.StatusReasonPinMismatch

// testOnlyPinHooks holds test hooks by working directory: afterDecision runs
// when a decision is made, before anything is pinned; beforeStart after the
// pins are taken and checked, right before the sandbox starts.
var testOnlyPinHooks sync.Map // cwd → *pinHooks

type pinHooks struct {
	afterDecision, beforeStart func()
}

func runPinHook(cwd string, pick func(*pinHooks) func()) {
	if h, ok := testOnlyPinHooks.Load(cwd); ok {
		if f := pick(h.(*pinHooks)); f != nil {
			f()
		}
	}
}

// execPlan is what analysis fixed about one execution.
type execPlan struct {
	// scripts are the scripts the tree read: path, judged bytes and hash.
	scripts []*analysis.Script
	// analysed is the command's tree, whose parsed units the credential
	// check reads instead of parsing again.
	analysed *analysis.Tree
	// pins are the inspected scripts bound over their paths; they are made
	// right before the start (recheckPins).
	pins []sandbox.Pin

	mu   sync.Mutex
	dirs []string // pin directories to remove
}

// tree returns the command's tree, nil on a nil plan.
func (p *execPlan) tree() *analysis.Tree {
	if p == nil {
		return nil
	}
	return p.analysed
}

// release removes the pinned copies. It is safe to call more than once,
// and on a nil plan.
func (p *execPlan) release() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.dirs {
		os.RemoveAll(d)
	}
	p.dirs = nil
}

// analysisOptions describes req's surroundings to the analysis.
// The deny-read set and the script roots are looked at through j, the
// judge of the pass's workspace roots (policy.RootJudge.Lstat).
func (e *Executor) analysisOptions(req *api.ExecRequest, dir string, roots []string, j *policy.RootJudge) analysis.Options {
	env := map[string]string{}
	read, hide, allow := e.readPlan(roots, e.cfg.Settings.Writable(roots))
	tools, _ := e.toolEnv(e.toolCacheOf(req, nil), "", read, hide, allow)
	for _, kv := range e.env(req, dir, "", tools) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	// These vary: the shell sets PWD, and the id is per execution.
	delete(env, "PWD")
	delete(env, "GATEHOUSE_EXECUTION_ID")
	// Credentials are injected at run time: never known, never shown.
	var unknown []string
	for k := range e.cfg.Exec.Credentials.Env {
		unknown = append(unknown, k)
		delete(env, k)
	}
	slices.Sort(unknown)
	return analysis.Options{
		Dialect:     filepath.Base(e.cfg.Exec.Shell),
		Dir:         dir,
		Env:         env,
		ScriptRoots: resolveAll(e.cfg.ScriptInspectionRootsEffective(), false, j.Lstat),
		DenyRead:    resolveAll(e.denyReadAsWrittenBy(j), true, j.Lstat),
		Writable:    roots,
		Unknown:     unknown,
		Stdin:       req.Stdin,
	}
}

// resolveAll returns paths with symlinks resolved; with keep, the paths as
// given are kept too (a deny-read path is refused either way). Paths that
// do not exist (by lstat) are dropped unless kept.
func resolveAll(paths []string, keep bool, lstat func(string) (fs.FileInfo, error)) []string {
	var out []string
	for _, p := range paths {
		if keep {
			out = append(out, filepath.ToSlash(filepath.Clean(p)))
		}
		if _, err := lstat(p); err != nil {
			continue // absent: one lstat, not EvalSymlinks' walk
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, filepath.ToSlash(r))
		}
	}
	return out
}

// judge analyses req's command in dir and decides it.
//
// The credentials stage plugs in here: ${credential:<id>} references are
// rewritten to ${GATEHOUSE_CRED_<ID>} in req.Command before it is parsed
// (DESIGN §5), so that the judged text never holds a value, and the tree is
// then checked for credential-bearing variables in argv
// (credential_in_argv).
func (e *Executor) judge(req *api.ExecRequest, dir string, roots []string, j *policy.RootJudge) (*analysis.Tree, policy.Verdict) {
	tree := analysis.Analyze(req.Command, e.analysisOptions(req, dir, roots, j))
	return tree, policy.Decide(tree, &e.cfg.Policy)
}

// analysisOffReason explains command_analysis_off.
const analysisOffReason = "command analysis is off (policy.command_analysis_mode: off), and the governed shell runs nothing it has not analysed; set it to enforce"

// analyze parses req's command, applies the policy rules and fills the
// event's analysis fields. A *Denial means nothing may run.
func (e *Executor) analyze(ctx context.Context, req *api.ExecRequest, dir string, roots []string, ev *api.Event, run *decideRun) (*execPlan, error) {
	if e.cfg.Policy.CommandAnalysisMode == "off" {
		return nil, deny(ev, DenyAnalysisOff, analysisOffReason)
	}
	tree, dec := e.judge(req, dir, roots, run.judge)
	run.tree, run.verdict = tree, dec
	ev.Dialect = tree.Dialect
	ev.Rule = dec.Rule // what held or denied it, by name: the reason quotes the command
	ev.ResolvedCmds = tree.ResolvedCommands()
	switch dec.Action {
	case policy.ActionAllow:
	case policy.ActionAsk:
		if err := e.holdCommand(ctx, req, dir, tree, dec, ev, run); err != nil {
			return nil, err
		}
	default:
		return nil, deny(ev, dec.Code, dec.Reason)
	}
	plan := &execPlan{scripts: tree.Scripts, analysed: tree}
	// The backend is probed at the run; until then, the one this
	// configuration expects here.
	b := probe.Expected(e.cfg.Exec.Sandbox.Backend, runtime.GOOS)
	ev.PinnedScripts, ev.PinCoverage = pinsOf(plan.scripts, b)
	runPinHook(dir, func(h *pinHooks) func() { return h.afterDecision })
	return plan, nil
}

// pinsOf is the event's pinned_scripts and pin_coverage for scripts run
// under backend b.
func pinsOf(scripts []*analysis.Script, b sandbox.Backend) ([]api.Pin, string) {
	out := []api.Pin{}
	for _, s := range scripts {
		out = append(out, api.Pin{Path: s.Path, SHA256: s.SHA256, Size: s.Size, PinMethod: b.PinMethod()})
	}
	if len(out) == 0 {
		return out, ""
	}
	return out, b.PinCoverage()
}

// A pinMismatch is a script whose bytes are not the judged ones.
type pinMismatch struct {
	path, why string
}

func (m *pinMismatch) Error() string {
	return fmt.Sprintf("%s %s since it was analysed and judged; run the command again to have the new contents judged", m.path, m.why)
}

// recheckPins verifies, immediately before the start, that every pinned
// script still has the bytes that were judged: it takes the pins (private
// copies of the judged bytes, which the backend binds over their paths or
// runs instead of them), sets them on spec and checks them once more.
func (e *Executor) recheckPins(plan *execPlan, spec *sandbox.Spec, backend sandbox.Backend, ev *api.Event) error {
	if plan == nil || len(plan.scripts) == 0 {
		return nil
	}
	// The files must still hold the judged bytes: a script changed between
	// the decision and now is not run, in either its old or its new form.
	for _, s := range plan.scripts {
		if err := sameBytes(s.Path, s.SHA256, s.Size); err != nil {
			return denyNeverRan(ev, DenyModified, err.Error(), StatusReasonPinMismatch)
		}
	}
	if backend.PinMethod() != PinChecked {
		pins, err := plan.take(spec.WorkspaceRoots)
		if err != nil {
			var m *pinMismatch
			if errors.As(err, &m) {
				return denyNeverRan(ev, DenyModified, err.Error(), StatusReasonPinMismatch)
			}
			return denyNeverRan(ev, DenyPinFailed, "the pinned copies of the judged scripts could not be made: "+err.Error(), DenyPinFailed)
		}
		spec.Pins = pins
	}
	ev.PinnedScripts, ev.PinCoverage = pinsOf(plan.scripts, backend)
	runPinHook(ev.Cwd, func(h *pinHooks) func() { return h.beforeStart })
	return nil
}

// sameBytes checks that the file p holds bytes with the given hash.
func sameBytes(p, sum string, size int64) error {
	data, err := analysis.ReadScript(p, size)
	switch {
	case errors.Is(err, analysis.ErrTooLarge):
		return &pinMismatch{p, "has changed"}
	case err != nil:
		return &pinMismatch{p, "can no longer be read (" + errorCause(err) + ")"}
	case analysis.SHA256(data) != sum:
		return &pinMismatch{p, "has changed"}
	}
	return nil
}

func errorCause(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// take writes a private copy of each judged script to a new directory
// outside the workspace roots and checks each copy's hash.
func (p *execPlan) take(roots []string) ([]sandbox.Pin, error) {
	base, err := pinBase(roots)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, "gatehouse-pin-")
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.dirs = append(p.dirs, dir)
	p.mu.Unlock()
	var pins []sandbox.Pin
	for i, s := range p.scripts {
		src := filepath.Join(dir, strconv.Itoa(i))
		mode := os.FileMode(0o400)
		if s.Exec {
			mode = 0o500
		}
		f, err := os.OpenFile(src, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return nil, err
		}
		_, werr := f.Write(s.Data())
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, werr
		}
		if err := sameBytes(src, s.SHA256, s.Size); err != nil {
			return nil, &pinMismatch{s.Path, "(its pinned copy) does not hold the judged bytes"}
		}
		pins = append(pins, sandbox.Pin{Path: s.Path, Source: src, SHA256: s.SHA256, Size: s.Size})
	}
	return pins, nil
}

// An Explanation is what the pipeline decides about a request, without
// running it (gatehouse explain): the decision a call would get now, from
// the same order every call goes through.
type Explanation struct {
	// Decision is allow, deny, or ask: a call would be held for a
	// person's answer (Held says why) and, approved, run.
	Decision  string `json:"decision"`
	BlockedBy string `json:"blocked_by,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Hint is the remedy of a denial.
	Hint string `json:"hint,omitempty"`
	// Held says for what a call would wait for a person's answer, in the
	// order it would be asked; a call both held and then denied waits,
	// and is denied once approved.
	Held []string `json:"held,omitempty"`
	// Analysis is the analysis's own verdict (allow, ask or deny, with the
	// deciding rule and node).
	Analysis policy.Verdict `json:"analysis"`
	Cwd      string         `json:"cwd,omitempty"`
	// Tree is nil when the request was refused before analysis.
	Tree *analysis.Tree `json:"tree,omitempty"`
	// PinnedScripts are the scripts that would be pinned.
	PinnedScripts []api.Pin `json:"pinned_scripts"`
}

// Explain decides req as Execute would, through the same order, without
// waiting for anyone, running or recording anything. An *ArgError is a bad
// request.
func (e *Executor) Explain(ctx context.Context, req api.ExecRequest) (x *Explanation, err error) {
	ev := newEvent(&req, filepath.Base(e.cfg.Exec.Shell))
	run := &decideRun{dry: true, verdict: policy.Verdict{Node: -1}}
	d, err := e.decideGuarded(ctx, req, ev, run, "explaining")
	x = &Explanation{Decision: policy.ActionDeny, PinnedScripts: []api.Pin{}, Analysis: run.verdict, Tree: run.tree, Cwd: ev.Cwd, Held: run.held}
	var den *Denial
	switch {
	case errors.As(err, &den):
		x.BlockedBy, x.Reason, x.Hint = den.Code, den.Reason, Remedy(den.Code, den.Hint)
		return x, nil
	case err != nil:
		return nil, err
	}
	x.Decision, x.PinnedScripts = policy.ActionAllow, d.Event.PinnedScripts
	if len(run.held) > 0 {
		x.Decision = policy.ActionAsk
		x.Reason = strings.Join(run.held, "; then ")
	}
	return x, nil
}

// pinBase returns the directory the pin directories are made in: the
// temporary directory, unless the command could write there (a workspace
// root holds it), then /tmp (which the sandbox replaces with its own).
func pinBase(roots []string) (string, error) {
	for _, base := range []string{os.TempDir(), "/tmp"} {
		real, err := filepath.EvalSymlinks(base)
		if err != nil {
			continue
		}
		inside := false
		for _, r := range roots {
			if sandbox.Within(real, r) {
				inside = true
			}
		}
		if !inside {
			return real, nil
		}
	}
	return "", errors.New("every temporary directory lies inside a workspace root, where the command could change the copies")
}

// WriteText writes x for a person, as gatehouse explain prints it: the
// decision, the tree (policy.WriteText) and the working directory. The
// text is what agents wrote: a caller showing it escapes it (termesc).
func (x *Explanation) WriteText(w io.Writer) {
	if x.Tree == nil {
		fmt.Fprintf(w, "decision: %s (%s)\nreason:   %s\n", x.Decision, x.BlockedBy, x.Reason)
		if x.Hint != "" {
			fmt.Fprintf(w, "hint:     %s\n", x.Hint)
		}
		return
	}
	d := x.Analysis
	// The pipeline's words for the decision, which may be a later stage's
	// than the analysis's.
	d.Action = x.Decision
	switch {
	case x.BlockedBy != "":
		d.Code, d.Reason = x.BlockedBy, x.Reason
	case x.Decision == policy.ActionAsk:
		d.Code, d.Reason = "", x.Reason
	}
	policy.WriteText(w, x.Tree, d)
	if x.Hint != "" {
		fmt.Fprintf(w, "hint: %s\n", x.Hint)
	}
	if x.Cwd != "" {
		fmt.Fprintf(w, "\ncwd: %s\n", x.Cwd)
	}
}
