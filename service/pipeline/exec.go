// Package pipeline runs a shell:execute request through Gatehouse's one
// order: argument checks, workspace checks, sandbox selection, execution,
// and the result and audit event that describe it.
package pipeline

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// Hard denials no knob relaxes (DESIGN §4), and the other blocked_by codes
// the executor produces.
const (
	DenySandboxUnavailable = sandbox.ReasonSandboxUnavailable
	DenyCwdOutside         = "cwd_outside_workspace"
	DenyExecDisabled       = "exec_disabled"
	// DenyWorkspaceRoot: a workspace root resolves, now, to a place no
	// root may be (/, the home directory or above it, a deny-read path) or
	// outside the managed roots; a symlink planted after the configuration
	// was loaded is the usual cause.
	DenyWorkspaceRoot = "workspace_root_invalid"
)

// An ArgError is a bad argument of a request: nothing ran.
type ArgError struct {
	Arg string
	Msg string
}

func (e *ArgError) Error() string { return e.Arg + ": " + e.Msg }

// A Denial is a request the pipeline refused; nothing ran.
type Denial struct {
	Code   string // blocked_by
	Reason string // user-safe explanation: one sentence
	// Hint, when set, is the stage's remedy: what the user can do about
	// this denial. A caller without one may give its own for Code.
	Hint  string
	Event *api.Event
	// Warning, when set, says the denial is not on the audit record.
	Warning string
}

func (d *Denial) Error() string { return "denied " + d.Code + ": " + d.Reason }

// deny records on ev that the request is refused for code and reason, and
// returns the denial that carries it. Every stage denies through it.
func deny(ev *api.Event, code, reason string) *Denial {
	ev.Decision, ev.BlockedBy, ev.Reason = api.DecisionDeny, code, reason
	return &Denial{Code: code, Reason: reason, Event: ev}
}

// withHint sets d's remedy and returns d.
func (d *Denial) withHint(hint string) *Denial {
	d.Hint = hint
	return d
}

// denyNeverRan is deny for an execution that was on its way to start: its
// status says it never ran, and why (statusReason).
func denyNeverRan(ev *api.Event, code, reason, statusReason string) *Denial {
	ev.Status, ev.StatusReason = string(sandbox.StatusNeverRan), statusReason
	return deny(ev, code, reason)
}

// Options configure an Executor.
type Options struct {
	// Home is the user's home directory.
	Home string
	// InitPath is the binary implementing sandbox-init and sandbox-exec
	// when exec.sandbox.init_path names none (tests pass their own binary);
	// empty means gatehouse-init found next to this executable or in
	// InitDirs (FindInit).
	InitPath string
	// PrivatePaths are Gatehouse's own config, state and token paths,
	// hidden from commands.
	PrivatePaths []string
	// HostPath is the PATH given to commands; empty means a standard one.
	HostPath string
	Logger   *slog.Logger
	// Audit records every decided request (observe.go); nil records
	// nothing.
	Audit AuditLog
	// Notifier raises native notifications (observe.go); nil raises none.
	Notifier Notifier
	// Keyring holds the credentials commands may get (credentials.go);
	// nil means none can be had.
	Keyring keyring.Store
	// CredentialDir is where each execution's credential files are made;
	// "" means broker.DefaultDir("").
	CredentialDir string
	// ToolCacheRoot holds each agent's tool caches (service/toolcache);
	// "" gives commands none.
	ToolCacheRoot string
	// ToolHost is what the tool caches take from the host's tools.
	ToolHost toolcache.Host
	// Approver asks a person about held calls (hold.go); nil refuses them
	// (approval_required).
	Approver Approver
	// Trusted are the workspace roots the user trusted (service/trust):
	// they join policy.workspace_roots, each while TrustPrivate's guard
	// (trust.GuardFor) still allows it; with an Approver, a call from a
	// directory in no root asks to trust it. Nil: none.
	Trusted *trust.Store
	// TrustPrivate are Gatehouse's own directories no trusted root may be,
	// hold or lie in; nil means PrivatePaths.
	TrustPrivate []string
	// OneShot says this process exits after its one command (an
	// in-process gatehouse exec): the sandbox hands what the kernel
	// retires slowly to a process that outlives it (sandbox.Spec.HandOff).
	OneShot bool
	// TestOnlyWarmEveryCommand makes a command that finds no warm
	// sandbox ready start one and run in it (pool.go), so that a test
	// suite can run every command the warm way.
	TestOnlyWarmEveryCommand bool
	// TestOnlyFault, when set, is called with the command while each
	// request is decided, after analysis: a test makes Gatehouse's own
	// code fail there.
	TestOnlyFault func(command string)
}

