package sandboxinit

import (
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gatehouse-dev/gatehouse/sandbox/seccomp"
)

// shellPlan is what the shell thread needs: the plan and the shell's
// environment (the plan's, with the bridge's proxy variables).
type shellPlan struct {
	plan *Stage1Spec
	env  []string
}

// shellStarted is the shell thread's answer: the shell's pid and the
// sandbox mode, or why it did not start.
type shellStarted struct {
	pid  int
	mode string
	err  error
}

// shellThread is the one thread that carries no-new-privs and the seccomp
// filter and starts the shell.
type shellThread struct {
	plan    chan shellPlan
	started chan shellStarted
}

// startShellThread starts the goroutine that locks itself to a new OS
// thread, waits for the plan, installs the filter on that thread alone and
// starts the shell from it. The thread is never unlocked: it ends with its
// goroutine, so no other goroutine ever runs filtered. Made before the
// plan arrives, the thread costs the command nothing.
func startShellThread() *shellThread {
	t := &shellThread{plan: make(chan shellPlan), started: make(chan shellStarted, 1)}
	go func() {
		runtime.LockOSThread()
		sp := <-t.plan
		t.started <- startShell(sp.plan, sp.env)
	}()
	return t
}

// startShell runs on the shell thread: the filter, then the shell.
func startShell(plan *Stage1Spec, env []string) shellStarted {
	mode := "bubblewrap"
	switch plan.Seccomp { // sandbox.SeccompLevels' names: the init links no more than its allowlist (app/gatehouse-init/deps_test.go)
	case "off":
		mode = "bubblewrap_no_seccomp seccomp is off in the configuration"
	case "required", "preferred":
		if err := seccomp.InstallThread(seccomp.Options{AllowPtrace: plan.AllowPtrace}); err != nil {
			if plan.Seccomp == "required" {
				return shellStarted{err: fmt.Errorf("installing the seccomp filter: %v", err)}
			}
			mode = "bubblewrap_no_seccomp " + err.Error()
		}
	default:
		return shellStarted{err: fmt.Errorf("bad seccomp level %q", plan.Seccomp)}
	}
	pid, err := syscall.ForkExec(plan.Shell, plan.Argv, &syscall.ProcAttr{
		Env:   env,
		Dir:   plan.Dir,
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		err = fmt.Errorf("starting %s: %v", plan.Shell, err)
	}
	return shellStarted{pid: pid, mode: mode, err: err}
}

// readable reports whether fd has data to read now: the plan is already
// there for a sandbox started for its command.
func readable(fd uintptr) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// warmUp runs once, on values that go nowhere, the code the init runs
// for a plan: decoding it, building the filter, opening a listener. In a
// guest where a page fault costs tens of microseconds, the first run of
// a path costs more than its work; a warm sandbox pays it while it waits.
// Nothing it does outlives it: the listener is on the sandbox's own
// loopback and closed at once.
func warmUp() {
	b, _ := json.Marshal(&Stage1Spec{Shell: "/bin/sh", Argv: []string{"sh"}, Env: []string{"A=B"}, Dir: "/",
		Seccomp: "required", Bridge: &Bridge{Socket: "/", Listen: []string{"127.0.0.1:0"}}})
	var p Stage1Spec
	_ = json.Unmarshal(b, &p)
	if arch, err := seccomp.NativeArch(); err == nil {
		_, _ = seccomp.Program(arch, seccomp.Options{})
	}
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	ownThreads()
}
