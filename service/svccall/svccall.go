// Package svccall runs one governed call through the user's service: the
// part of service/shellclient a small front program links (the wire types
// and the socket's client, nothing of the pipeline), so that gatehouse exec
// ends the same way whether the front program or the full one sent it.
package svccall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// A Call is one request to run, and where its output goes.
type Call struct {
	Request api.ExecRequest
	// Stdout and Stderr receive the command's output as it arrives; with
	// Capture, the output is in the end's result instead.
	Stdout, Stderr io.Writer
	Capture        bool
	// Notices receives what a person waiting on the call is told (a held
	// call says it waits, and for what); nil: nowhere.
	Notices io.Writer
}

// An Ended call: its end, and what could not be put on the audit record.
type Ended struct {
	*api.End
	// ByService says the service ran it.
	ByService bool
	// Problem is why this call is not (fully) on the record, with its
	// remedy (ProblemHint); "" when it is.
	Problem, ProblemHint string
}

// Service returns the client of the service whose socket is path, or nil
// when no service listens there (no socket file: a stat, instead of a
// first request).
func Service(path string) *localapi.Client {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return localapi.NewClient(path)
}

// Run runs c through svc; ok is false when no service answered (nothing
// ran, and another way may run it).
func Run(ctx context.Context, svc *localapi.Client, c Call) (e *Ended, ok bool) {
	xr := api.ExecuteRequest{Request: c.Request, Capture: c.Capture}
	if c.Request.Stdin != "" {
		xr.Request.Stdin, xr.StdinBytes = "", []byte(c.Request.Stdin)
	}
	stdout, stderr := c.Stdout, c.Stderr
	if c.Capture {
		// Only the notices come on the stream's stderr then.
		stdout, stderr = io.Discard, c.Notices
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	end, err := svc.Execute(ctx, xr, stdout, stderr)
	switch {
	case errors.Is(err, localapi.ErrNotRunning):
		return nil, false
	case errors.Is(err, localapi.ErrLost):
		// Never a status the command could have had.
		return &Ended{End: api.InternalEnd(err), ByService: true}, true
	case err != nil:
		end := api.InternalEnd(fmt.Errorf("%w; the command may have run in part", err))
		end.Error.Hint = "'gatehouse status' shows whether the service is healthy"
		return &Ended{End: end, ByService: true}, true
	}
	return &Ended{End: end, ByService: true, Problem: end.Warning}, true
}