// Executor runs requests under one configuration. It is safe for
// concurrent use.
type Executor struct {
	cfg  *policy.Config
	opts Options
	pool atomic.Pointer[pool] // pool.go; nil: none
	// sessions are the service's session networks (sessionnet.go); nil:
	// every execution has a network of its own.
	sessions *SessionNets

	guard func() trust.Guard // what may never be a trusted root (hold.go)
	// plain is the redactor of runs that lease no credential value
	// (credentials.go).
	plain plainRedactor
}

// New returns an Executor for cfg, which must have been validated.
func New(cfg *policy.Config, opts Options) (*Executor, error) {
	if opts.Home == "" {
		return nil, errors.New("home directory unknown")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Executor{cfg: cfg, opts: opts}
	e.guard = sync.OnceValue(func() trust.Guard {
		private := opts.TrustPrivate
		if private == nil {
			private = opts.PrivatePaths
		}
		return trust.GuardFor(cfg, opts.Home, private)
	})
	return e, nil
}

// Outcome is everything one execution produced.
type Outcome struct {
	Result api.Result
	Event  api.Event
	// Raw is the sandbox's own report.
	Raw *sandbox.Result
	// SandboxReason is the host's reason for the backend chosen (why it is
	// none, say).
	SandboxReason string
	// KeptStdout and KeptStderr are the output as delivered, capped at
	// exec.audit.output_max_bytes each, for the audit trail; nil when no
	// output is kept.
	KeptStdout, KeptStderr []byte
	// Warning, when set, is a user-safe account of why this execution is
	// not (fully) on the audit record.
	Warning string
}

// Execute decides req and, when it is allowed, runs it, streaming output
// to out as it arrives; a nil writer in out means that stream is captured
// into the Result instead. The output hashes cover each stream as
// redacted and capped (marker included), before terminal controls are
// escaped for the caller (terminal.go). An *ArgError or *Denial means
// nothing ran; a non-zero exit code is a result, not an error. The one
// event it records carries both the decision and the execution.
func (e *Executor) Execute(ctx context.Context, req api.ExecRequest, out sandbox.Streams) (*Outcome, error) {
	d, err := e.Decide(ctx, req)
	if err != nil {
		return nil, err
	}
	return e.Run(ctx, d, out, d.Event)
}

// Admitted is an allowed request with its execution plan fixed: the
// judged text, the cwd, the timeout, the pinned scripts. Run executes it,
// now or later (a routed command is decided at admit time and run when its
// ticket is redeemed).
type Admitted struct {
	// Event is the decision event (decision "allow").
	Event api.Event

	req     api.ExecRequest
	dir     string
	timeout int
	plan    *execPlan
	creds   *broker.Grant // credentials.go
}

// Request returns the request as decided.
func (d *Admitted) Request() api.ExecRequest { return d.req }

// Decide runs the pipeline up to the decision: argument checks, workspace,
// analysis and policy. A *Denial (recorded) or *ArgError means the request
// may not run.
func (e *Executor) Decide(ctx context.Context, req api.ExecRequest) (d *Admitted, err error) {
	ev := newEvent(&req, filepath.Base(e.cfg.Exec.Shell))
	d, err = e.decideGuarded(ctx, req, ev, &decideRun{}, "deciding")
	var den *Denial
	if errors.As(err, &den) {
		den.Hint = Remedy(den.Code, den.Hint)
		if den.Event != nil {
			if aerr := e.observe(den.Event, nil); aerr != nil {
				den.Warning = notRecorded(aerr)
			}
		}
	}
	return d, err
}

// decideGuarded is decide, where a failure of Gatehouse's own code (what
// it was doing) denies this request alone, on ev: nothing runs, and the
// caller is told why instead of losing the service.
func (e *Executor) decideGuarded(ctx context.Context, req api.ExecRequest, ev *api.Event, run *decideRun, what string) (d *Admitted, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, e.internalError(ev, what, r)
		}
	}()
	return e.decide(ctx, req, ev, run)
}

