package escape

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestProbesUnfiltered runs the syscall probes without any sandbox. What
// they report depends on the host (root or not, sysctls, kernel options);
// the test checks only what holds everywhere and logs the rest, which shows
// what the filter changes.
func TestProbesUnfiltered(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"unix-socket"}, {"socketpair"}, {"io-uring"}, {"bpf"}, {"userfaultfd"}, {"keyctl"},
		{"tiocsti"}, {"ptrace"}, {"unshare-user"}, {"x32"}, {"int80"}, {"proc-mem", strconv.Itoa(os.Getpid())},
	} {
		r := runProbe(t, false, args...)
		t.Logf("unfiltered %-14s %s (%v)", args[0], r.out, r.state)
		if !r.state.Exited() {
			t.Errorf("%s without a filter: %v", args[0], r.state)
		}
		switch args[0] {
		case "unix-socket", "socketpair":
			if r.out != args[0]+": allowed" {
				t.Errorf("%s without a filter: got %q, want allowed", args[0], r.out)
			}
		}
	}
}

// TestProbesUnderFilter runs each probe under the real seccomp filter, as
// the shell in the sandbox runs (without the rest of the sandbox).
func TestProbesUnderFilter(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Cleanup, not defer: the parallel subtests run after this function
	// returns.
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	for _, tc := range []struct {
		args []string
		want string // the output line, or its prefix when ending in "…"
	}{
		{[]string{"unix-socket"}, "unix-socket: blocked: EPERM"},
		{[]string{"socketpair"}, "socketpair: allowed"},
		{[]string{"vsock"}, "vsock: blocked: EPERM"},
		{[]string{"netlink-uevent"}, "netlink-uevent: blocked: EPERM"},
		{[]string{"packet"}, "packet: blocked: EPERM"},
		{[]string{"netlink-route"}, "netlink-route: allowed"},
		{[]string{"io-uring"}, "io-uring: blocked: EPERM"},
		{[]string{"bpf"}, "bpf: blocked: EPERM"},
		{[]string{"userfaultfd"}, "userfaultfd: blocked: EPERM"},
		{[]string{"keyctl"}, "keyctl: blocked: EPERM"},
		{[]string{"tiocsti"}, "tiocsti: blocked: EPERM"},
		{[]string{"ptrace"}, "ptrace: blocked: EPERM: …"},
		{[]string{"unshare-user"}, "unshare-user: blocked: EPERM: …"},
		// Not the filter's business: TCP and files stay open to it.
		{[]string{"tcp", ln.Addr().String()}, "tcp: allowed"},
		{[]string{"read", "/proc/self/status"}, "read: allowed"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			t.Parallel()
			r := runProbe(t, true, tc.args...)
			prefix, isPrefix := strings.CutSuffix(tc.want, "…")
			if r.state.ExitCode() != 0 || (isPrefix && !strings.HasPrefix(r.out, prefix)) || (!isPrefix && r.out != tc.want) {
				t.Errorf("got %q (%v), want %q and exit 0", r.out, r.state, tc.want)
			}
		})
	}

	// A foreign ABI is fatal: SIGSYS, and no output.
	for _, name := range []string{"int80", "x32"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if runtime.GOARCH != "amd64" {
				t.Skip("amd64 only")
			}
			if name == "int80" && !hostServesI386(t) {
				// The kernel faults int 0x80 before any filter could see
				// it (ia32_emulation off): the call cannot get through,
				// and the filter's verdict on it cannot be observed.
				r := runProbe(t, true, name)
				if r.out != "" || r.state.Success() {
					t.Errorf("got %q (%v), want the probe to die", r.out, r.state)
				}
				t.Log("this kernel has no i386 syscall ABI; int80 checked as unreachable, not as filtered")
				return
			}
			r := runProbe(t, true, name)
			ws, _ := r.state.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGSYS || r.out != "" {
				t.Errorf("got %q (%v), want death by SIGSYS", r.out, r.state)
			}
		})
	}
}

// hostServesI386 reports whether this kernel runs i386 system calls (int
// 0x80) of a 64-bit process, by making one without the filter.
func hostServesI386(t *testing.T) bool {
	t.Helper()
	r := runProbe(t, false, "int80")
	return r.out == "int80: allowed"
}

// probeResult is what a re-executed probe did.
type probeResult struct {
	out   string // stdout, trimmed
	state *os.ProcessState
}

// runProbe runs the test binary as escape-probe with args, under the seccomp
// filter if filtered.
func runProbe(t *testing.T, filtered bool, args ...string) probeResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"escape-probe"}, args...)...)
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	if filtered {
		cmd.Env = append(cmd.Env, filterEnv+"=1")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running probe %v: %v", args, err)
	}
	if errb.Len() > 0 {
		t.Logf("probe %v stderr: %s", args, errb.String())
	}
	return probeResult{strings.TrimSpace(out.String()), cmd.ProcessState}
}
