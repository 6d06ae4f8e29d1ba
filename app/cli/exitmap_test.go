package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/app/cli/execface"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
)

// Every way a call can end goes through the one translation
// (pipeline.EndOf) to one exit status, and every face gives that status:
// gatehouse exec (in process or through the service: both print the end
// with printEnd), the relay (it exits end.Exit) and MCP (its result says
// the command's own exit code, and is an error exactly when the command
// did not run or did not start).
func TestOneExitMapping(t *testing.T) {
	outcome := func(st sandbox.Status, code int) *pipeline.Outcome {
		o := &pipeline.Outcome{Raw: &sandbox.Result{Status: st, ExitCode: code, TimedOut: st == sandbox.StatusTimedOut}}
		if st == sandbox.StatusCompleted {
			o.Result.ExitCode = &code
		}
		o.Result.TimedOut = o.Raw.TimedOut
		if st == sandbox.StatusFailedToStart {
			o.Raw.Error = "exec: no such file"
		}
		return o
	}
	cases := []struct {
		name     string
		o        *pipeline.Outcome
		err      error
		exit     int
		mcpError bool
	}{
		{"completed 0", outcome(sandbox.StatusCompleted, 0), nil, 0, false},
		{"completed 3", outcome(sandbox.StatusCompleted, 3), nil, 3, false},
		{"completed 127", outcome(sandbox.StatusCompleted, 127), nil, 127, false},
		{"timed out", outcome(sandbox.StatusTimedOut, 0), nil, api.ExitTimeout, false},
		{"killed", outcome(sandbox.StatusKilled, 0), nil, api.ExitKilled, false},
		{"failed to start", outcome(sandbox.StatusFailedToStart, 0), nil, api.ExitCannotRun, true},
		{"never ran", outcome(sandbox.StatusNeverRan, 0), nil, api.ExitCannotRun, false},
		{"bad argument", nil, &pipeline.ArgError{Arg: "cwd", Msg: "contains a NUL byte"}, pipeline.ExitArgument, true},
		{"internal", nil, errors.New("the pipeline failed"), api.ExitCannotRun, true},
	}
	for _, code := range []string{
		pipeline.DenyPolicyRule, pipeline.DenyDefault, pipeline.DenyDynamic, pipeline.DenyParseError,
		pipeline.DenyApproval, pipeline.DenyApprovalDenied, pipeline.DenyApprovalTimeout,
		pipeline.DenyCwdOutside, pipeline.DenyWorkspaceRoot, pipeline.DenyExecDisabled, pipeline.DenyAnalysisOff,
		pipeline.DenySandboxUnavailable, pipeline.DenyAuditUnavailable, pipeline.DenyModified, pipeline.DenyPinFailed,
		pipeline.DenyCredInArgv, pipeline.DenyCredNotGranted, pipeline.DenyCredUnknown, pipeline.DenyCredUnavailable,
		pipeline.DenyInternalError,
	} {
		cases = append(cases, struct {
			name     string
			o        *pipeline.Outcome
			err      error
			exit     int
			mcpError bool
		}{"denied " + code, nil, &pipeline.Denial{Code: code, Reason: "because"}, api.ExitCannotRun, true})
	}
	for _, c := range cases {
		end := pipeline.EndOf(c.o, c.err)
		if end.Exit != c.exit {
			t.Errorf("%s: EndOf's exit %d, want %d", c.name, end.Exit, c.exit)
		}
		// gatehouse exec, text and --json.
		for _, asJSON := range []bool{false, true} {
			var out, errOut bytes.Buffer
			got := execface.Print(&out, &errOut, end, asJSON, "", "")
			if int(got) != c.exit {
				t.Errorf("%s (json %v): gatehouse exec exits %d, want %d; stderr %q", c.name, asJSON, got, c.exit, errOut.String())
			}
		}
		// A denial names its code, and a remedy when there is one.
		var den *pipeline.Denial
		if errors.As(c.err, &den) {
			if end.Error == nil || end.Error.BlockedBy != den.Code {
				t.Errorf("%s: the end's error %+v does not name %s", c.name, end.Error, den.Code)
			} else if want := pipeline.Remedy(den.Code, ""); end.Error.Hint != want {
				t.Errorf("%s: remedy %q, want %q", c.name, end.Error.Hint, want)
			}
		}
		// MCP.
		r := toolResult(end)
		if r.IsError != c.mcpError {
			t.Errorf("%s: MCP isError %v, want %v", c.name, r.IsError, c.mcpError)
		}
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			ExitCode *int `json:"exit_code"`
		}
		json.Unmarshal(b, &o)
		if want := end.Result; want != nil && want.ExitCode != nil && (o.ExitCode == nil || *o.ExitCode != *want.ExitCode) {
			t.Errorf("%s: MCP exit_code %v, want %d (%s)", c.name, o.ExitCode, *want.ExitCode, b)
		}
	}
}