// DenyInternalError: Gatehouse's own code failed while handling the
// request; nothing ran.
const DenyInternalError = "internal_error"

// internalError logs what a panic of Gatehouse's own code while doing
// what recovered, with its stack, and returns the denial that says so on
// ev. The panic's value is not in the reason: it may quote the command.
func (e *Executor) internalError(ev *api.Event, what string, recovered any) *Denial {
	e.opts.Logger.Error("internal error "+what, "event", ev.ID, "panic", fmt.Sprint(recovered), "stack", string(debug.Stack()))
	return deny(ev, DenyInternalError, internalReason(what, ev.ID)).
		withHint("this is a fault in Gatehouse, not in the command: report it with the command and the log's entry")
}

// internalReason is the reason of an internal_error denial.
func internalReason(what, id string) string {
	where := "the log"
	if id != "" {
		where = "the log, event " + id
	}
	return "Gatehouse failed while " + what + " this command and denied it; nothing ran (" + where + ")"
}

// newEvent returns the event of a request about to be decided.
func newEvent(req *api.ExecRequest, dialect string) *api.Event {
	ev := &api.Event{
		ID:            NewID(),
		Time:          time.Now().UTC(),
		Agent:         req.Agent,
		Surface:       req.Surface,
		SessionID:     req.SessionID,
		ActionType:    api.ActionShellExecute,
		Decision:      api.DecisionAllow,
		Dialect:       dialect,
		CommandHash:   hashHex([]byte(req.Command)),
		ResolvedCmds:  []string{},
		PinnedScripts: []api.Pin{},
		Credentials:   []string{},
		Egress:        api.Egress{DeniedHosts: []string{}},
	}
	ev.SetCommand(req.Command) // the text as asked, until it is judged
	return ev
}

// A decideRun is how far one pass through the order goes, and what it
// learnt on the way that explain shows.
type decideRun struct {
	// dry: nothing waits and nothing is recorded (explain). A stage that
	// would hold the call for a person notes it in held and the order goes
	// on as if the person had approved, so that every later stage that can
	// deny is reached.
	dry  bool
	held []string
	// tree and verdict are the analysis's, once it ran.
	tree    *analysis.Tree
	verdict policy.Verdict
	// judge judged the workspace roots of the pass (prologue); the pass
	// looks at the deny-read set through it (analysisOptions).
	judge *policy.RootJudge
}

// prologue is the start of the order, the same for every pass: the
// request's arguments, its credential references, the timeout, whether
// the shell is on, the workspace roots and the working directory. A call
// from a directory in no root is held (hold.go), or noted when dry.
func (e *Executor) prologue(ctx context.Context, req *api.ExecRequest, ev *api.Event, run *decideRun) (roots []string, dir string, timeout int, err error) {
	if err := e.checkArgs(req); err != nil {
		return nil, "", 0, err
	}
	// ${credential:ID} becomes ${GATEHOUSE_CRED_<ID>} before analysis
	// (credentials.go).
	if err := e.rewriteCredentials(req, ev); err != nil {
		return nil, "", 0, err
	}
	timeout = e.timeout(req.TimeoutSeconds)
	ev.TimeoutSeconds = timeout
	if !e.cfg.Exec.Enabled {
		return nil, "", 0, deny(ev, DenyExecDisabled, "the governed shell is turned off (exec.enabled: false)")
	}
	run.judge = e.rootJudge()
	roots, err = e.workspaceRootsBy(run.judge, req.Agent)
	if err != nil {
		return nil, "", 0, deny(ev, DenyWorkspaceRoot, err.Error())
	}
	dir, err = e.resolveCwd(req.Cwd, roots)
	if err != nil {
		// A directory in no root asks to be trusted (hold.go).
		if roots, dir, err = e.holdWorkspace(ctx, req, err, ev, run); err != nil {
			return nil, "", 0, err
		}
		// A person may have taken minutes: the rest of the pass looks
		// at the deny-read set as it is now.
		run.judge = e.rootJudge()
	}
	ev.Cwd = dir
	return roots, dir, timeout, nil
}

