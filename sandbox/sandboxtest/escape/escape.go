// Package escape implements the probes that escape tests run inside the
// sandbox: each tries one thing the sandbox should refuse and reports what
// happened.
//
// It is a library, not a command: a test binary serves as the probe by
// dispatching to [Main] from its TestMain, for example through
// sandboxtest.Stage:
//
//	sandboxtest.Stage(map[string]func([]string) int{"escape-probe": escape.Main})
//
// and a test then runs `<test binary> escape-probe NAME [ARG]` as the
// command inside the sandbox and checks its output.
//
// # Output
//
// A probe prints exactly one line on stdout:
//
//	NAME: allowed               the operation succeeded
//	NAME: blocked: REASON       the operation failed; REASON starts with the
//	                            errno name (EPERM, ENOENT, …) when there is one
//	NAME: error: REASON         the probe could not set up its attempt (say,
//	                            no /dev/ptmx), so it cannot tell
//	NAME: unsupported: REASON   the probe does not exist on this platform
//
// Main returns 0 after allowed, blocked and unsupported, 1 after error, and
// 2 (with usage on stderr) for an unknown probe or wrong arguments. Probes
// through a foreign syscall ABI (int80, x32) print nothing when the filter
// works: the kernel kills the process with SIGSYS (shell status 159).
//
// "allowed" is what happens without a sandbox for every probe; whether it is
// a failure depends on the test: socketpair, for one, is expected to stay
// allowed under the seccomp filter.
package escape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A probe is one attempted escape.
type probe struct {
	args string // the arguments' names for usage, "" for none
	doc  string
	// run returns nil when the operation succeeded, the operation's error
	// when it failed, a setupError when the probe could not try, and an
	// error wrapping errUnsupported where the probe does not exist.
	run func(args []string) error
}

var probes = map[string]probe{
	"unix-socket": {doc: "socket(AF_UNIX, SOCK_STREAM): the way to host unix sockets",
		run: noArgs(probeUnixSocket)},
	"socketpair": {doc: "socketpair(AF_UNIX, SOCK_STREAM): stays allowed under the filter",
		run: noArgs(probeSocketpair)},
	"vsock": {doc: "socket(AF_VSOCK, SOCK_STREAM): the hypervisor's services, which no network namespace separates",
		run: noArgs(probeVsock)},
	"netlink-route": {doc: "socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE): the sandbox's own interfaces; stays allowed",
		run: noArgs(probeNetlinkRoute)},
	"netlink-uevent": {doc: "socket(AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT): the host's device events, not namespaced",
		run: noArgs(probeNetlinkUevent)},
	"packet": {doc: "socket(AF_PACKET, SOCK_DGRAM): raw frames",
		run: noArgs(probePacket)},
	"unix-connect": {args: "PATH", doc: "connect to the unix socket at PATH",
		run: func(a []string) error { return dialCheck("unix", a[0]) }},
	"io-uring": {doc: "io_uring_setup(1, &params)",
		run: noArgs(probeIOUring)},
	"bpf": {doc: "bpf(BPF_MAP_CREATE) of a one-entry array map",
		run: noArgs(probeBPF)},
	"userfaultfd": {doc: "userfaultfd(UFFD_USER_MODE_ONLY)",
		run: noArgs(probeUserfaultfd)},
	"keyctl": {doc: "keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING)",
		run: noArgs(probeKeyctl)},
	"tiocsti": {doc: "ioctl(TIOCSTI) on a fresh pty made this process's controlling terminal",
		run: noArgs(probeTIOCSTI)},
	"int80": {doc: "getpid through the i386 ABI (int 0x80); killed by SIGSYS under the filter",
		run: noArgs(probeInt80)},
	"x32": {doc: "getpid through the x32 ABI (nr|0x40000000); killed by SIGSYS under the filter",
		run: noArgs(probeX32)},
	"ptrace": {doc: "start a child that calls ptrace(PTRACE_TRACEME) before exec",
		run: noArgs(probePtrace)},
	"proc-mem": {args: "PID", doc: "open /proc/PID/mem for writing, which needs the same access as ptrace",
		run: func(a []string) error { return probeProcMem(a[0]) }},
	"unshare-user": {doc: "start true(1) in a new user namespace (clone with CLONE_NEWUSER)",
		run: noArgs(probeUnshareUser)},
	"tcp": {args: "HOST:PORT", doc: "TCP connect, 2s timeout",
		run: func(a []string) error { return dialCheck("tcp", a[0]) }},
	"http-get": {args: "URL", doc: "GET URL with Go's default client (proxy from the environment), 5s timeout; allowed means 200",
		run: func(a []string) error { return httpGet(a[0]) }},
	"resolve": {args: "NAME", doc: "DNS lookup, 3s timeout",
		run: func(a []string) error { return resolve(a[0]) }},
	"read": {args: "PATH", doc: "read the file at PATH",
		run: func(a []string) error { _, err := os.ReadFile(a[0]); return err }},
	"write": {args: "PATH", doc: "append a marker line to PATH, creating it if missing",
		run: func(a []string) error { return appendMarker(a[0]) }},
}

