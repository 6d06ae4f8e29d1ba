package localserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// fake is an Admission that records what reached it.
type fake struct {
	stdinMax int64
	answered []api.AnswerRequest
	stream   chan api.StreamNotice
	decided  []api.DecideRequest
	redeemed []string
}

func (f *fake) Decide(ctx context.Context, req api.DecideRequest) (*api.DecideResponse, error) {
	f.decided = append(f.decided, req)
	return &api.DecideResponse{Decision: "allow"}, nil
}

func (f *fake) Execute(ctx context.Context, req api.ExecRequest, out sandbox.Streams) *api.End {
	return &api.End{}
}

func (f *fake) Redeem(ctx context.Context, ticket string, out sandbox.Streams) *api.End {
	f.redeemed = append(f.redeemed, ticket)
	return &api.End{}
}

func (f *fake) CheckTicket(req api.TicketCheckRequest) api.TicketCheckResponse {
	return api.TicketCheckResponse{Live: req.Ticket == "live" && req.SessionID == "s1"}
}

func (f *fake) Status(ctx context.Context) *api.Status { return &api.Status{} }
func (f *fake) Events(limit int) []api.Event           { return nil }
func (f *fake) Reload() api.ReloadResponse             { return api.ReloadResponse{OK: true} }
func (f *fake) StdinMaxBytes() int64                   { return f.stdinMax }
func (f *fake) ExplainCall(ctx context.Context, req api.ExecRequest) (*api.ExplainResponse, error) {
	return &api.ExplainResponse{Explanation: []byte(`{"decision":"allow"}`)}, nil
}

func (f *fake) FileAccess(ctx context.Context, req api.FileAccessRequest) (*api.DecideResponse, error) {
	return &api.DecideResponse{Decision: "allow"}, nil
}
func (f *fake) ToolOutput(ctx context.Context, req api.ToolOutputRequest) (*api.ToolOutputResponse, error) {
	return &api.ToolOutputResponse{}, nil
}
func (f *fake) Approvals() []api.Approval { return []api.Approval{{ID: "a1"}} }
func (f *fake) Answer(req api.AnswerRequest) api.AnswerResponse {
	f.answered = append(f.answered, req)
	return api.AnswerResponse{OK: req.ID == "a1", Error: "no such request"}
}
func (f *fake) Subscribe(ctx context.Context) ([]api.StreamNotice, <-chan api.StreamNotice) {
	return []api.StreamNotice{{Type: api.NoticeService, State: "running"}}, f.stream
}
func (f *fake) EndSession(agent, session string) {}
func (f *fake) Ports() []api.SessionNetwork      { return nil }
func (f *fake) OpenPort(req api.PortRequest) api.PortResponse {
	return api.PortResponse{Error: "no session " + req.SessionID}
}
func (f *fake) ClosePort(req api.PortRequest) api.PortResponse {
	return api.PortResponse{Error: "no session " + req.SessionID}
}

func (f *fake) DashboardLogin() api.DashboardLoginResponse {
	return api.DashboardLoginResponse{URL: "http://127.0.0.1:1234/login", Code: "c0de", LaunchFile: "/run/user/1000/gatehouse/dashboard/login-x.html"}
}
func (f *fake) Doctor(ctx context.Context) (*api.DoctorReport, error) {
	return &api.DoctorReport{Checks: []api.DoctorCheck{{Name: "service", State: api.DoctorOK, Message: "running"}}}, nil
}
func (f *fake) Workspaces() []api.Workspace {
	return []api.Workspace{{Path: "/w", Origin: api.WorkspacePolicy}}
}

// endless is a request body that never ends; it counts what was read.
type endless struct {
	prefix string
	n      int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		if e.n < int64(len(e.prefix)) {
			p[i] = e.prefix[e.n]
		} else {
			p[i] = 'a'
		}
		e.n++
	}
	return len(p), nil
}

func serve(h http.Handler, method, path string, body io.Reader) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, body))
	return rec.Code, rec.Body.String()
}

// A body larger than its endpoint takes is refused 413 after reading no
// more than the limit, however much the client would send.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	f := &fake{stdinMax: 1 << 20}
	h := Handler(f, nil)
	limit := callLimit(f)
	for _, tc := range []struct {
		path  string
		limit int64
	}{
		{api.PathDecide, limit},
		{api.PathExecute, limit},
		{api.PathRedeem, envelope},
		{api.PathReload, envelope},
	} {
		body := &endless{prefix: `{"request":{"command":"`}
		code, msg := serve(h, http.MethodPost, tc.path, body)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "larger than") {
			t.Errorf("%s: %d %s", tc.path, code, msg)
		}
		if body.n > tc.limit+64<<10 {
			t.Errorf("%s: read %d bytes of an endless body; the limit is %d", tc.path, body.n, tc.limit)
		}
	}
	if len(f.decided) != 0 {
		t.Error("an oversized request was decided")
	}

	// The largest legitimate request fits: a 64 KiB command and a stdin at
	// its limit, every byte escaped by JSON.
	req := api.ExecuteRequest{Request: api.ExecRequest{
		Command: strings.Repeat("<", maxCommand),
		Stdin:   strings.Repeat("\x01", int(f.stdinMax)),
		Cwd:     "/" + strings.Repeat("d", 4000),
	}}
	b, _ := json.Marshal(api.DecideRequest{Request: req.Request, Route: true})
	if int64(len(b)) <= 6*int64(maxCommand) {
		t.Fatalf("the request is only %d bytes", len(b))
	}
	if code, msg := serve(h, http.MethodPost, api.PathDecide, strings.NewReader(string(b))); code != http.StatusOK {
		t.Errorf("largest legitimate decide: %d %s", code, msg)
	}
}

// A body holding more than one JSON value is refused; nothing of it runs.
func TestTrailingData(t *testing.T) {
	t.Parallel()
	f := &fake{stdinMax: 1 << 20}
	h := Handler(f, nil)
	for _, body := range []string{
		`{"ticket":"a"}{"ticket":"b"}`,
		`{"ticket":"a"} {"ticket":"b"}`,
		`{"ticket":"a"}}`,
		`{"ticket":"a"}x`,
	} {
		code, msg := serve(h, http.MethodPost, api.PathRedeem, strings.NewReader(body))
		if code != http.StatusBadRequest || !strings.Contains(msg, "data follows the JSON value; send exactly one") {
			t.Errorf("%s: %d %s", body, code, msg)
		}
	}
	if len(f.redeemed) != 0 {
		t.Errorf("redeemed %q from bodies with trailing data", f.redeemed)
	}
	if code, msg := serve(h, http.MethodPost, api.PathRedeem, strings.NewReader("{\"ticket\":\"a\"}\r\n \t")); code != http.StatusOK || len(f.redeemed) != 1 {
		t.Errorf("trailing white space: %d %s", code, msg)
	}
}

// GET /v1/doctor serves the report as the service made it.
func TestDoctor(t *testing.T) {
	t.Parallel()
	code, body := serve(Handler(&fake{}, nil), http.MethodGet, api.PathDoctor, nil)
	var r api.DoctorReport
	if err := json.Unmarshal([]byte(body), &r); code != http.StatusOK || err != nil {
		t.Fatalf("%d %s (%v)", code, body, err)
	}
	if c, ok := r.Check("service"); !ok || c.State != api.DoctorOK || c.Message != "running" {
		t.Errorf("the report's service check: %+v", r.Checks)
	}
}
