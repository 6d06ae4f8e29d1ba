//go:build linux || darwin

package sandboxinit

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gatehouse-dev/gatehouse/internal/buildid"
)

// Exec is stage 2: "sandbox-exec --build-id ID --seccomp LEVEL --fsize N
// [--allow-ptrace] [--nproc N --nproc-base B] -- SHELL ARGS...". It never
// returns on success. Its report pipe is fd 3 when present: "ready" just
// before the exec of the shell, "error REASON" when it fails. It refuses to
// run for a host of another build (ID is the host's).
func Exec(args []string) int {
	report := os.NewFile(3, "report")
	if report != nil {
		// Not every caller passes fd 3; a failed fstat means absent.
		if _, err := report.Stat(); err != nil {
			report = nil
		} else {
			unix.CloseOnExec(3)
		}
	}
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if report != nil {
			fmt.Fprintf(report, "error %s\n", msg)
		}
		fmt.Fprintf(os.Stderr, "gatehouse: sandbox: %s\n", msg)
		return 126
	}

	fl := flag.NewFlagSet("sandbox-exec", flag.ContinueOnError)
	fl.SetOutput(os.Stderr)
	build := fl.String("build-id", "", "")
	level := fl.String("seccomp", "required", "")
	fsize := fl.Int64("fsize", 0, "")
	ptrace := fl.Bool("allow-ptrace", false, "")
	nproc := fl.Int64("nproc", 0, "")
	nprocBase := fl.Int64("nproc-base", 0, "")
	if err := fl.Parse(args); err != nil {
		return fail("bad arguments: %v", err)
	}
	if *build != buildid.ID() {
		return fail("%v", mismatch(*build))
	}
	argv := fl.Args()
	if len(argv) == 0 {
		return fail("bad arguments: no shell")
	}

	runtime.LockOSThread()
	if *fsize > 0 {
		lim := &unix.Rlimit{Cur: uint64(*fsize), Max: uint64(*fsize)}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, lim); err != nil {
			return fail("setting the file size limit: %v", err)
		}
	}
	// No core dumps: they would land in the workspace.
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	if *nproc > 0 {
		if err := setNProc(*nproc, *nprocBase); err != nil {
			return fail("setting the process limit: %v", err)
		}
	}

	switch *level { // sandbox.SeccompLevels' names: the init links no more than its allowlist (app/gatehouse-init/deps_test.go)
	case "off":
	case "required", "preferred":
		if err := installFilter(*ptrace); err != nil {
			if *level == "required" {
				return fail("installing the seccomp filter: %v", err)
			}
			if report != nil {
				fmt.Fprintf(report, "nofilter %v\n", err)
			}
		}
	default:
		return fail("bad --seccomp %q", *level)
	}
	if report != nil {
		// Whoever started this stage (through sandbox-exec, say) learns
		// that it ran; an exec that fails says so after it.
		fmt.Fprintf(report, "ready\n")
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	return fail("starting %s: %v", argv[0], err)
}

func init() { Stages["sandbox-exec"] = Exec }
