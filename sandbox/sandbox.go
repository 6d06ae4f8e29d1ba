// Package sandbox describes one governed execution as plain data and names
// the isolation modes Gatehouse can put a command in.
//
// A Spec is built by the pipeline and handed to a backend (bwrap on Linux,
// seatbelt on macOS, none anywhere) which runs it. Backends never read
// configuration or the host environment themselves: everything they need is
// in the Spec, so the plan of an execution is inspectable in tests.
package sandbox

import (
	"errors"
	"os"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/scale"
)

// Mode is the isolation actually in force for an execution. The vocabulary
// is closed; it is stamped on every event the executor produced.
type Mode string

const (
	ModeBubblewrap          Mode = "bubblewrap"
	ModeBubblewrapNoSeccomp Mode = "bubblewrap_no_seccomp"
	ModeSeatbelt            Mode = "seatbelt"
	ModeNone                Mode = "none"
	ModeUnavailableDenied   Mode = "unavailable_denied"
)

// Degraded reports whether m is a mode that must raise a notification.
func (m Mode) Degraded() bool {
	return m == ModeNone || m == ModeBubblewrapNoSeccomp || m == ModeUnavailableDenied
}

// SeccompLevel says how the seccomp stage is treated.
type SeccompLevel string

const (
	SeccompRequired  SeccompLevel = "required"
	SeccompPreferred SeccompLevel = "preferred"
	SeccompOff       SeccompLevel = "off"
)

// SeccompLevels is the vocabulary of exec.sandbox.seccomp, widest first:
// validation lists it in this order and managed narrowing ranks by it.
var SeccompLevels = scale.Of(scale.Step{string(SeccompOff)}, scale.Step{string(SeccompPreferred)}, scale.Step{string(SeccompRequired)})

// ErrUnavailable is returned (wrapped, with its cause) when a backend cannot
// run on this host.
var ErrUnavailable = errors.New("sandbox unavailable")

// Spec is the complete plan of one execution. All paths are absolute and
// already resolved (symlinks followed) by the caller.
type Spec struct {
	// ID is the execution's id: it names the execution's cgroup and the
	// files the write-deny sweep moves aside.
	ID string
	// Shell is the absolute path of bash or sh.
	Shell string
	// Command is the judged text, passed to the shell unchanged as the
	// argument of -c.
	Command string
	// Dir is the working directory; it lies inside a workspace root.
	Dir string
	// Env is the complete environment of the command (KEY=VALUE). Nothing of
	// the launcher's environment is added to it.
	Env []string
	// Stdin is fed to the command; nil means an empty stdin.
	Stdin []byte

	// WorkspaceRoots are bound writable.
	WorkspaceRoots []string
	// DenyRead are hidden: directories get an empty tmpfs, files /dev/null.
	// Paths that do not exist are skipped.
	DenyRead []string
	// WriteDeny are paths inside workspace roots kept read-only: names
	// relative to each root (and each repository in one), or absolute
	// paths.
	WriteDeny []string
	// Read is the read posture; empty means ReadHost.
	Read ReadPosture
	// ReadHide are, under ReadWorkspace, existing directories replaced by
	// empty read-only ones (the home directory, other places user data
	// lives), parents first: of what was in them only the workspace roots,
	// ReadAllow, the tool cache and the plan's own binds come back.
	ReadHide []string
	// ReadAllow are existing paths bound read-only under ReadWorkspace.
	ReadAllow []string
	// Pins are files whose inspected bytes are bound read-only over their
	// paths inside the sandbox.
	Pins []Pin
	// ExtraBinds are further binds (Source → Target), used by later
	// stages for the credential directory.
	ExtraBinds []Bind
	// CredDir is the execution's credential directory on the host (0700,
	// its files 0400), or "". A backend that binds paths gets it in
	// ExtraBinds too; one that does not lets the command read it where it
	// is, though its parent is in DenyRead.
	CredDir string
	// ToolCache, when set, is the agent's writable tool cache: Dir
	// writable, the rest of Root (other agents' caches) hidden (bound
	// under bubblewrap, in the profile under Seatbelt; mode none has the
	// host's view).
	ToolCache *ToolCache
	// RuntimeDir, when set, is created empty and private in the sandbox
	// (XDG_RUNTIME_DIR): tools that keep sockets or state there find it.
	RuntimeDir string
	// Egress, when set, connects the sandbox to the execution's egress
	// proxy. With a network of its own (bubblewrap) the proxy's socket is
	// bound in, the init's bridge forwards to it from 127.0.0.1 inside the
	// sandbox, the command's proxy variables point at the bridge, and the
	// resolver configuration resolves nothing. Seatbelt lets the command
	// reach Addr alone and points the variables there; mode none ignores
	// it.
	Egress *Egress
	// Network, when set, is a network namespace the command joins instead
	// of getting one of its own (bubblewrap): its agent session's, whose
	// loopback the session's other executions share. Nil is a network of
	// the command's own.
	Network *Network

	Seccomp     SeccompLevel
	AllowPtrace bool

	// Timeout is the wall-clock limit; zero means none.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL (default 5s).
	KillGrace time.Duration

	// Limits; zero means unlimited.
	TmpfsSize   int64
	FileSizeMax int64
	MemoryMax   int64
	PidsMax     int64

	// OutputMax caps each of stdout and stderr as delivered; zero means no cap.
	OutputMax int64

	// InitPath is gatehouse-init (or a test binary standing in for it),
	// which implements the sandbox-init and sandbox-exec stages.
	InitPath string
	// HandOff says that the calling process exits once the command ends
	// (an in-process gatehouse exec): what the kernel retires slowly on
	// its last close is handed to a short-lived InitPath "linger" process
	// rather than held up in this one's exit.
	HandOff bool
	// BwrapPath is the bubblewrap binary.
	BwrapPath string
}