func (e *Executor) decide(ctx context.Context, req api.ExecRequest, ev *api.Event, run *decideRun) (*Admitted, error) {
	roots, dir, timeout, err := e.prologue(ctx, &req, ev, run)
	if err != nil {
		return nil, err
	}
	// Command analysis and policy (analyze.go): a denial stops here.
	plan, err := e.analyze(ctx, &req, dir, roots, ev, run)
	if err != nil {
		return nil, err
	}
	ev.SetCommand(req.Command) // the judged text
	if e.opts.TestOnlyFault != nil {
		e.opts.TestOnlyFault(req.Command)
	}
	// credential_in_argv, then the credentials it gets under the grants
	// (credentials.go).
	creds, err := e.planCredentials(&req, plan, ev)
	if err != nil {
		return nil, err
	}
	return &Admitted{Event: *ev, req: req, dir: dir, timeout: timeout, plan: plan, creds: creds}, nil
}

// Run executes an allowed decision and records its execution event, ev:
// the decision event itself for Execute (one event for both), or a new
// event linked to the decision (parent_id) for a routed command. A
// *Denial means nothing ran (no sandbox, or a pinned script changed).
func (e *Executor) Run(ctx context.Context, d *Admitted, out sandbox.Streams, ev api.Event) (*Outcome, error) {
	o, err := e.run(ctx, d, out, &ev)
	var den *Denial
	if err != nil && !errors.As(err, &den) && ev.Status == string(sandbox.StatusFailedToStart) {
		// It was on the record as started: its end says why it did not.
		e.observe(&ev, nil)
	}
	switch {
	case err == nil:
		if aerr := e.observe(&o.Event, o); aerr != nil && o.Warning == "" {
			o.Warning = notRecorded(aerr)
		}
	case errors.As(err, &den):
		den.Hint = Remedy(den.Code, den.Hint)
		if den.Event == nil {
			break
		}
		if aerr := e.observe(den.Event, nil); aerr != nil && den.Code != DenyAuditUnavailable {
			den.Warning = notRecorded(aerr)
		}
	}
	return o, err
}

// ExecutionEvent returns a new event for running d later, linked to its
// decision event.
func (e *Executor) ExecutionEvent(d *Admitted) api.Event {
	ev := d.Event
	ev.ParentID, ev.ID, ev.Time = d.Event.ID, NewID(), time.Now().UTC()
	return ev
}

