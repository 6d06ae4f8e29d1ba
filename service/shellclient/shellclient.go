// Package shellclient runs one governed call for a face that has no
// service of its own (gatehouse exec, explain and mcp): through the user
// service when it runs, else through the same pipeline in this process,
// assembled as the service assembles its own (service/assemble). Either way
// the call ends in one api.End, made by pipeline.EndOf, so that a face
// prints the same thing whichever way the call ran.
package shellclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/assemble"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/svccall"
)

// A Client runs calls for one face. It is safe for concurrent use; Close
// it when done.
type Client struct {
	// Paths are the user's files and keychain.
	Paths assemble.Paths
	// Load loads the configuration a call in this process runs under.
	Load func() (*policy.Loaded, error)
	// Local makes every call run in this process, never through the
	// service: the face names a configuration of its own (--config),
	// which the service does not run.
	Local bool
	// OneShot says this process exits after its one call
	// (pipeline.Options.OneShot).
	OneShot bool
	// Logger logs the in-process pipeline's faults; nil discards them.
	Logger *slog.Logger

	mu    sync.Mutex
	built bool
	cfg   *policy.Config
	ex    *pipeline.Executor
	obs   *assemble.Observers
	err   error
}

// A Call is one request to run, and where its output goes.
type Call = svccall.Call

// An Ended call: its end, and what could not be put on the audit record.
type Ended = svccall.Ended

// Execute runs c: the service runs it when one runs, this process when
// none does. An error says the pipeline could not be built in this
// process (the configuration is invalid, say): nothing ran.
func (cl *Client) Execute(ctx context.Context, c Call) (*Ended, error) {
	if svc := cl.service(); svc != nil {
		if e, ok := svccall.Run(ctx, svc, c); ok {
			return e, nil
		}
	}
	ex, obs, err := cl.Observed()
	if err != nil {
		return nil, err
	}
	out := sandbox.Streams{Stdout: c.Stdout, Stderr: c.Stderr}
	if c.Capture {
		out = sandbox.Streams{}
	}
	end := pipeline.EndOf(ex.Execute(ctx, c.Request, out))
	e := &Ended{End: end}
	e.Problem, e.ProblemHint = obs.Problem()
	return e, nil
}

// Explain decides req as Execute would now, and runs nothing: the
// service decides it when one runs (with its approvals: an ask says it
// would be held), this process when none does. An *pipeline.ArgError is a
// bad request.
func (cl *Client) Explain(ctx context.Context, req api.ExecRequest) (*pipeline.Explanation, error) {
	if svc := cl.service(); svc != nil {
		resp, err := svc.Explain(ctx, req)
		switch {
		case err == nil && resp.Error != nil:
			return nil, &pipeline.ArgError{Arg: resp.Error.Arg, Msg: resp.Error.Message}
		case err == nil:
			var x pipeline.Explanation
			if err := json.Unmarshal(resp.Explanation, &x); err != nil {
				return nil, fmt.Errorf("the service's explanation: %w", err)
			}
			return &x, nil
		case !errors.Is(err, localapi.ErrNotRunning):
			return nil, err
		}
	}
	ex, err := cl.Executor()
	if err != nil {
		return nil, err
	}
	return ex.Explain(ctx, req)
}

// service returns the service's client, or nil when none can run this
// face's calls (Local, or no socket).
func (cl *Client) service() *localapi.Client {
	if cl.Local {
		return nil
	}
	return svccall.Service(cl.Paths.Socket)
}

// EndSession tells the service an agent's session ended (its
// approve-for-session grants and its network go); without a service
// there is nothing to end.
func (cl *Client) EndSession(ctx context.Context, agent, session string) {
	if svc := cl.service(); svc != nil {
		svc.EndSession(ctx, api.SessionEndRequest{Agent: agent, SessionID: session})
	}
}

// Executor returns the in-process pipeline, built on first use; it
// records nothing until Observed.
func (cl *Client) Executor() (*pipeline.Executor, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.executor()
}

func (cl *Client) executor() (*pipeline.Executor, error) {
	if cl.built {
		return cl.ex, cl.err
	}
	cl.built = true
	l, err := cl.Load()
	if err != nil {
		cl.err = err
		return nil, err
	}
	cl.cfg = &l.Config
	if cl.Paths.ProbeVer != "" {
		probe.SetVersionCache(cl.Paths.ProbeVer)
	}
	cl.ex, cl.err = assemble.Executor(cl.Paths, cl.cfg, cl.Logger, cl.OneShot)
	return cl.ex, cl.err
}

// Observed returns the in-process pipeline with its audit trail and
// notifications, and the observers it records through.
func (cl *Client) Observed() (*pipeline.Executor, *assemble.Observers, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	ex, err := cl.executor()
	if err != nil {
		return nil, nil, err
	}
	if cl.obs == nil {
		// The observers outlive the call that opened them: one face
		// serves many calls (mcp).
		cl.obs = assemble.OpenObservers(context.Background(), cl.Paths, cl.cfg, false, cl.Logger)
		ex.SetObservers(cl.obs, cl.obs.Notifier())
	}
	return ex, cl.obs, nil
}

// Close closes what the in-process pipeline opened.
func (cl *Client) Close() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.obs != nil {
		cl.obs.Close()
	}
}