// ReadPosture says what of the host a command may read.
type ReadPosture string

const (
	// ReadHost: the host's files, minus DenyRead.
	ReadHost ReadPosture = "host"
	// ReadWorkspace: the system, minus DenyRead, but of ReadHide only the
	// workspace roots, ReadAllow and the tool cache.
	ReadWorkspace ReadPosture = "workspace"
)

// ReadPostures is the vocabulary of exec.sandbox.read, widest first:
// validation lists it in this order and managed narrowing ranks by it.
var ReadPostures = scale.Of(scale.Step{string(ReadHost)}, scale.Step{string(ReadWorkspace)})

// A Pin is one inspected file bound over its path.
type Pin struct {
	Path   string // where the command sees it
	Source string // host file holding the inspected bytes
	SHA256 string
	Size   int64
}

// A Network is a network namespace held open for the executions of one
// agent session (bubblewrap): the user namespace that owns it and the
// namespace itself, and nsenter, which joins both before bwrap starts.
// Only loopback is in it; the executions' egress still goes through each
// one's own bridge and proxy.
type Network struct {
	// Name is what the execution card says: "session <id>".
	Name string
	// Nsenter is util-linux's nsenter.
	Nsenter string
	// User and Net are the open namespace files (/proc/PID/ns/user and
	// /proc/PID/ns/net of the process holding them).
	User, Net *os.File
	// Bridge is where this execution's egress bridge listens
	// (127.0.0.1:PORT): the service gives each execution of a session a
	// port of its own.
	Bridge string
}

// Egress is the host's side of the egress proxy, as a sandbox needs it.
type Egress struct {
	// Socket is the proxy's unix socket (a backend with a network of its
	// own reaches it through the init's bridge).
	Socket string
	// Addr is the proxy's loopback TCP address (127.0.0.1:PORT) when it
	// listens on one, for a backend that shares the host's network: the
	// command's proxy variables point at it, and it may connect to
	// nothing else.
	Addr string
	// ResolvConf is a resolver configuration that reaches nothing; it is
	// bound read-only at ResolvConfTarget, the host's /etc/resolv.conf
	// with symlinks resolved. Either empty: no bind.
	ResolvConf, ResolvConfTarget string
}

// ToolCache is an agent's cache directory Dir inside Root, the directory
// of every agent's.
type ToolCache struct {
	Root, Dir string
}

// A Bind is one extra bind mount.
type Bind struct {
	Source, Target string
	Writable       bool
}

// Status is how an execution ended.
type Status string

const (
	StatusCompleted     Status = "completed"
	StatusTimedOut      Status = "timed_out"
	StatusKilled        Status = "killed"
	StatusFailedToStart Status = "failed_to_start"
	StatusNeverRan      Status = "never_ran"
)

// Status reasons a backend reports (Result.StatusReason); the service's
// own are named in service/api.
const (
	// ReasonSpawnError: the command could not be started (pipes, mounts,
	// the backend's program failing).
	ReasonSpawnError = "spawn_error"
	// ReasonSandboxUnavailable: the backend cannot run on this host.
	ReasonSandboxUnavailable = "sandbox_unavailable"
	// ReasonSweepBound: the write-deny sweep hit its bound before the
	// start; nothing ran.
	ReasonSweepBound = "sweep_bound"
	// ReasonWriteDenyLink: a write-deny path is a link; nothing ran.
	ReasonWriteDenyLink = "write_deny_link"
	// ReasonSweepIncomplete: the sweep after the command left part of the
	// workspace unchecked.
	ReasonSweepIncomplete = "sweep_incomplete"
)

// Limits says which limits held for an execution. Pids is true when the
// process count was bounded, by a pids cgroup or by RLIMIT_NPROC; NProc
// says whether RLIMIT_NPROC held (sandboxinit/nproc.go).
type Limits struct {
	Pids       bool `json:"pids"`
	NProc      bool `json:"nproc"`
	Memory     bool `json:"memory"`
	Tmpfs      bool `json:"tmpfs"`
	FileSize   bool `json:"file_size"`
	DaemonKill bool `json:"daemon_kill"`
}

// StreamStats describes one output stream as delivered.
type StreamStats struct {
	Bytes     int64 // bytes delivered (before the marker)
	Discarded int64 // bytes dropped past the cap
}

// Result is what a backend reports about one execution.
type Result struct {
	Mode         Mode
	Status       Status
	StatusReason string // spawn_error, sandbox_unavailable, …
	// Error is a user-safe description when Status is failed_to_start.
	Error    string
	ExitCode int // meaningful when Status is completed
	Duration time.Duration
	TimedOut bool
	Stdout   StreamStats
	Stderr   StreamStats
	Limits   Limits
	// SeccompReason says why the filter is missing in mode
	// bubblewrap_no_seccomp.
	SeccompReason string
	// Blocked are write-deny files the command created, moved aside.
	Blocked []string
}

// Truncated reports whether any output was discarded.
func (r *Result) Truncated() bool { return r.Stdout.Discarded > 0 || r.Stderr.Discarded > 0 }
