// Package localserver serves the admission API: its HTTP handler, which
// the user service serves on its unix socket (docs/service.md). The client
// every other gatehouse subcommand uses is service/localapi, which links
// no HTTP stack: the small programs that call the service (the hooks, the
// relay, gatehouse exec) pay no start-up for one.
package localserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Admission is what the API serves; the service implements it.
type Admission interface {
	// Decide runs the pipeline up to the decision; a deny is a response,
	// not an error.
	Decide(ctx context.Context, req api.DecideRequest) (*api.DecideResponse, error)
	// Execute decides and runs req, streaming output to out; it returns
	// how the call ended. It ends the execution when ctx ends.
	Execute(ctx context.Context, req api.ExecRequest, out sandbox.Streams) *api.End
	// Redeem runs the execution a ticket stands for.
	Redeem(ctx context.Context, ticket string, out sandbox.Streams) *api.End
	// CheckTicket says whether a ticket is live for an agent session,
	// without redeeming it.
	CheckTicket(req api.TicketCheckRequest) api.TicketCheckResponse
	Status(ctx context.Context) *api.Status
	Events(limit int) []api.Event
	Reload() api.ReloadResponse
	// StdinMaxBytes is the largest stdin a call may pass now
	// (exec.limits.stdin_max_bytes).
	StdinMaxBytes() int64
	// ExplainCall decides req as Execute would and runs, waits for and
	// records nothing; a bad argument is a response, not an error.
	ExplainCall(ctx context.Context, req api.ExecRequest) (*api.ExplainResponse, error)
	// FileAccess decides an agent file tool's access; a deny is a
	// response, not an error.
	FileAccess(ctx context.Context, req api.FileAccessRequest) (*api.DecideResponse, error)
	// ToolOutput cleans what an agent's own tool returned: credential
	// values and DLP patterns redacted, as from a command's output.
	ToolOutput(ctx context.Context, req api.ToolOutputRequest) (*api.ToolOutputResponse, error)
	// Approvals lists the pending approval requests; Answer answers one
	// (a refused answer is a response with its error).
	Approvals() []api.Approval
	Answer(req api.AnswerRequest) api.AnswerResponse
	// Subscribe returns the live stream until ctx ends: the notices a new
	// subscriber starts from, then a channel closed when the stream ends.
	Subscribe(ctx context.Context) ([]api.StreamNotice, <-chan api.StreamNotice)
	// Workspaces lists the workspace roots in force and the trusted ones.
	Workspaces() []api.Workspace
	// EndSession ends an agent session's approve-for-session grants.
	EndSession(agent, session string)
	// DashboardLogin returns a new one-time login code for the dashboard,
	// with its sign-in page, or why there is none.
	DashboardLogin() api.DashboardLoginResponse
	// Ports lists the agent sessions' shared networks, what listens in
	// them and the person's forwards; OpenPort forwards a session's port
	// to the host's loopback, ClosePort ends a forward (a refusal is a
	// response with its error).
	Ports() []api.SessionNetwork
	OpenPort(req api.PortRequest) api.PortResponse
	ClosePort(req api.PortRequest) api.PortResponse
	// Doctor runs gatehouse doctor now and returns its report, or why
	// this service runs none.
	Doctor(ctx context.Context) (*api.DoctorReport, error)
}

// keepAlive is how often an idle live stream sends a comment line.
const keepAlive = 15 * time.Second

type noticesKey struct{}

// WithNotices returns ctx carrying w, where a call's notices to the person
// waiting on it go (a held call says it waits, and for what), whatever
// becomes of its output.
func WithNotices(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, noticesKey{}, w)
}

// Notices returns the writer WithNotices put in ctx, or nil.
func Notices(ctx context.Context) io.Writer {
	w, _ := ctx.Value(noticesKey{}).(io.Writer)
	return w
}

// Request bodies are bounded per endpoint, by what the largest legitimate
// request holds. JSON escapes a byte in at most six (\u00XX), so a call
// may take six times its command (64 KiB) and stdin limits, plus an
// envelope for the other fields; the other endpoints take an envelope.
const (
	maxCommand = 64 << 10
	envelope   = 64 << 10
)

func callLimit(a Admission) int64 { return envelope + 6*(maxCommand+a.StdinMaxBytes()) }

