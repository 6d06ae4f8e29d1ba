package localapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/socket"
)

// ErrNotRunning means no service listens on the socket.
var ErrNotRunning = errors.New("the Gatehouse service is not running")

// ErrLost means the service went away after it took a streamed call: the
// command may have run, in part, and its result is unknown.
var ErrLost = errors.New("lost the Gatehouse service mid-command")

// A Client calls the admission API on a unix socket. It is safe for
// concurrent use.
//
// Each call is one HTTP/1.1 exchange on a connection of its own, written
// and read here (response.go) rather than through net/http: most callers
// (the hook, the relay, gatehouse exec) make one call and exit, and
// net/http is code a short-lived process pays to start. A Transport's
// connection pool and goroutines cost about 0.4 ms a call on the test
// machines; linking the package at all, its initialisation and the first
// run of its response parser, about 1.5 ms more.
type Client struct {
	path string
}

// NewClient returns a client of the service listening at socketPath.
func NewClient(socketPath string) *Client {
	return &Client{path: socketPath}
}

// Socket returns the socket path the client dials.
func (c *Client) Socket() string { return c.path }

// Decide asks for a decision.
func (c *Client) Decide(ctx context.Context, req api.DecideRequest) (*api.DecideResponse, error) {
	var resp api.DecideResponse
	return &resp, c.call(ctx, methodPost, api.PathDecide, req, &resp)
}

// Explain asks how a request would be decided now; nothing runs.
func (c *Client) Explain(ctx context.Context, req api.ExecRequest) (*api.ExplainResponse, error) {
	var resp api.ExplainResponse
	return &resp, c.call(ctx, methodPost, api.PathExplain, req, &resp)
}

// FileAccess asks for a decision on an agent file tool's access.
func (c *Client) FileAccess(ctx context.Context, req api.FileAccessRequest) (*api.DecideResponse, error) {
	var resp api.DecideResponse
	return &resp, c.call(ctx, methodPost, api.PathFileAccess, req, &resp)
}

// ToolOutput has the output of an agent's own tool cleaned.
func (c *Client) ToolOutput(ctx context.Context, req api.ToolOutputRequest) (*api.ToolOutputResponse, error) {
	var resp api.ToolOutputResponse
	return &resp, c.call(ctx, methodPost, api.PathToolOutput, req, &resp)
}

// Status returns the service's status.
func (c *Client) Status(ctx context.Context) (*api.Status, error) {
	var st api.Status
	return &st, c.call(ctx, methodGet, api.PathStatus, nil, &st)
}

// Events returns up to limit recent events, newest first.
func (c *Client) Events(ctx context.Context, limit int) ([]api.Event, error) {
	var r api.EventsResponse
	err := c.call(ctx, methodGet, api.PathEvents+"?limit="+strconv.Itoa(limit), nil, &r)
	return r.Events, err
}

// Reload asks the service to load its configuration again.
func (c *Client) Reload(ctx context.Context) (*api.ReloadResponse, error) {
	var r api.ReloadResponse
	return &r, c.call(ctx, methodPost, api.PathReload, struct{}{}, &r)
}

// Execute decides and runs req, copying its output to stdout and stderr
// as it arrives. Cancelling ctx kills the execution.
func (c *Client) Execute(ctx context.Context, req api.ExecuteRequest, stdout, stderr io.Writer) (*api.End, error) {
	return c.stream(ctx, api.PathExecute, req, stdout, stderr)
}

// Redeem runs the execution ticket stands for.
func (c *Client) Redeem(ctx context.Context, ticket string, stdout, stderr io.Writer) (*api.End, error) {
	return c.stream(ctx, api.PathRedeem, api.RedeemRequest{Ticket: ticket}, stdout, stderr)
}

// CheckTicket asks whether a ticket is live for an agent session; it
// redeems nothing.
func (c *Client) CheckTicket(ctx context.Context, req api.TicketCheckRequest) (*api.TicketCheckResponse, error) {
	var resp api.TicketCheckResponse
	return &resp, c.call(ctx, methodPost, api.PathTicketCheck, req, &resp)
}

