// Package cli implements the gatehouse subcommands.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// ExitStatus is a process exit code carried as an error.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Exit codes shared by subcommands. The statuses of a governed call are
// the service's, so a call run in process and one run by the service end
// the same.
const (
	ExitOK        ExitStatus = 0
	ExitFailure   ExitStatus = 1
	ExitUsage     ExitStatus = 2
	ExitTimeout   ExitStatus = api.ExitTimeout
	ExitCannotRun ExitStatus = api.ExitCannotRun
	ExitKilled    ExitStatus = api.ExitKilled
)

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

// runFunc runs a subcommand with its arguments (after its flags, for a
// command with flags).
type runFunc func(ctx context.Context, env *Env, args []string) error

// A command is one subcommand, or one subcommand of a subcommand ("audit
// list"): how it is called, its flags and what it does.
type command struct {
	name string // as it is typed: "exec", "audit list"
	// usage is printed on -h (by a command with flags; one without
	// prints its own) and in the manual page; empty when -h is an unknown
	// flag.
	usage   string
	summary string // its line in 'gatehouse help'
	hidden  bool
	// subs are the subcommands ("audit list"), listed once: a command
	// with subs and no run of its own is run by dispatch, and the shell
	// completions, the manual page and the dispatch's help read the list.
	subs []*command
	// aliases are other words for a subcommand ("ls" for "list").
	aliases []string
	// badSub, when set, is a parent's usage error for a missing (name "")
	// or unknown subcommand, where it words them otherwise than dispatch.
	badSub func(name string) error
	// bare is the subcommand run when none is named, the arguments
	// empty or starting with a flag ("ports" and "ports --json" are
	// "ports list").
	bare string
	// interspersed lets flags follow positional arguments.
	interspersed bool
	// flags defines the command's flags on fl and returns the run that
	// reads them. Nil for a command that reads its arguments itself.
	flags func(fl *flag.FlagSet) runFunc
	run   runFunc
}

// exec parses the command's flags and runs it: -h prints its usage, a flag
// that does not parse is one usage line naming the command.
func (c *command) exec(ctx context.Context, env *Env, args []string) error {
	if c.flags == nil && c.run == nil {
		return c.dispatch(ctx, env, args)
	}
	if c.flags == nil {
		return c.run(ctx, env, args)
	}
	fl := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	run := c.flags(fl)
	pos, err := parseFlags(fl, args, c.interspersed)
	if errors.Is(err, flag.ErrHelp) && c.usage != "" {
		fmt.Fprintln(env.Stdout, c.usage)
		return nil
	}
	if err != nil {
		return usagef("%s: %v", c.name, err)
	}
	return run(ctx, env, pos)
}

// dispatch runs the subcommand of c that args[0] names, with the rest of
// args; help, -h and --help print c's usage. A missing or unknown
// subcommand is a usage error listing c's subcommands.
func (c *command) dispatch(ctx context.Context, env *Env, args []string) error {
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	for _, s := range c.subs {
		if name != "" && (s.word() == name || slices.Contains(s.aliases, name)) {
			return s.exec(ctx, env, args[1:])
		}
	}
	switch {
	case name == "help" || name == "-h" || name == "--help":
		fmt.Fprintln(env.Stdout, c.usage)
		return nil
	case c.bare != "" && (name == "" || strings.HasPrefix(name, "-")):
		for _, s := range c.subs {
			if s.word() == c.bare {
				return s.exec(ctx, env, args)
			}
		}
	case c.badSub != nil:
		return c.badSub(name)
	case name == "":
		return usagef("%s: missing subcommand; use %s", c.name, orList(subWords(c)))
	}
	return usagef("%s: unknown subcommand %q; use %s", c.name, name, orList(subWords(c)))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// parseFlags parses args and returns the positional arguments; with
// interspersed, flags may also follow them.
func parseFlags(fl *flag.FlagSet, args []string, interspersed bool) ([]string, error) {
	var pos []string
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		args = fl.Args()
		if !interspersed || len(args) == 0 {
			return append(pos, args...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// commands are gatehouse's subcommands by name: one table. The sandbox's
// own stages are another program, gatehouse-init (app/gatehouse-init).
// It is filled in init, because the completion and manual commands read
// it.
var commands map[string]*command

func init() {
	commands = byName([]*command{
		execCmd, explainCmd, auditCmd, statusCmd, doctorCmd, configCmd, credCmd, cacheCmd,
		installCmd, uninstallCmd, serviceCmd, serveCmd, hookCmd, relayCmd, managedSettingsCmd,
		approvalsCmd, approveCmd, denyCmd, rulesCmd, egressCmd, portsCmd, workspaceCmd, trayCmd, dashboardCmd, mcpCmd,
		versionCmd, completionCmd, manCmd,
	})
}

// byName indexes cs by name.
func byName(cs []*command) map[string]*command {
	m := make(map[string]*command, len(cs))
	for _, c := range cs {
		m[c.name] = c
	}
	return m
}

// Main runs the gatehouse command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: osGetenv}
	return int(run(ctx, env, args))
}

func run(ctx context.Context, env *Env, args []string) ExitStatus {
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
	err := c.exec(ctx, env, args[1:])
	return report(env.Stderr, err)
}

// report prints err in the CLI's form and returns the exit code for it.
func report(stderr io.Writer, err error) ExitStatus {
	if err == nil {
		return ExitOK
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return st
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