// Handler returns the admission API's handler.
func Handler(a Admission, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.PathDecide, func(w http.ResponseWriter, r *http.Request) {
		var req api.DecideRequest
		if !decode(w, r, callLimit(a), &req) {
			return
		}
		resp, err := a.Decide(r.Context(), req)
		if err != nil {
			logger.Error("decide", "err", err)
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		reply(w, resp)
	})
	mux.HandleFunc("POST "+api.PathExplain, func(w http.ResponseWriter, r *http.Request) {
		var req api.ExecRequest
		if !decode(w, r, callLimit(a), &req) {
			return
		}
		resp, err := a.ExplainCall(r.Context(), req)
		if err != nil {
			logger.Error("explain", "err", err)
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		reply(w, resp)
	})
	mux.HandleFunc("POST "+api.PathExecute, func(w http.ResponseWriter, r *http.Request) {
		var req api.ExecuteRequest
		if !decode(w, r, callLimit(a), &req) {
			return
		}
		if req.StdinBytes != nil {
			req.Request.Stdin = string(req.StdinBytes)
		}
		stream(w, func(out sandbox.Streams) *api.End {
			ctx := WithNotices(r.Context(), out.Stderr)
			if req.Capture {
				out = sandbox.Streams{}
			}
			return a.Execute(ctx, req.Request, out)
		})
	})
	mux.HandleFunc("POST "+api.PathRedeem, func(w http.ResponseWriter, r *http.Request) {
		var req api.RedeemRequest
		if !decode(w, r, envelope, &req) {
			return
		}
		stream(w, func(out sandbox.Streams) *api.End { return a.Redeem(r.Context(), req.Ticket, out) })
	})
	mux.HandleFunc("POST "+api.PathTicketCheck, func(w http.ResponseWriter, r *http.Request) {
		var req api.TicketCheckRequest
		if !decode(w, r, envelope, &req) {
			return
		}
		reply(w, a.CheckTicket(req))
	})
	mux.HandleFunc("GET "+api.PathStatus, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		reply(w, a.Status(r.Context()))
	})
	mux.HandleFunc("GET "+api.PathEvents, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		limit := 50
		if s := r.URL.Query().Get("limit"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				fail(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want a whole number from 1", s))
				return
			}
			limit = n
		}
		reply(w, api.EventsResponse{Events: a.Events(limit)})
	})
	mux.HandleFunc("POST "+api.PathReload, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		reply(w, a.Reload())
	})
	mux.HandleFunc("POST "+api.PathFileAccess, func(w http.ResponseWriter, r *http.Request) {
		var req api.FileAccessRequest
		if !decode(w, r, envelope, &req) {
			return
		}
		resp, err := a.FileAccess(r.Context(), req)
		if err != nil {
			logger.Error("file access", "err", err)
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		reply(w, resp)
	})
	mux.HandleFunc("POST "+api.PathToolOutput, func(w http.ResponseWriter, r *http.Request) {
		var req api.ToolOutputRequest
		if !decode(w, r, envelope+api.MaxToolOutput, &req) {
			return
		}
		resp, err := a.ToolOutput(r.Context(), req)
		if err != nil {
			logger.Error("tool output", "err", err)
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		reply(w, resp)
	})
	mux.HandleFunc("GET "+api.PathApprovals, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		reply(w, api.ApprovalsResponse{Approvals: a.Approvals()})
	})
	mux.HandleFunc("POST "+api.PathAnswer, func(w http.ResponseWriter, r *http.Request) {
		var req api.AnswerRequest
		if !decode(w, r, envelope+6*maxCommand, &req) {
			return
		}
		reply(w, a.Answer(req))
	})
	mux.HandleFunc("POST "+api.PathSessionEnd, func(w http.ResponseWriter, r *http.Request) {
		var req api.SessionEndRequest
		if !decode(w, r, envelope, &req) {
			return
		}
		a.EndSession(req.Agent, req.SessionID)
		reply(w, struct{}{})
	})
	mux.HandleFunc("GET "+api.PathWorkspaces, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		reply(w, api.WorkspacesResponse{Workspaces: a.Workspaces()})
	})
	mux.HandleFunc("GET "+api.PathStream, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		first, rest := a.Subscribe(r.Context())
		ServeStream(w, first, rest)
	})
	mux.HandleFunc("GET "+api.PathPorts, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		reply(w, api.PortsResponse{Sessions: a.Ports()})
	})
	mux.HandleFunc("POST "+api.PathPortsOpen, func(w http.ResponseWriter, r *http.Request) {
		var req api.PortRequest
		if !decode(w, r, envelope, &req) {
			return
		}
		reply(w, a.OpenPort(req))
	})
	mux.HandleFunc("POST "+api.PathPortsClose, func(w http.ResponseWriter, r *http.Request) {
		var req api.PortRequest
		if !decode(w, r, envelope, &req) {
			return
		}
		reply(w, a.ClosePort(req))
	})
	mux.HandleFunc("GET "+api.PathDoctor, func(w http.ResponseWriter, r *http.Request) {
		rep, err := a.Doctor(r.Context())
		if err != nil {
			fail(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		reply(w, rep)
	})
	mux.HandleFunc("POST "+api.PathDashboardLogin, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := body(w, r, envelope); !ok {
			return
		}
		reply(w, a.DashboardLogin())
	})
	return mux
}

// ServeStream writes the live stream as server-sent events: the notices a
// subscriber starts from, then each of rest as it comes, with a comment
// line when idle, until rest is closed or the client is gone. The
// admission API and the dashboard serve it alike.
func ServeStream(w http.ResponseWriter, first []api.StreamNotice, rest <-chan api.StreamNotice) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, n := range first {
		api.WriteEvent(w, n)
	}
	rc.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case n, ok := <-rest:
			if !ok {
				return
			}
			if api.WriteEvent(w, n) != nil {
				return
			}
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// body reads r's body, at most limit bytes (413 beyond), then lifts the
// connection's read deadline: the request is in, and a streamed answer
// lasts as long as its command, which the server's read timeout would
// otherwise cut short.
func body(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes, the most %s takes", limit, r.URL.Path))
		return nil, false
	case err != nil:
		fail(w, http.StatusBadRequest, "reading the request: "+err.Error())
		return nil, false
	}
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	return b, true
}

// decode reads r's body (see body) as exactly one JSON value into v.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	b, ok := body(w, r, limit)
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "decoding the request: "+err.Error())
		return false
	}
	if rest := b[dec.InputOffset():]; len(bytes.Trim(rest, " \t\r\n")) != 0 {
		fail(w, http.StatusBadRequest, "decoding the request: data follows the JSON value; send exactly one")
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(api.ErrorResponse{Error: msg})
}

// StreamContentType is the media type of a frame stream.
const StreamContentType = "application/vnd.gatehouse.stream"

func stream(w http.ResponseWriter, run func(out sandbox.Streams) *api.End) {
	w.Header().Set("Content-Type", StreamContentType)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush() // the call is taken: a client told so knows a broken stream is a lost service
	fw := api.NewFrameWriter(w, func() { rc.Flush() })
	end := run(sandbox.Streams{Stdout: fw.Stdout(), Stderr: fw.Stderr()})
	fw.End(end)
}