func (e *Executor) run(ctx context.Context, d *Admitted, out sandbox.Streams, ev *api.Event) (_ *Outcome, err error) {
	req, dir, timeout, plan := &d.req, d.dir, d.timeout, d.plan
	defer plan.release() // the pinned copies live for this run only
	ev.SetCommand(req.Command)

	choice := e.chooseBackend()
	if choice.err != nil || !choice.backend.Isolates() && e.cfg.Policy.SandboxRequired {
		reason := "no sandbox backend is available"
		if choice.err != nil {
			reason = choice.err.Error()
		}
		if choice.err == nil {
			reason = "sandbox backend is " + string(choice.backend) + " (" + choice.why + ") and policy.sandbox_required is true"
		}
		ev.SandboxMode = string(sandbox.ModeUnavailableDenied)
		return nil, denyNeverRan(ev, DenySandboxUnavailable, reason, DenySandboxUnavailable)
	}

	// The roots and the working directory are resolved again: a symlink
	// planted since the decision (or since the configuration was loaded)
	// must not change what is bound writable. They are judged against the
	// deny-read set as it resolves now, here and at the last check.
	judge := e.rootJudge()
	roots, err := e.recheckWorkspace(d, judge)
	if err != nil {
		var den *Denial
		errors.As(err, &den)
		return nil, denyNeverRan(ev, den.Code, den.Reason, den.Code)
	}

	// On the record before anything starts (observe.go): a command that
	// cannot be recorded does not run, unless policy.audit_required is
	// false.
	var warning string
	if err := e.started(ev, &warning); err != nil {
		return nil, err
	}
	// From here an error that is not a *Denial ends the started execution
	// as failed_to_start (Run records it).
	defer func() {
		var den *Denial
		if err != nil && !errors.As(err, &den) {
			ev.Status, ev.StatusReason, ev.Reason = string(sandbox.StatusFailedToStart), sandbox.ReasonSpawnError, err.Error()
		}
	}()

	spec := e.spec(req, dir, roots, judge, ev.ID, timeout, choice)
	spec.Pins = plan.pins
	// The session's network, when the execution has a session
	// (sessionnet.go).
	var sn *sessionNet
	if choice.backend.OwnNetwork() {
		netw, joined, leave, why := e.joinSession(req, choice)
		sn = joined
		defer leave()
		spec.Network = netw
		ev.Network, ev.NetworkReason = api.NetworkPrivate, why
		if netw != nil {
			ev.Network = netw.Name
		}
	}
	ev.ReadPosture = readPostureHeld(spec, choice.backend)
	if tc := e.toolCacheOf(req, spec.DenyRead); tc != nil {
		if err := e.prepareToolCache(tc.Dir); err != nil {
			return nil, err
		}
		ev.ToolCache = tc.Dir
		defer e.trimToolCaches()
	}

	// Credentials (credentials.go): they live for this run only. They are
	// read before a sandbox is chosen: a credential of mode auto is
	// masked or not by its value, and a masked one needs a fresh sandbox.
	lease, err := e.leaseCredentials(d, spec, choice.backend, ev)
	if err != nil {
		return nil, err
	}
	defer lease.Release()

	// A warm sandbox (pool.go) when one is ready for this command's plan.
	var slot *warmSlot
	if _, ok := choice.runner.(sandbox.WarmStarter); ok {
		var why string
		slot, why = e.take(req, sn, spec, len(plan.scripts) > 0, d.creds != nil && len(d.creds.Files) > 0, lease != nil && len(lease.Masked) > 0)
		defer e.refillAfter()()
		ev.SandboxStart, ev.SandboxStartReason = StartFresh, why
		if slot != nil {
			defer slot.discard() // after its run, what is left of it
		}
	}

	// Egress (egress.go): the per-execution proxy, its bind and environment.
	egressInto := ""
	if slot != nil {
		egressInto = slot.egressDir
	}
	stopEgress, err := e.startEgress(ctx, req, spec, choice.backend, ev, egressInto, lease)
	if err != nil {
		return nil, err
	}
	// The pinned bytes are checked once more right before the start, and
	// the roots must still resolve to what the plan binds.
	if err := e.recheckPins(plan, spec, choice.backend, ev); err != nil {
		stopEgress()
		return nil, err
	}
	if now, err := e.recheckWorkspace(d, judge); err != nil || !slices.Equal(e.cfg.Settings.Writable(now), spec.WorkspaceRoots) {
		stopEgress()
		code, reason := DenyWorkspaceRoot, "a workspace root changed where it resolves while the command was being prepared; run it again"
		var den *Denial
		if errors.As(err, &den) {
			code, reason = den.Code, den.Reason
		}
		return nil, denyNeverRan(ev, code, reason, code)
	}
	// Output goes to the caller's writers as it arrives; a stream without
	// a writer is captured (up to the cap) into the result instead.
	var so, se bytes.Buffer
	sumOut, sumErr := sha256.New(), sha256.New()
	// The audit keeps its own bounded copy of what was delivered: like the
	// hashes, it must see the output after redaction, never before.
	keepOut, keepErr := e.keeper(), e.keeper()
	// The caller's copy alone has terminal controls escaped (terminal.go).
	toOut, toErr, closeEscape := e.terminalEscape(orBuffer(out.Stdout, &so), orBuffer(out.Stderr, &se))
	streams := sandbox.Streams{
		Stdout: io.MultiWriter(sumOut, toOut, keepOut),
		Stderr: io.MultiWriter(sumErr, toErr, keepErr),
	}
	// Output DLP (credentials.go) comes first: the caps, the hashes, the
	// audit's copy and the caller see the redacted stream.
	red, streams, err := e.redactOutput(lease, spec, streams)
	if err != nil {
		stopEgress()
		return nil, err
	}
	raw := e.runIn(ctx, slot, choice, spec, streams, ev)
	redactions := red.finish(raw)
	stopEgress()
	// What was refused while it ran, after its own output
	// (refusals.go): the caller's copy alone.
	e.explainRefusals(toErr, d, spec, raw, ev)
	closeEscape()

	ev.Status = string(raw.Status)
	ev.StatusReason = raw.StatusReason
	ev.SandboxMode = string(raw.Mode)
	ev.SeccompReason = raw.SeccompReason
	ev.DurationMS = raw.Duration.Milliseconds()
	ev.WriteBlocked = raw.Blocked
	ev.Limits = &api.Limits{
		Pids: raw.Limits.Pids, NProc: raw.Limits.NProc, Memory: raw.Limits.Memory, Tmpfs: raw.Limits.Tmpfs,
		FileSize: raw.Limits.FileSize, DaemonKill: raw.Limits.DaemonKill,
	}
	ev.Output = api.Output{
		StdoutBytes:    raw.Stdout.Bytes + raw.Stdout.Discarded,
		StderrBytes:    raw.Stderr.Bytes + raw.Stderr.Discarded,
		DiscardedBytes: raw.Stdout.Discarded + raw.Stderr.Discarded,
		Truncated:      raw.Truncated() || raw.TimedOut,
		RedactionCount: redactions,
		SHA256:         hex.EncodeToString(sumOut.Sum(nil)),
		StderrSHA256:   hex.EncodeToString(sumErr.Sum(nil)),
	}
	if raw.Status == sandbox.StatusCompleted {
		code := raw.ExitCode
		ev.ExitCode = &code
	}
	if raw.Status == sandbox.StatusFailedToStart {
		ev.Reason = raw.Error
	}
	res := api.Result{
		Stdout:         so.String(),
		Stderr:         se.String(),
		ExitCode:       ev.ExitCode,
		DurationMS:     ev.DurationMS,
		TimeoutSeconds: timeout,
		TimedOut:       raw.TimedOut,
		Truncated:      ev.Output.Truncated,
		SandboxMode:    ev.SandboxMode,
		RedactionCount: redactions,
	}
	return &Outcome{Result: res, Event: *ev, Raw: raw, SandboxReason: choice.why,
		KeptStdout: keepOut.Bytes(), KeptStderr: keepErr.Bytes(), Warning: warning}, nil
}

