// Package sandboxinit is Gatehouse's own code inside the sandbox: the init
// stage that runs outside the seccomp filter and carries the network bridge
// (bridge*.go), and the exec stage that installs the filter and becomes the
// shell.
//
// # Stages
//
// bwrap starts "gatehouse sandbox-init" as pid 1 of the sandbox's pid
// namespace (--as-pid-1: bwrap's own reaper would be an unfiltered process
// the command could reach through /proc/1/mem). The init makes itself
// non-dumpable, reads its Stage1Spec from fd 3, opens the network bridge's
// listeners when the plan has one, and starts the shell from a thread that
// alone carries no-new-privs and the seccomp filter. The init stays outside
// the filter (the bridge serves from its other threads), relays the host's termination
// requests to every process, reaps orphans, and exits with the shell's
// status when the shell exits; the kernel then kills everything left in the
// pid namespace, daemons included. bwrap passes the status on.
//
// In the "none" mode there is no bwrap and no init: the host runs
// sandbox-exec directly.
//
// # Protocol
//
// Host to init (fd 3): the Stage1Spec (WritePlan), stamped with the host's
// build id (internal/buildid): an init of another build refuses it with
// "failed build mismatch: ..." (BuildMismatch), before it reads anything
// else of the plan. Then control lines "term"
// (SIGTERM to every process) and "kill" (SIGKILL to every process, then
// the init exits: the kernel kills whatever is left in the pid namespace
// and lets nothing fork there any more, so a fork storm cannot outrun it).
// End of file means the host is gone: the same as "kill".
//
// Init to host (fd 4): "started MODE" once the shell runs, or "failed
// REASON"; then the init closes it. MODE is "bubblewrap" or
// "bubblewrap_no_seccomp REASON".
//
// sandbox-exec is given the host's build id as --build-id and refuses
// another in the same way. "build-id" prints the init's own build id (for
// gatehouse doctor).
//
// sandbox-exec to its parent (its fd 3, close-on-exec): "nofilter REASON"
// before an exec without the filter, "ready" just before the exec of the
// shell, and "error REASON" when it could not exec (after "ready" when the
// exec itself failed). A parent that started it through another program
// (sandbox-exec on macOS) tells from a missing "ready" that this stage
// never ran.
package sandboxinit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/buildid"
)

// Stage1Spec is what stage 1 needs to know, sent by the host on fd 3.
type Stage1Spec struct {
	// BuildID is the build the host comes from; the init runs only a plan
	// of its own build. WritePlan fills it in when it is empty.
	BuildID string   `json:"build_id"`
	Shell   string   `json:"shell"`
	Argv    []string `json:"argv"` // full argv of the shell, argv[0] included
	// Env is the shell's whole environment and Dir its working
	// directory: the plan carries them, not the init's own start, so that
	// a sandbox started ahead of its command (a warm one) can take them.
	Env         []string `json:"env"`
	Dir         string   `json:"dir,omitempty"`
	Seccomp     string   `json:"seccomp"`
	AllowPtrace bool     `json:"allow_ptrace,omitempty"`
	FileSizeMax int64    `json:"file_size_max,omitempty"`
	// NProc bounds the command's tasks with RLIMIT_NPROC (nproc.go): the
	// limit is NProcBase, the tasks already counted, plus NProc (plus the
	// init's own threads and InitReserve, under the init). Zero sets none.
	NProc     int64 `json:"nproc,omitempty"`
	NProcBase int64 `json:"nproc_base,omitempty"`
	// Bridge, when set, is the network bridge the init starts (and waits
	// to be listening) before the shell; the shell's environment then
	// carries the proxy variables pointing at it.
	Bridge *Bridge `json:"bridge,omitempty"`
}

