// Package execface is gatehouse exec's face: its flags, its request, how a
// call that ended is printed and what status it exits with. The full
// program's exec (app/cli) and the front program (app/gatehouse) both use
// it, so that a call prints and exits the same whichever program sent it;
// it links no more than the front program may (its test keeps it so).
package execface

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"golang.org/x/term"
)

// Exit statuses of the command line: a bad argument, and a call that
// could not run or complete with no status of its own.
const (
	ExitUsage     = 2
	ExitCannotRun = api.ExitCannotRun
)

// Flags are gatehouse exec's flags.
type Flags struct {
	Cwd, StdinFile, Config, Session *string
	Timeout                         *int
	JSON                            *bool
	// PrintArgs is hidden: it prints the bubblewrap arguments, for
	// benchmarks.
	PrintArgs *bool
}

// Define defines exec's flags on fl.
func Define(fl *flag.FlagSet) *Flags {
	return &Flags{
		Cwd:       fl.String("cwd", "", ""),
		Timeout:   fl.Int("timeout", 0, ""),
		StdinFile: fl.String("stdin", "", ""),
		JSON:      fl.Bool("json", false, ""),
		Config:    fl.String("config", "", ""),
		Session:   fl.String("session", "", ""),
		PrintArgs: fl.Bool("print-bwrap-args", false, ""),
	}
}

// CheckTimeout returns the usage error of a --timeout given below 1
// second, once fl (where f's flags are defined) is parsed.
func (f *Flags) CheckTimeout(fl *flag.FlagSet) error {
	set := false
	fl.Visit(func(x *flag.Flag) { set = set || x.Name == "timeout" })
	if set && *f.Timeout < 1 {
		return fmt.Errorf("exec: --timeout: %d is not allowed; use a whole number of seconds from 1", *f.Timeout)
	}
	return nil
}

// Request is the request of exec or explain (cmd): the words of the
// command, its directory and the file its standard input is read from. An
// error is a usage error.
func Request(cmd string, words []string, cwd, stdinFile string) (api.ExecRequest, error) {
	// Without --cwd the command runs where the terminal is: the pipeline
	// resolves it like any named directory, so a directory in no workspace
	// root asks (or is refused) rather than running in exec.default_cwd.
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return api.ExecRequest{}, fmt.Errorf("%s: the current directory: %v; name one with --cwd", cmd, err)
		}
		cwd = wd
	}
	// A relative --cwd is the terminal's: relative to the directory
	// gatehouse runs in, as every other command's paths are. The request
	// itself would read it against exec.default_cwd.
	if !filepath.IsAbs(cwd) && cwd != "~" && !strings.HasPrefix(cwd, "~/") {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return api.ExecRequest{}, fmt.Errorf("%s: --cwd: %v", cmd, err)
		}
		cwd = abs
	}
	req := api.ExecRequest{
		Command: strings.Join(words, " "),
		Cwd:     cwd,
		Agent:   "cli",
		Surface: api.SurfaceCLI,
	}
	if stdinFile != "" {
		b, err := ReadLimited(stdinFile, 64<<20)
		if err != nil {
			return req, fmt.Errorf("%s: --stdin: %v", cmd, err)
		}
		req.Stdin = string(b)
	}
	return req, nil
}

// ReadLimited reads the file at path, refusing one larger than max bytes.
func ReadLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}

// ArgFlag names a request argument the way the CLI spells it.
func ArgFlag(arg string) string {
	switch arg {
	case "command":
		return "COMMAND"
	case "timeout_seconds":
		return "--timeout"
	case "cwd":
		return "--cwd"
	case "stdin":
		return "--stdin"
	}
	return arg
}

// Print reports how a call ended and returns the exit status: the
// denial, the error or the timeout on stderr (or the whole end as JSON on
// stdout), then what could not be put on the record (problem and its
// hint; "" when everything was).
func Print(stdout, stderr io.Writer, end *api.End, asJSON bool, problem, hint string) int {
	annotate := func(m map[string]any) map[string]any {
		if problem != "" {
			a := map[string]string{"error": problem}
			if hint != "" {
				a["hint"] = hint
			}
			m["audit_error"] = a
		}
		return m
	}
	// What could not be put on the record comes after the end's own
	// lines, and before the line of an error of Gatehouse's.
	warn := func() {
		if !asJSON {
			WarnProblem(stderr, problem, hint)
		}
	}
	if e := end.Error; e != nil {
		switch e.Kind {
		case api.ErrArgument:
			warn()
			fmt.Fprintf(stderr, "gatehouse: error: exec: %s: %s\n", ArgFlag(e.Arg), e.Message)
			return ExitUsage
		case api.ErrDenied:
			if asJSON {
				WriteJSON(stdout, annotate(denialAnswer(e.BlockedBy, e.Message, e.Hint, end.Event)))
			} else {
				printDenial(stderr, e.BlockedBy, e.Message, e.Hint)
			}
			warn()
			return end.Exit
		case api.ErrInternal:
			warn()
			fmt.Fprintf(stderr, "gatehouse: error: %s\n", e.Message)
			if e.Hint != "" {
				fmt.Fprintf(stderr, "gatehouse: hint: %s\n", e.Hint)
			}
			return ExitCannotRun
		}
	}
	switch {
	case asJSON:
		WriteJSON(stdout, annotate(map[string]any{"result": end.Result, "event": end.Event}))
	case end.Error != nil:
		fmt.Fprintf(stderr, "gatehouse: error: %s\n", end.Error.Message)
	case end.Result != nil && end.Result.TimedOut:
		fmt.Fprintf(stderr, "gatehouse: timed out after %d s\n", end.Result.TimeoutSeconds)
	}
	warn()
	return end.Exit
}

// WarnProblem says on stderr why a call is not on the audit record, and
// what to do; nothing when msg is "".
func WarnProblem(stderr io.Writer, msg, hint string) {
	if msg == "" {
		return
	}
	fmt.Fprintf(stderr, "gatehouse: warning: %s\n", msg)
	if hint != "" {
		fmt.Fprintf(stderr, "gatehouse: hint: %s\n", hint)
	}
}

// denialAnswer is the --json answer of a denied request: the stage's
// hint (or the CLI's for the code) is its own field.
func denialAnswer(code, reason, hint string, event any) map[string]any {
	e := map[string]string{"blocked_by": code, "reason": reason}
	if hint != "" {
		e["hint"] = hint
	}
	return map[string]any{"error": e, "event": event}
}

// printDenial reports a denied request on stderr, with a hint when there
// is one.
func printDenial(stderr io.Writer, code, reason, hint string) {
	fmt.Fprintf(stderr, "gatehouse: denied: %s: %s\n", code, reason)
	if hint != "" {
		fmt.Fprintf(stderr, "gatehouse: hint: %s\n", hint)
	}
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// IsTerminal says whether v is a terminal.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
