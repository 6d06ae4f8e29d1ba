// Package cli implements the gatehouse subcommands.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// ExitStatus is a process exit code carried as an error.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Exit codes shared by subcommands. The statuses of a governed call are
// the service's, so a call run in process and one run by the service end
// the same.
const (
	ExitOK        = 0
	ExitFailure   = 1
	ExitUsage     = 2
	ExitTimeout   = api.ExitTimeout
	ExitCannotRun = api.ExitCannotRun
	ExitKilled    = api.ExitKilled
)

// ExitCode maps an execution to the process exit status: the command's own,
// or ExitTimeout, ExitKilled, or ExitCannotRun when it did not complete.
func ExitCode(r *sandbox.Result) ExitStatus {
	switch r.Status {
	case sandbox.StatusCompleted:
		return ExitStatus(r.ExitCode)
	case sandbox.StatusTimedOut:
		return ExitTimeout
	case sandbox.StatusKilled:
		return ExitKilled
	default:
		return ExitCannotRun
	}
}

// Env is what a subcommand may use of the process it runs in.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string
}

// A usageError is a bad argument: printed as one line, exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// hintError carries an error and hints printed after it.
type hintError struct {
	err   error
	hints []string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

func withHint(err error, hints ...string) error { return &hintError{err: err, hints: hints} }

// A cannotRunError is printed like any error, but exits 126: the command
// could not run or complete, and no status of its own is known.
type cannotRunError struct{ err error }

func (e *cannotRunError) Error() string { return e.err.Error() }
func (e *cannotRunError) Unwrap() error { return e.err }

func cannotRun(err error) error { return &cannotRunError{err: err} }

type command struct {
	summary string
	hidden  bool
	run     func(ctx context.Context, env *Env, args []string) error
}

var commands = map[string]command{}

func register(name string, c command) { commands[name] = c }

// Main runs the gatehouse command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: osGetenv}
	return run(ctx, env, args)
}

func run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "gatehouse: error: unknown command %q\n", args[0])
		fmt.Fprintf(env.Stderr, "gatehouse: hint: run 'gatehouse help' for the list of commands\n")
		return ExitUsage
	}
	err := c.run(ctx, env, args[1:])
	return report(env.Stderr, err)
}

// report prints err in the CLI's form and returns the exit code for it.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	fmt.Fprintf(stderr, "gatehouse: error: %v\n", err)
	var he *hintError
	if errors.As(err, &he) {
		for _, h := range he.hints {
			fmt.Fprintf(stderr, "gatehouse: hint: %s\n", h)
		}
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	var cr *cannotRunError
	if errors.As(err, &cr) {
		return ExitCannotRun
	}
	return ExitFailure
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gatehouse <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
