package service

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
)

// A fault of Gatehouse's own code while deciding denies that call alone,
// as internal_error, on the record and on every face of the API; the
// service goes on serving.
func TestInternalErrorDeniesTheCall(t *testing.T) {
	var log lockedBuffer
	f := startExec(t, nil, nil, func(o *pipeline.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&log, nil))
		o.TestOnlyFault = func(command string) {
			if strings.Contains(command, "FAULT") {
				panic("fault injected by the test")
			}
		}
	})
	end, err := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: "echo FAULT", Agent: "cli", Surface: api.SurfaceCLI}}, io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("execute: %v (the service must answer, not be lost)", err)
	}
	if end.Exit != api.ExitCannotRun || end.Error == nil || end.Error.Kind != api.ErrDenied || end.Error.BlockedBy != pipeline.DenyInternalError ||
		!strings.Contains(end.Error.Message, "nothing ran") || strings.Contains(end.Error.Message, "fault injected") {
		t.Errorf("execute: %+v %+v", end, end.Error)
	}
	d, err := f.c.Decide(context.Background(), api.DecideRequest{Route: true, Request: api.ExecRequest{
		Command: "echo FAULT", Cwd: f.ws, Agent: "claude-code", Surface: api.SurfaceAgentHook, SessionID: "sess"}})
	if err != nil || d.Decision != "deny" || d.BlockedBy != pipeline.DenyInternalError || d.Ticket != "" {
		t.Errorf("decide: %+v %v", d, err)
	}
	evs, err := f.c.Events(context.Background(), 2)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events: %v %v", evs, err)
	}
	for _, ev := range evs {
		if ev.Decision != "deny" || ev.BlockedBy != pipeline.DenyInternalError {
			t.Errorf("event %+v", ev)
		}
	}
	if !strings.Contains(log.String(), "fault injected by the test") || !strings.Contains(log.String(), "pipeline.(*Executor).decide") {
		t.Errorf("the log lacks the fault and its stack:\n%s", log.String())
	}
	// The next call is served.
	var out bytes.Buffer
	end, err = f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: "echo fine", Agent: "cli", Surface: api.SurfaceCLI}}, &out, io.Discard)
	if err != nil || end.Exit != 0 || out.String() != "fine\n" {
		t.Errorf("after the fault: %+v %v %q", end, err, out.String())
	}
}