func orBuffer(w io.Writer, b *bytes.Buffer) io.Writer {
	if w == nil {
		return b
	}
	return w
}

// checkArgs validates the request's arguments (DESIGN §4).
func (e *Executor) checkArgs(req *api.ExecRequest) error {
	switch {
	case req.Command == "" || strings.TrimSpace(req.Command) == "":
		return &ArgError{"command", "is empty"}
	case len(req.Command) > api.MaxCommandBytes:
		return &ArgError{"command", fmt.Sprintf("is %d bytes; the limit is %d (64 KiB)", len(req.Command), api.MaxCommandBytes)}
	case strings.IndexByte(req.Command, 0) >= 0:
		return &ArgError{"command", "contains a NUL byte"}
	case !utf8.ValidString(req.Command):
		return &ArgError{"command", "is not valid UTF-8"}
	}
	if req.TimeoutSeconds < 0 {
		return &ArgError{"timeout_seconds", fmt.Sprintf("%d is not allowed; use 1 to %d", req.TimeoutSeconds, e.cfg.TimeoutCeiling())}
	}
	if max := int64(e.cfg.Exec.Limits.StdinMaxBytes); int64(len(req.Stdin)) > max {
		return &ArgError{"stdin", fmt.Sprintf("is %d bytes; the limit is %d (exec.limits.stdin_max_bytes)", len(req.Stdin), max)}
	}
	if len(req.Env) > api.MaxEnvKeys {
		return &ArgError{"env", fmt.Sprintf("has %d keys; the limit is %d", len(req.Env), api.MaxEnvKeys)}
	}
	for k, v := range req.Env {
		if !slices.Contains(e.cfg.Exec.Env.AgentSettable, k) {
			return &ArgError{"env." + k, "is not in exec.env.agent_settable"}
		}
		if strings.IndexByte(v, 0) >= 0 {
			return &ArgError{"env." + k, "contains a NUL byte"}
		}
	}
	if req.Cwd != "" && strings.IndexByte(req.Cwd, 0) >= 0 {
		return &ArgError{"cwd", "contains a NUL byte"}
	}
	return nil
}

// timeout returns the effective timeout: the request's (or the policy's
// default) clamped to the ceiling.
func (e *Executor) timeout(requested int) int {
	ceiling := e.cfg.TimeoutCeiling()
	t := requested
	if t == 0 {
		t = e.cfg.Policy.ExecTimeoutSeconds
	}
	if t > ceiling {
		t = ceiling
	}
	return t
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// NewID returns a random event id.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
