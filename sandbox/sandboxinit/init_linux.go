package sandboxinit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Init is stage 1, "sandbox-init", run by bwrap inside the sandbox. It
// returns the exit code for the sandbox.
func Init(args []string) int {
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	ctl := os.NewFile(3, "control")
	status := os.NewFile(4, "status")
	if ctl == nil || status == nil {
		fmt.Fprintln(os.Stderr, "gatehouse: sandbox-init: run by gatehouse only")
		return 126
	}
	var mu sync.Mutex
	report := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(status, format+"\n", a...)
	}

	rd := bufio.NewReader(ctl)
	line, err := rd.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		report("failed reading the plan: %v", err)
		return 126
	}
	var plan Plan
	if err := json.Unmarshal(line, &plan); err != nil || len(plan.Argv) == 0 {
		report("failed bad plan: %v", err)
		return 126
	}

	self, err := os.Executable()
	if err != nil {
		report("failed locating the init binary: %v", err)
		return 126
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		report("failed %v", err)
		return 126
	}
	cmd := exec.Command(self, ExecArgs(&plan)...)
	cmd.Args[0] = "sandbox-exec"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{pw}
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		report("failed starting the shell: %v", err)
		return 126
	}
	pw.Close()
	// Stage 2 writes nothing on a clean exec; the pipe closes on exec.
	msg, _ := io.ReadAll(pr)
	pr.Close()
	mode := "bubblewrap"
	for _, l := range strings.Split(strings.TrimSpace(string(msg)), "\n") {
		kind, detail, _ := strings.Cut(l, " ")
		switch kind {
		case "nofilter":
			mode = "bubblewrap_no_seccomp " + detail
		case "error":
			cmd.Wait()
			report("failed %s", detail)
			return 126
		}
	}
	if plan.Seccomp == "off" {
		mode = "bubblewrap_no_seccomp seccomp is off in the configuration"
	}
	report("started %s", mode)

	// Relay control requests until the host goes away.
	go func() {
		for {
			l, err := rd.ReadString('\n')
			switch strings.TrimSpace(l) {
			case "term":
				killAll(unix.SIGTERM)
			case "kill":
				killAll(unix.SIGKILL)
			}
			if err != nil {
				// The host is gone: nothing may outlive it.
				killAll(unix.SIGKILL)
				os.Exit(137)
			}
		}
	}()

	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	default:
		code = 126
	}
	// Daemons and background jobs die with the shell.
	killAll(unix.SIGKILL)
	report("exit %d", code)
	return code
}

// killAll signals every process in the sandbox's pid namespace except
// bwrap's init and this one.
func killAll(sig unix.Signal) {
	_ = unix.Kill(-1, sig)
}
