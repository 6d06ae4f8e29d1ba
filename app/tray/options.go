package tray

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/notify"
)

// ErrUnavailable means this build has no tray: on macOS the menu bar
// needs cgo.
var ErrUnavailable = errors.New("the tray is not available in this build")

// A Client is the admission API the tray reads and answers through;
// *localapi.Client implements it.
type Client interface {
	Status(ctx context.Context) (*api.Status, error)
	Events(ctx context.Context, limit int) ([]api.Event, error)
	Approvals(ctx context.Context) ([]api.Approval, error)
	Answer(ctx context.Context, req api.AnswerRequest) (*api.AnswerResponse, error)
	Workspaces(ctx context.Context) ([]api.Workspace, error)
	// Doctor runs gatehouse doctor in the service and returns its report.
	Doctor(ctx context.Context) (*api.DoctorReport, error)
	// DashboardLogin returns a one-time login code for the dashboard
	// and the sign-in page that posts it.
	DashboardLogin(ctx context.Context) (*api.DashboardLoginResponse, error)
	// Stream calls fn with each notice of the live stream until ctx ends
	// (nil) or the service goes away (an error).
	Stream(ctx context.Context, fn func(api.StreamNotice)) error
	// Ports lists the agent sessions' networks; OpenPort forwards a
	// session's port to this machine's loopback and ClosePort ends a
	// forward (a refusal is an error saying why).
	Ports(ctx context.Context) ([]api.SessionNetwork, error)
	OpenPort(ctx context.Context, req api.PortRequest) (*api.PortForward, error)
	ClosePort(ctx context.Context, req api.PortRequest) (*api.PortForward, error)
}

// Options configure the tray.
type Options struct {
	// Client reaches the service. Must be non-nil.
	Client Client
	// Exe is the gatehouse binary: Start service runs 'Exe service
	// start', and Run doctor 'Exe doctor --json' when no service runs to
	// ask, the CLI's own commands.
	Exe string
	// ReportDir is where the doctor's report is written (the state
	// directory).
	ReportDir string
	// Theme is light or dark, the panel the icons are drawn for; "" asks
	// the desktop, and takes dark when it does not say.
	Theme string
	// Sender raises the notifications; nil means the desktop.
	Sender notify.Sender
	// Open opens a file or a directory in the desktop's application for
	// it; nil means xdg-open (open on macOS).
	Open   func(path string) error
	Logger *slog.Logger
}

// Open opens path (a file, a directory or a URL) in the desktop's
// application for it: xdg-open, open on macOS. It fails when there is
// none.
func Open(path string) error {
	name, args := "xdg-open", []string{path}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", path}
	}
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running %s: %w", name, err)
	}
	go cmd.Wait()
	return nil
}