// ExecArgs returns the stage-2 command line (after the binary name) that
// runs plan's shell.
func ExecArgs(p *Stage1Spec) []string {
	id := p.BuildID
	if id == "" {
		id = buildid.ID()
	}
	a := []string{"sandbox-exec", "--build-id", id, "--seccomp", p.Seccomp, "--fsize", strconv.FormatInt(p.FileSizeMax, 10)}
	if p.AllowPtrace {
		a = append(a, "--allow-ptrace")
	}
	if p.NProc > 0 {
		a = append(a, "--nproc", strconv.FormatInt(p.NProc, 10), "--nproc-base", strconv.FormatInt(p.NProcBase, 10))
	}
	a = append(a, "--", p.Shell)
	return append(a, p.Argv[1:]...)
}

// Status is one parsed line of the stage-1 report.
type Status struct {
	Kind   string // started, failed, exit
	Detail string // mode, reason or exit code
}

// ReadStatus reads one status line.
func ReadStatus(r *bufio.Reader) (Status, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		if line == "" {
			return Status{}, err
		}
		if err != io.EOF {
			return Status{}, err
		}
	}
	line = strings.TrimSuffix(line, "\n")
	kind, detail, _ := strings.Cut(line, " ")
	switch kind {
	case "started", "failed", "exit":
		return Status{Kind: kind, Detail: detail}, nil
	}
	return Status{}, fmt.Errorf("unexpected status line %q", line)
}

// WritePlan writes p to w as the init reads it: its length in decimal, a
// newline, then the JSON. The length lets the init read exactly the plan
// and leave the control lines that follow to the supervisor. A plan without
// a BuildID is stamped with this binary's.
func WritePlan(w io.Writer, p *Stage1Spec) error {
	if p.BuildID == "" {
		q := *p
		q.BuildID = buildid.ID()
		p = &q
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%d\n%s", len(b), b)
	return err
}

// ReadPlan reads one plan written by WritePlan, without reading past it.
func ReadPlan(r io.Reader) (*Stage1Spec, error) {
	var head []byte
	one := make([]byte, 1)
	for {
		if _, err := io.ReadFull(r, one); err != nil {
			return nil, err
		}
		if one[0] == '\n' {
			break
		}
		if len(head) > 10 {
			return nil, fmt.Errorf("bad plan header")
		}
		head = append(head, one[0])
	}
	n, err := strconv.Atoi(string(head))
	if err != nil || n <= 0 || n > 1<<20 {
		return nil, fmt.Errorf("bad plan length %q", head)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	var p Stage1Spec
	if err := json.Unmarshal(b, &p); err != nil {
		// A plan of another build may not even decode: its id says so.
		var id struct {
			BuildID string `json:"build_id"`
		}
		if json.Unmarshal(b, &id) == nil && id.BuildID != buildid.ID() {
			return nil, mismatch(id.BuildID)
		}
		return nil, err
	}
	if p.BuildID != buildid.ID() {
		return nil, mismatch(p.BuildID)
	}
	if p.Shell == "" || len(p.Argv) == 0 {
		return nil, fmt.Errorf("plan names no shell")
	}
	if p.Bridge != nil && (p.Bridge.Socket == "" || len(p.Bridge.Listen) == 0) {
		return nil, fmt.Errorf("plan has an incomplete network bridge")
	}
	return &p, nil
}

// mismatchPrefix starts the reason of an init that refuses a plan from
// another build.
const mismatchPrefix = "build mismatch: "

// mismatch is the refusal of a plan of build planID.
func mismatch(planID string) error {
	if planID == "" {
		planID = "(none)"
	}
	return fmt.Errorf("%sthe sandbox init is build %s, gatehouse is build %s", mismatchPrefix, buildid.ID(), planID)
}

// BuildMismatch reports whether reason, a "failed" status's, is the init
// refusing a plan from another build.
func BuildMismatch(reason string) bool {
	return strings.HasPrefix(reason, mismatchPrefix)
}

// PrintBuildID is "build-id": it prints this binary's build id.
func PrintBuildID(args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: gatehouse-init build-id")
		return 2
	}
	fmt.Fprintln(stdout, buildid.ID())
	return 0
}
