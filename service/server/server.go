// Package server is the admission API: its HTTP handler, served by the
// user service on its unix socket, and the client every other gatehouse
// subcommand uses (docs/service.md).
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"

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
	Status(ctx context.Context) *api.Status
	Events(limit int) []api.Event
	Reload() api.ReloadResponse
	// FileAccess decides an agent file tool's access; a deny is a
	// response, not an error.
	FileAccess(ctx context.Context, req api.FileAccessRequest) (*api.DecideResponse, error)
}

// maxBody bounds request bodies: a command (64 KiB) and its stdin, whose
// own limit the pipeline checks (at most 64 MiB).
const maxBody = 80 << 20

// Handler returns the admission API's handler.
func Handler(a Admission, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.PathDecide, func(w http.ResponseWriter, r *http.Request) {
		var req api.DecideRequest
		if !decode(w, r, &req) {
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
	mux.HandleFunc("POST "+api.PathExecute, func(w http.ResponseWriter, r *http.Request) {
		var req api.ExecuteRequest
		if !decode(w, r, &req) {
			return
		}
		if req.StdinBytes != nil {
			req.Request.Stdin = string(req.StdinBytes)
		}
		stream(w, func(out sandbox.Streams) *api.End {
			if req.Capture {
				out = sandbox.Streams{}
			}
			return a.Execute(r.Context(), req.Request, out)
		})
	})
	mux.HandleFunc("POST "+api.PathRedeem, func(w http.ResponseWriter, r *http.Request) {
		var req api.RedeemRequest
		if !decode(w, r, &req) {
			return
		}
		stream(w, func(out sandbox.Streams) *api.End { return a.Redeem(r.Context(), req.Ticket, out) })
	})
	mux.HandleFunc("GET "+api.PathStatus, func(w http.ResponseWriter, r *http.Request) {
		reply(w, a.Status(r.Context()))
	})
	mux.HandleFunc("GET "+api.PathEvents, func(w http.ResponseWriter, r *http.Request) {
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
		reply(w, a.Reload())
	})
	mux.HandleFunc("POST "+api.PathFileAccess, func(w http.ResponseWriter, r *http.Request) {
		var req api.FileAccessRequest
		if !decode(w, r, &req) {
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
	return mux
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "decoding the request: "+err.Error())
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
	fw := api.NewFrameWriter(w, func() { rc.Flush() })
	end := run(sandbox.Streams{Stdout: fw.Stdout(), Stderr: fw.Stderr()})
	fw.End(end)
}