func (c *Client) stream(ctx context.Context, path string, in any, stdout, stderr io.Writer) (*api.End, error) {
	resp, err := c.do(ctx, methodPost, path, in)
	if err != nil {
		// The connection closed with the call sent and no answer: the
		// service died taking it.
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil, fmt.Errorf("%w: %w", ErrLost, err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	end, err := api.ReadStream(resp.Body, stdout, stderr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLost, err)
	}
	return end, nil
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.do(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding the service's answer: %w", err)
	}
	return nil
}

func (c *Client) do(ctx context.Context, method, path string, in any) (*response, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, err
		}
	}
	conn, err := socket.Dial(ctx, c.path)
	if err != nil {
		if socket.NotRunning(err) {
			return nil, fmt.Errorf("%w (no service on %s)", ErrNotRunning, c.path)
		}
		return nil, fmt.Errorf("calling the Gatehouse service: %w", err)
	}
	// Ending ctx ends the call: the service reads the closed connection as
	// the caller gone (and kills a command it runs for it).
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	release := func() { stop(); conn.Close() }
	fail := func(err error) (*response, error) {
		release()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("calling the Gatehouse service: %w", err)
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: gatehouse\r\nConnection: close\r\n", method, path)
	if in != nil {
		fmt.Fprintf(&req, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		return fail(err)
	}
	resp, err := readResponse(bufio.NewReader(conn), method)
	if err != nil {
		return fail(err)
	}
	resp.Body = &connBody{ReadCloser: resp.Body, close: release}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var e api.ErrorResponse
		if json.NewDecoder(resp.Body).Decode(&e) == nil && e.Error != "" {
			return nil, fmt.Errorf("the Gatehouse service answered %s: %s", resp.Status, e.Error)
		}
		return nil, fmt.Errorf("the Gatehouse service answered %s", resp.Status)
	}
	return resp, nil
}

// connBody is a response body whose Close closes its connection.
type connBody struct {
	io.ReadCloser
	close func()
}

func (b *connBody) Close() error {
	err := b.ReadCloser.Close()
	b.close()
	return err
}

// Approvals returns the pending approval requests, oldest first.
func (c *Client) Approvals(ctx context.Context) ([]api.Approval, error) {
	var r api.ApprovalsResponse
	err := c.call(ctx, methodGet, api.PathApprovals, nil, &r)
	return r.Approvals, err
}

// Answer answers a pending approval request. A refused answer (unknown
// id, an answer not offered, a rule that does not match) is an error
// naming why.
func (c *Client) Answer(ctx context.Context, req api.AnswerRequest) (*api.AnswerResponse, error) {
	var r api.AnswerResponse
	if err := c.call(ctx, methodPost, api.PathAnswer, req, &r); err != nil {
		return nil, err
	}
	if !r.OK {
		return &r, errors.New(r.Error)
	}
	return &r, nil
}

// Workspaces returns the workspace roots in force and the trusted ones.
func (c *Client) Workspaces(ctx context.Context) ([]api.Workspace, error) {
	var r api.WorkspacesResponse
	err := c.call(ctx, methodGet, api.PathWorkspaces, nil, &r)
	return r.Workspaces, err
}

// DashboardLogin asks for a new one-time login code for the dashboard,
// with its sign-in page; a dashboard that is off or not listening is an
// error saying why.
func (c *Client) DashboardLogin(ctx context.Context) (*api.DashboardLoginResponse, error) {
	var r api.DashboardLoginResponse
	if err := c.call(ctx, methodPost, api.PathDashboardLogin, struct{}{}, &r); err != nil {
		return nil, err
	}
	if r.Error != "" {
		return nil, errors.New(r.Error)
	}
	return &r, nil
}

// Doctor asks the service to run gatehouse doctor and returns its report.
// It takes as long as doctor does (a probe sandbox starts): give ctx a
// deadline of minutes, not seconds.
func (c *Client) Doctor(ctx context.Context) (*api.DoctorReport, error) {
	var r api.DoctorReport
	if err := c.call(ctx, methodGet, api.PathDoctor, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Stream reads the live stream, calling fn for each notice in order, until
// ctx ends (nil) or the service goes away (an error).
func (c *Client) Stream(ctx context.Context, fn func(api.StreamNotice)) error {
	resp, err := c.do(ctx, methodGet, api.PathStream, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = api.ReadEvents(resp.Body, fn)
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = io.EOF
	}
	return fmt.Errorf("%w: the live stream ended: %w", ErrLost, err)
}

// Ports lists the agent sessions' shared networks.
func (c *Client) Ports(ctx context.Context) ([]api.SessionNetwork, error) {
	var r api.PortsResponse
	err := c.call(ctx, methodGet, api.PathPorts, nil, &r)
	return r.Sessions, err
}

// OpenPort forwards a session's port to the host's loopback; a refusal
// is an error naming why.
func (c *Client) OpenPort(ctx context.Context, req api.PortRequest) (*api.PortForward, error) {
	return c.port(ctx, api.PathPortsOpen, req)
}

// ClosePort ends a forward; a refusal is an error naming why.
func (c *Client) ClosePort(ctx context.Context, req api.PortRequest) (*api.PortForward, error) {
	return c.port(ctx, api.PathPortsClose, req)
}

func (c *Client) port(ctx context.Context, path string, req api.PortRequest) (*api.PortForward, error) {
	var r api.PortResponse
	if err := c.call(ctx, methodPost, path, req, &r); err != nil {
		return nil, err
	}
	if r.Error != "" {
		return nil, errors.New(r.Error)
	}
	return r.Forward, nil
}

// EndSession tells the service an agent's session ended.
func (c *Client) EndSession(ctx context.Context, req api.SessionEndRequest) error {
	var r struct{}
	return c.call(ctx, methodPost, api.PathSessionEnd, req, &r)
}
