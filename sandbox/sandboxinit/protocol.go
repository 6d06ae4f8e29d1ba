// Package sandboxinit is Gatehouse's own code inside the sandbox: the init
// stage that runs outside the seccomp filter (and will carry the network
// bridge), and the exec stage that installs the filter and becomes the shell.
//
// # Stages
//
// bwrap starts "gatehouse sandbox-init" (stage 1) as the first process of the
// sandbox's pid namespace after its own. Stage 1 reads its Plan from fd 3,
// starts "gatehouse sandbox-exec" (stage 2), reports on fd 4 whether the
// shell started and in which mode, relays the host's termination requests to
// every process in the namespace, and, when the shell exits, kills whatever
// it left behind before reporting the exit code. Stage 2 sets resource
// limits, installs the seccomp filter with no-new-privs and execs the shell.
//
// # Protocol
//
// Host to stage 1 (fd 3): one JSON Plan on a line, then control lines
// "term" (SIGTERM to every process) and "kill" (SIGKILL to every process).
// End of file means the host is gone: everything is killed.
//
// Stage 1 to host (fd 4): "started MODE" once the shell runs, or
// "failed REASON"; then "exit CODE" when it ends.
//
// Stage 2 to stage 1 (its fd 3, close-on-exec): nothing when the exec
// succeeded with the filter installed, "nofilter REASON" before an exec
// without it, or "error REASON" when it could not exec.
package sandboxinit

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Plan is what stage 1 needs to know, sent by the host on fd 3.
type Plan struct {
	Shell       string   `json:"shell"`
	Argv        []string `json:"argv"` // full argv of the shell, argv[0] included
	Seccomp     string   `json:"seccomp"`
	AllowPtrace bool     `json:"allow_ptrace,omitempty"`
	FileSizeMax int64    `json:"file_size_max,omitempty"`
}

// ExecArgs returns the stage-2 command line (after the binary name) that
// runs plan's shell.
func ExecArgs(p *Plan) []string {
	a := []string{"sandbox-exec", "--seccomp", p.Seccomp, "--fsize", strconv.FormatInt(p.FileSizeMax, 10)}
	if p.AllowPtrace {
		a = append(a, "--allow-ptrace")
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
