package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// execViaService runs req through the user service, printing exactly what
// the in-process path prints. handled is false when no service is running.
func execViaService(ctx context.Context, env *Env, req api.ExecRequest, asJSON bool) (handled bool, err error) {
	c, err := serviceClient(env)
	if err != nil {
		return false, nil
	}
	// Without its socket no service is running; that answer costs a stat
	// instead of an HTTP client's first request.
	if _, err := os.Stat(c.Socket()); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	// SIGINT/SIGTERM end the command (the service records it killed) and
	// this process with 130 or 143.
	in := interruptContext(ctx)
	defer in.stop()
	ctx = in
	stdout, stderr := env.Stdout, env.Stderr
	if asJSON {
		// The result is printed as JSON; a held call's waiting line is all
		// that comes on stderr then.
		stdout = io.Discard
	} else if f, isFile := env.Stdout.(*os.File); isFile {
		sandbox.GrowPipe(f)
	}
	xr := api.ExecuteRequest{Request: req, Capture: asJSON}
	if req.Stdin != "" {
		xr.Request.Stdin, xr.StdinBytes = "", []byte(req.Stdin)
	}
	end, err := c.Execute(ctx, xr, stdout, stderr)
	if errors.Is(err, localapi.ErrNotRunning) {
		return false, nil
	}
	if st, ok := in.ended(env); ok {
		return true, st
	}
	// The service failed the call, or went away during it: exit 126, never
	// a status the command could have had. A lost service is one line, as
	// the relay says it.
	if errors.Is(err, localapi.ErrLost) {
		return true, cannotRun(err)
	}
	if err != nil {
		return true, cannotRun(withHint(err, "'gatehouse status' shows whether the service is healthy"))
	}
	// What the service could not put on the record, after the command's
	// own output.
	if end.Warning != "" && !asJSON {
		defer fmt.Fprintf(env.Stderr, "gatehouse: warning: %s\n", end.Warning)
	}
	annotate := func(m map[string]any) map[string]any {
		if end.Warning != "" {
			m["audit_error"] = map[string]string{"error": end.Warning}
		}
		return m
	}
	if e := end.Error; e != nil {
		switch e.Kind {
		case api.ErrArgument:
			return true, usagef("exec: %s: %s", argFlag(e.Arg), e.Message)
		case api.ErrDenied:
			if asJSON {
				writeJSON(env.Stdout, annotate(denialAnswer(e.BlockedBy, e.Message, e.Hint, end.Event)))
			} else {
				printDenial(env, e.BlockedBy, e.Message, e.Hint)
			}
			return true, ExitStatus(ExitCannotRun)
		case api.ErrInternal:
			return true, cannotRun(errors.New(e.Message))
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
	return true, ExitStatus(end.Exit)
}