func noArgs(f func() error) func([]string) error {
	return func([]string) error { return f() }
}

// errUnsupported marks probes that do not exist on this platform.
var errUnsupported = errors.New("unsupported")

// A setupError is a failure before the probed operation: the probe cannot
// tell whether the operation would be refused.
type setupError struct{ err error }

func (e setupError) Error() string { return e.err.Error() }
func (e setupError) Unwrap() error { return e.err }

// Main runs the probe named by args[0] with the arguments that follow and
// returns the process exit code; see the package documentation.
func Main(args []string) int {
	return run(os.Stdout, os.Stderr, args)
}

func run(stdout, stderr io.Writer, args []string) int {
	if len(args) == 0 {
		usage(stderr, "no probe named")
		return 2
	}
	name := args[0]
	p, ok := probes[name]
	if !ok {
		usage(stderr, fmt.Sprintf("unknown probe %q", name))
		return 2
	}
	if want := len(strings.Fields(p.args)); len(args)-1 != want {
		usage(stderr, fmt.Sprintf("probe %s takes %d argument(s) (%s), got %d", name, want, p.args, len(args)-1))
		return 2
	}
	err := p.run(args[1:])
	var se setupError
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "%s: allowed\n", name)
	case errors.Is(err, errUnsupported):
		fmt.Fprintf(stdout, "%s: unsupported: %v\n", name, err)
	case errors.As(err, &se):
		fmt.Fprintf(stdout, "%s: error: %s\n", name, describe(se.err))
		return 1
	default:
		fmt.Fprintf(stdout, "%s: blocked: %s\n", name, describe(err))
	}
	return 0
}

func usage(w io.Writer, problem string) {
	fmt.Fprintf(w, "escape-probe: %s\nusage: escape-probe NAME [ARG]\nprobes:\n", problem)
	for _, name := range slices.Sorted(maps.Keys(probes)) {
		p := probes[name]
		fmt.Fprintf(w, "  %-28s %s\n", strings.TrimSpace(name+" "+p.args), p.doc)
	}
}

// describe renders err with its errno name first, when it carries one:
// "EPERM" for a bare errno, "ENOENT: open /x: no such file or directory"
// for a wrapped one.
func describe(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	name := errnoName(errno)
	switch {
	case name == "":
		return err.Error()
	case err == error(errno):
		return name
	}
	return name + ": " + err.Error()
}

func dialCheck(network, addr string) error {
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// httpGet fetches url with a client like http.DefaultClient's: proxies
// from the environment (NO_PROXY included).
func httpGet(url string) error {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

func resolve(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := net.DefaultResolver.LookupHost(ctx, name)
	return err
}

func appendMarker(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString("gatehouse escape probe\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
