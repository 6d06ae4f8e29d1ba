package sandbox

// This file is the seam between the pipeline and the backends: what a
// backend is called, the facts about it the pipeline asks for (never its
// name), and the one method every backend implements.

import (
	"context"
	"errors"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/internal/scale"
)

// Backend names a sandbox backend, as written in exec.sandbox.backend.
type Backend string

const (
	BackendAuto       Backend = "auto"
	BackendBubblewrap Backend = "bubblewrap"
	BackendSeatbelt   Backend = "seatbelt"
	BackendNone       Backend = "none"
)

// backendInfo is what the pipeline may ask of a backend: a new backend is
// one line of backendInfos (and its runner in package backends).
type backendInfo struct {
	name Backend
	// peer: the backend ranks with the one before it, neither narrower
	// than the other (a concrete backend a managed file names is locked).
	peer bool
	// mode stamps an execution that failed before the backend could say
	// more (bubblewrap reports bubblewrap_no_seccomp itself).
	mode                                       Mode
	isolates, bindsPaths, killsDaemons, ownNet bool
}

// backendInfos are the backends a configuration may name, from the widest
// to the narrowest: validation lists them in this order and managed
// narrowing ranks by it (Backends).
var backendInfos = []backendInfo{
	{name: BackendNone, mode: ModeNone},
	{name: BackendAuto, mode: ModeUnavailableDenied},
	{name: BackendBubblewrap, mode: ModeBubblewrap, isolates: true, bindsPaths: true, killsDaemons: true, ownNet: true},
	{name: BackendSeatbelt, peer: true, mode: ModeSeatbelt, isolates: true},
}

// Backends is the vocabulary of exec.sandbox.backend, widest first.
var Backends = func() scale.Scale {
	var steps []scale.Step
	for _, b := range backendInfos {
		if b.peer {
			steps[len(steps)-1] = append(steps[len(steps)-1], string(b.name))
			continue
		}
		steps = append(steps, scale.Step{string(b.name)})
	}
	return scale.Of(steps...)
}()

func (b Backend) info() backendInfo {
	for _, i := range backendInfos {
		if i.name == b {
			return i
		}
	}
	return backendInfo{name: b, mode: ModeUnavailableDenied}
}

// Mode is the mode an execution of b is stamped with when it fails before
// its backend could say more (bubblewrap reports bubblewrap_no_seccomp
// itself).
func (b Backend) Mode() Mode { return b.info().mode }

// Isolates reports whether b puts the command in a sandbox at all; none
// does not (policy.sandbox_required refuses it).
func (b Backend) Isolates() bool { return b.info().isolates }

// BindsPaths reports whether b can put a file at a path of its choosing
// inside the sandbox (bind mounts): pinned scripts are bound over their
// paths, the credential directory appears at CredDirInSandbox, the agent's
// tool cache is bound into a private tmpfs and the runtime directory is
// private. A backend that cannot shows the command host paths instead.
func (b Backend) BindsPaths() bool { return b.info().bindsPaths }

// KillsDaemons reports whether everything the command started, a
// descendant that called setsid included, ends with it (a pid namespace);
// the others kill the command's process group (limits_enforced.daemon_kill).
func (b Backend) KillsDaemons() bool { return b.info().killsDaemons }

// OwnNetwork reports whether the command has a network namespace of its
// own, reaching the egress proxy only through the init's bridge over the
// proxy's unix socket. A backend without one shares the host's network:
// the proxy listens on a loopback TCP port (Egress.Addr), which Seatbelt's
// profile lets the command connect to and nothing else.
func (b Backend) OwnNetwork() bool { return b.info().ownNet }

// Pin methods, on the event's pinned_scripts.
const (
	// PinBindMount: the judged copy is bound read-only over the path.
	PinBindMount = "bind_mount"
	// PinCopy: the command line is rewritten to run the judged copy,
	// kept in a private directory and hashed again just before the start;
	// a script reached another way (by another script) runs from its path.
	PinCopy = "copy"
	// PinChecked: the path was hashed again right before the start, but
	// nothing stops a later change.
	PinChecked = "checked"
)

