package cli

import (
	"errors"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// printEnd reports how a call ended, the same whether the service ran it
// or this process did (pipeline.EndOf made end either way), and returns
// the exit status: the denial, the error or the timeout on stderr (or the
// whole end as JSON), then what could not be put on the record (problem:
// message and hint; "" when everything was).
func printEnd(env *Env, end *api.End, asJSON bool, problem func() (msg, hint string)) error {
	msg, hint := problem()
	annotate := func(m map[string]any) map[string]any {
		if msg != "" {
			a := map[string]string{"error": msg}
			if hint != "" {
				a["hint"] = hint
			}
			m["audit_error"] = a
		}
		return m
	}
	// What could not be put on the record comes after everything else.
	if !asJSON {
		defer warnProblem(env, msg, hint)
	}
	if e := end.Error; e != nil {
		switch e.Kind {
		case api.ErrArgument:
			return usagef("exec: %s: %s", argFlag(e.Arg), e.Message)
		case api.ErrDenied:
			if asJSON {
				writeJSON(env.Stdout, annotate(denialAnswer(e.BlockedBy, e.Message, e.Hint, end.Event)))
			} else {
				printDenial(env, e.BlockedBy, e.Message, e.Hint)
			}
			return ExitStatus(end.Exit)
		case api.ErrInternal:
			if e.Hint != "" {
				return cannotRun(withHint(errors.New(e.Message), e.Hint))
			}
			return cannotRun(errors.New(e.Message))
		}
	}
	switch {
	case asJSON:
		writeJSON(env.Stdout, annotate(map[string]any{"result": end.Result, "event": end.Event}))
	case end.Error != nil:
		fmt.Fprintf(env.Stderr, "gatehouse: error: %s\n", end.Error.Message)
	case end.Result != nil && end.Result.TimedOut:
		fmt.Fprintf(env.Stderr, "gatehouse: timed out after %d s\n", end.Result.TimeoutSeconds)
	}
	return ExitStatus(end.Exit)
}

// warnProblem says on stderr why a call is not on the audit record, and
// what to do; nothing when msg is "".
func warnProblem(env *Env, msg, hint string) {
	if msg == "" {
		return
	}
	fmt.Fprintf(env.Stderr, "gatehouse: warning: %s\n", msg)
	if hint != "" {
		fmt.Fprintf(env.Stderr, "gatehouse: hint: %s\n", hint)
	}
}
