package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// Exit statuses of a command the person interrupted, as a shell gives
// them: 128 plus the signal.
const (
	ExitInterrupted ExitStatus = 128 + ExitStatus(syscall.SIGINT)
	ExitTerminated  ExitStatus = 128 + ExitStatus(syscall.SIGTERM)
)

// An interrupt is a context ended by SIGINT or SIGTERM to this process,
// which remembers the signal: a command stopped that way ends as the
// person asked, not as a lost service or a kill.
type interrupt struct {
	context.Context
	sig  atomic.Pointer[os.Signal]
	stop func()
}

// interruptContext returns ctx ended by SIGINT or SIGTERM; stop releases
// the signals.
func interruptContext(ctx context.Context) *interrupt {
	ctx, cancel := context.WithCancel(ctx)
	in := &interrupt{Context: ctx}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			in.sig.Store(&s)
			cancel()
		case <-done:
		}
	}()
	in.stop = func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
	return in
}

// ended reports the exit status and line for a call its person
// interrupted; ok is false when no signal came.
func (in *interrupt) ended(env *Env) (ExitStatus, bool) {
	s := in.sig.Load()
	if s == nil {
		return 0, false
	}
	if *s == syscall.SIGTERM {
		fmt.Fprintln(env.Stderr, "gatehouse: terminated: the command was stopped")
		return ExitTerminated, true
	}
	fmt.Fprintln(env.Stderr, "gatehouse: interrupted: the command was stopped")
	return ExitInterrupted, true
}
