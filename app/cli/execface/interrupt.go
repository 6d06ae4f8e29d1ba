package execface

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// Exit statuses of a command the person interrupted, as a shell gives
// them: 128 plus the signal.
const (
	ExitInterrupted = 128 + int(syscall.SIGINT)
	ExitTerminated  = 128 + int(syscall.SIGTERM)
)

// An Interrupt is a context ended by SIGINT or SIGTERM to this process,
// which remembers the signal: a command stopped that way ends as the
// person asked, not as a lost service or a kill.
type Interrupt struct {
	context.Context
	sig  atomic.Pointer[os.Signal]
	stop func()
}

// Interruptible returns ctx ended by SIGINT or SIGTERM; Stop releases the
// signals.
func Interruptible(ctx context.Context) *Interrupt {
	ctx, cancel := context.WithCancel(ctx)
	in := &Interrupt{Context: ctx}
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

// Stop releases the signals.
func (in *Interrupt) Stop() { in.stop() }

// Ended reports the exit status (and says so on stderr) of a call its
// person interrupted; ok is false when no signal came.
func (in *Interrupt) Ended(stderr io.Writer) (int, bool) {
	s := in.sig.Load()
	if s == nil {
		return 0, false
	}
	if *s == syscall.SIGTERM {
		fmt.Fprintln(stderr, "gatehouse: terminated: the command was stopped")
		return ExitTerminated, true
	}
	fmt.Fprintln(stderr, "gatehouse: interrupted: the command was stopped")
	return ExitInterrupted, true
}