// Pin coverage, on the event (pin_coverage) of an execution with pinned
// scripts: how much of what runs is the judged bytes.
const (
	PinCoverageFull    = "full"
	PinCoveragePartial = "partial"
	PinCoverageNone    = "none"
)

// PinMethod is how b pins a judged script.
func (b Backend) PinMethod() string {
	switch b {
	case BackendBubblewrap:
		return PinBindMount
	case BackendSeatbelt:
		return PinCopy
	}
	return PinChecked
}

// PinCoverage is how much of what runs under b is the judged bytes.
func (b Backend) PinCoverage() string {
	switch b.PinMethod() {
	case PinBindMount:
		return PinCoverageFull
	case PinCopy:
		return PinCoveragePartial
	}
	return PinCoverageNone
}

// A Runner runs one execution described by spec, streaming its output to
// out, and always returns a Result: when nothing could start, its Status is
// failed_to_start and Error says why. bwrap.Runner, seatbelt.Runner and
// direct.Runner (mode none) implement it.
type Runner interface {
	Run(ctx context.Context, spec *Spec, out Streams) *Result
}

// A WarmStarter starts a sandbox ahead of its command (the service's warm
// pool). bwrap.Runner implements it on Linux.
type WarmStarter interface {
	// StartWarm starts a sandbox for spec's mount plan; spec's command,
	// environment, working directory and stdin are not used.
	StartWarm(spec *Spec) (Warm, error)
}

// A Warm sandbox serves one command, and only one whose plan is the one it
// was started with.
type Warm interface {
	// Run runs spec in the warm sandbox, or returns ErrPlanChanged or
	// ErrWarmGone and runs nothing.
	Run(ctx context.Context, spec *Spec, out Streams) (*Result, error)
	Alive() bool
	// Pid is the sandbox's outermost process.
	Pid() int
	// Close ends the sandbox unless its command ran there, and frees what
	// it held; it may be called after Run.
	Close()
}

// ErrPlanChanged says a warm sandbox was started for another plan than
// the command's (a repository appeared, a deny-read path changed): nothing
// ran, and the sandbox is discarded.
var ErrPlanChanged = errors.New("the mount plan changed since the warm sandbox started")

// ErrWarmGone says a warm sandbox ended before its command came.
var ErrWarmGone = errors.New("the warm sandbox ended before its command came")

// Refusal is a Runner that starts nothing: each Run returns a copy of
// Result (failed_to_start, with its reason). It stands for a backend that
// cannot run here, or whose init is missing.
type Refusal struct{ Result Result }

// Run returns a copy of r.Result with the execution's duration zero.
func (r Refusal) Run(context.Context, *Spec, Streams) *Result {
	res := r.Result
	return &res
}

// Paths inside a sandbox that Gatehouse owns (bubblewrap; a backend that
// does not bind paths uses host paths). /run is an empty tmpfs there.
const (
	RunDir = "/run/gatehouse"
	// InitInSandbox is where gatehouse-init is bound.
	InitInSandbox = RunDir + "/init"
	// CredDirInSandbox is where the execution's credential files are
	// ($GATEHOUSE_CRED_DIR).
	CredDirInSandbox = RunDir + "/cred"
	// EgressDirInSandbox is where the directory of the egress proxy's
	// socket is bound.
	EgressDirInSandbox = RunDir + "/egress"
)

// ShellArgv is the argument list that runs command in shell: bash with
// neither profile nor rc files, sh with -c alone.
func ShellArgv(shell, command string) []string {
	if len(shell) >= 3 && shell[len(shell)-3:] == "/sh" {
		return []string{shell, "-c", command}
	}
	return []string{shell, "--noprofile", "--norc", "-c", command}
}

// Within reports whether path is root or lies below it, after cleaning
// both: "/app_backup" is not within "/app" (internal/fspath, which the
// analysis shares).
func Within(path, root string) bool { return fspath.Within(path, root) }

// ProxySocketName is the file name of the egress proxy's unix socket in
// its directory.
const ProxySocketName = "proxy.sock"
