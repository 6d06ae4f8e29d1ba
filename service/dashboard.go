package service

// The service's side of the dashboard (service/dashboard): it listens on
// 127.0.0.1 when exec.dashboard.enabled says so, hands out login codes over
// the socket, and offers the dashboard what the admission API offers, plus
// the workspaces and the configuration in force.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// A Dashboard is the local web dashboard; *dashboard.Server implements it.
type Dashboard interface {
	// Listen takes l to serve on; Serve serves on it until ctx ends.
	Listen(l net.Listener) error
	Serve(ctx context.Context) error
	// Login returns a new one-time login code, the sign-in form's
	// address and the page that posts the code; it fails before Listen.
	Login() (api.DashboardLoginResponse, error)
}

// startDashboard listens on 127.0.0.1 at the configured port and serves
// the dashboard until ctx ends; done is closed when it has stopped. A
// dashboard that cannot listen leaves the service running without it: the
// login endpoint says why.
func (s *Service) startDashboard(ctx context.Context) (done <-chan struct{}) {
	c := make(chan struct{})
	cfg := s.gen.Load().ex.Config().Exec.Dashboard
	if s.opts.Dashboard == nil || !cfg.Enabled {
		close(c)
		return c
	}
	d := s.opts.Dashboard(s)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port))
	l, err := net.Listen("tcp", addr)
	if err == nil {
		err = d.Listen(l)
	}
	if err != nil {
		msg := fmt.Sprintf("the dashboard could not listen on %s: %v; set exec.dashboard.port to a free port, or 0", addr, err)
		s.log.Error(msg)
		s.dashboard.Store(&dashboardState{err: msg})
		close(c)
		return c
	}
	s.dashboard.Store(&dashboardState{d: d})
	s.log.Info("dashboard listening", "address", l.Addr().String())
	go func() {
		defer close(c)
		if err := d.Serve(ctx); err != nil {
			s.log.Error("dashboard", "err", err)
		}
	}()
	return c
}

// dashboardState is the dashboard serving, or why none is.
type dashboardState struct {
	d   Dashboard
	err string
}

// DashboardLogin returns a new one-time login code for the dashboard,
// with its sign-in page, or why there is none.
func (s *Service) DashboardLogin() api.DashboardLoginResponse {
	st := s.dashboard.Load()
	switch {
	case st == nil && !s.gen.Load().ex.Config().Exec.Dashboard.Enabled:
		return api.DashboardLoginResponse{Error: "the dashboard is off (exec.dashboard.enabled: false); turn it on and restart the service"}
	case st == nil:
		return api.DashboardLoginResponse{Error: "this service serves no dashboard; restart it to pick up exec.dashboard"}
	case st.err != "":
		return api.DashboardLoginResponse{Error: st.err}
	}
	r, err := st.d.Login()
	if err != nil {
		return api.DashboardLoginResponse{Error: err.Error()}
	}
	return r
}

// AddWorkspace trusts dir as a workspace root, as gatehouse workspace add
// does: a directory that may never be a workspace is refused (a
// *trust.RefusedError).
func (s *Service) AddWorkspace(dir, by string) (string, error) {
	if s.opts.Trust == nil {
		return "", errors.New("workspaces cannot be trusted here")
	}
	return s.opts.Trust(&s.Config().Config, dir, "", by)
}

// RemoveWorkspace stops trusting dir, as gatehouse workspace rm does.
func (s *Service) RemoveWorkspace(dir string) error {
	if s.opts.Untrust == nil {
		return errors.New("workspaces cannot be removed here")
	}
	return s.opts.Untrust(dir)
}

// Explain analyses and decides req under the configuration in force,
// as gatehouse explain does, and returns the text it prints. Nothing
// runs.
func (s *Service) Explain(ctx context.Context, req api.ExecRequest) (string, error) {
	x, err := s.gen.Load().ex.Explain(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	x.WriteText(&b)
	return b.String(), nil
}

// Config returns the configuration in force and where each value came
// from.
func (s *Service) Config() *policy.Loaded { return s.gen.Load().loaded }
