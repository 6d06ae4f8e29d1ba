// Package service is Gatehouse's user service: it holds the configuration
// in force (loaded at start, reloaded on demand), admits calls through the
// pipeline, issues and redeems the tickets of routed commands, bounds how
// many executions run at once, and serves the admission API on the
// user's unix socket until its context ends.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
	"github.com/gatehouse-dev/gatehouse/service/localserver"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/socket"
	"github.com/gatehouse-dev/gatehouse/service/tickets"
)

// Options configure a Service. Load and NewExecutor are required.
type Options struct {
	// Load loads and validates the configuration, at start and on every
	// reload.
	Load func() (*policy.Loaded, error)
	// NewExecutor builds the pipeline for a configuration: the same one
	// gatehouse exec runs in-process.
	NewExecutor func(cfg *policy.Config) (*pipeline.Executor, error)
	// SocketPath is where the admission API listens.
	SocketPath string
	// RelayDir holds the relays' FIFOs (created 0711).
	RelayDir string
	// Reconcile, when set, closes on the audit trail what a previous
	// service left open (audit.Store.Reconcile): Run calls it once it holds
	// the socket, so no other service runs, and before it admits anything.
	// It returns a line per execution it closed, for the log.
	Reconcile func(ctx context.Context) ([]string, error)
	// Export, when set, runs the export of the audit trail that cfg's
	// exec.audit.export describes (service/export) until ctx ends. Run
	// starts it once it holds the socket, after Reconcile, when the
	// configuration turns an export on; a reload that changes the section
	// restarts it. An error it returns is logged.
	Export  func(ctx context.Context, cfg *policy.Config) error
	Version string
	Logger  *slog.Logger

	// ReadTimeout bounds the reading of one request, headers and body
	// (default 30 s); IdleTimeout closes a kept-alive connection with no
	// request (default 2 min); MaxConns is how many connections are served
	// at once (default 128): more wait to be accepted.
	ReadTimeout time.Duration
	IdleTimeout time.Duration
	MaxConns    int
	// ProbeTTL is how long GET /v1/status reuses a sandbox probe (default
	// 2 s).
	ProbeTTL time.Duration
	// SavedRulesFile is where an approval's "always" saves its rule
	// (policy.SavedRulesName in the state directory); Load must read it
	// (policy.LoadOptions.SavedRulesFile). "" offers no always.
	SavedRulesFile string
	// Trust trusts a directory as a workspace root when a person approves
	// it (service/trust), under cfg, the configuration in force; nil
	// refuses workspace approvals.
	Trust func(cfg *policy.Config, dir, agent, by string) (string, error)
	// Untrust stops trusting a workspace root (service/trust); nil refuses.
	Untrust func(dir string) error
	// Dashboard, when set, builds the dashboard Run serves on 127.0.0.1
	// when exec.dashboard.enabled (at the port exec.dashboard.port says,
	// as configured at start).
	Dashboard func(s *Service) Dashboard
	// Workspaces lists the workspace roots of cfg, the configuration in
	// force, and the trusted ones, each with why it is not in force when
	// it is not; nil lists the roots in force.
	Workspaces func(cfg *policy.Config) ([]api.Workspace, error)
	// ApprovalOpened, when set, is told of each new approval request (the
	// notification with its actions), and ApprovalClosed when it is no
	// longer pending.
	ApprovalOpened func(a api.Approval, answer func(api.AnswerRequest) api.AnswerResponse)
	ApprovalClosed func(a api.Approval)
	// Doctor, when set, runs gatehouse doctor (service/doctor) for GET
	// /v1/doctor and the dashboard, told this service's own status; nil
	// serves no report (doctor.go).
	Doctor func(ctx context.Context, self *api.Status) *api.DoctorReport
}

// Defaults of Options.
const (
	defaultReadTimeout = 30 * time.Second
	defaultIdleTimeout = 2 * time.Minute
	defaultMaxConns    = 128
	defaultProbeTTL    = 2 * time.Second
)

// generation is one loaded configuration and the pipeline built on it.
type generation struct {
	loaded *policy.Loaded
	ex     *pipeline.Executor
	at     time.Time
}

// A Service is safe for concurrent use. Run serves it once.
type Service struct {
	opts    Options
	log     *slog.Logger
	started time.Time

	gen       atomic.Pointer[generation]
	doctorMu  sync.Mutex // one doctor at a time: each starts a probe sandbox
	reloadMu  sync.Mutex
	reloadErr atomic.Pointer[string]

	tickets   *tickets.Store[*routed]
	ring      *ring
	hub       *hub
	approvals *approvals.Broker
	saveMu    sync.Mutex // saved rules file
	dashboard atomic.Pointer[dashboardState]
	outRed    outputRedactors // tooloutput.go

	// root is cancelled at shutdown: running executions are killed.
	root     context.Context
	stopRoot context.CancelFunc

	// probe is the last sandbox probe GET /v1/status reported.
	probe struct {
		sync.Mutex
		gen          *generation
		at           time.Time
		st           api.SandboxStatus
		testOnlyRuns int // probes run, which tests count
	}

	mu      sync.Mutex
	running int
	closing bool
	wg      sync.WaitGroup // executions and relay waiters

	exportMu sync.Mutex
	export   *exportRun // the audit export running, if any
	// sessions are the agent sessions' shared networks, kept across
	// configurations (ports.go).
	sessions *pipeline.SessionNets
}

// New loads the configuration and builds the pipeline. An invalid
// configuration is an error naming the file, line and field: the service
// refuses to start.
func New(opts Options) (*Service, error) {
	if opts.Load == nil || opts.NewExecutor == nil {
		return nil, errors.New("service: Load and NewExecutor are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = defaultReadTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = defaultIdleTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns
	}
	if opts.ProbeTTL <= 0 {
		opts.ProbeTTL = defaultProbeTTL
	}
	s := &Service{opts: opts, log: opts.Logger, started: time.Now(), hub: newHub(), sessions: pipeline.NewSessionNets(opts.Logger)}
	s.ring = newRing(512, func(ev api.Event) { s.hub.event(api.NoticeExecutionEnded, ev) })
	var trustDir func(dir, agent, by string) (string, error)
	if opts.Trust != nil {
		trustDir = func(dir, agent, by string) (string, error) { return opts.Trust(&s.Config().Config, dir, agent, by) }
	}
	s.approvals = approvals.New(approvals.Options{
		SaveRule:   s.saveRule,
		SaveEgress: s.saveEgress,
		SavePreset: s.savePreset,
		Trust:      trustDir,
		Publish:    s.hub.publish,
		Opened: func(a api.Approval) {
			s.log.Info("approval requested", "id", a.ID, "agent", a.Agent, "kind", a.Kind, "rule", a.Rule)
			if opts.ApprovalOpened != nil {
				opts.ApprovalOpened(a, s.Answer)
			}
		},
		Answered: func(a api.Approval, rec api.ApprovalRecord) {
			if opts.ApprovalClosed != nil {
				opts.ApprovalClosed(a)
			}
		},
	})
	s.root, s.stopRoot = context.WithCancel(context.Background())
	s.tickets = tickets.NewStore(s.expired)
	g, err := s.load()
	if err != nil {
		return nil, err
	}
	s.gen.Store(g)
	return s, nil
}

// poolAgent is the agent the warm pool starts for until another runs
// commands: Claude Code's routed Bash calls are the ones that wait.
const poolAgent = "claude-code"

// startPool starts g's warm pool (exec.sandbox.warm_pool).
func (s *Service) startPool(g *generation) {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if !closing {
		g.ex.StartPool(g.ex.Config().Exec.Sandbox.WarmPool, poolAgent)
	}
}

func (s *Service) load() (*generation, error) {
	l, err := s.opts.Load()
	if err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	ex, err := s.opts.NewExecutor(&l.Config)
	if err != nil {
		return nil, err
	}
	ex.SetApprover(attendedBroker{s.approvals, s.hub})
	ex.SetSessions(s.sessions)
	return &generation{loaded: l, ex: ex, at: time.Now()}, nil
}

// Reload loads the configuration again. When the new one is invalid the
// one in force stays, and the error says why.
func (s *Service) Reload() api.ReloadResponse {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	g, err := s.load()
	if err != nil {
		msg := err.Error()
		s.reloadErr.Store(&msg)
		s.log.Error("reload failed; the previous configuration stays in force", "err", msg)
		return api.ReloadResponse{OK: false, Files: s.gen.Load().loaded.Files, Error: msg}
	}
	old := s.gen.Swap(g)
	// The warm sandboxes were started for the old configuration: every
	// one is replaced.
	s.startPool(g)
	old.ex.ClosePool()
	s.startExport(g)
	s.reloadErr.Store(nil)
	s.log.Info("configuration reloaded", "files", g.loaded.Files)
	return api.ReloadResponse{OK: true, Files: nonNil(g.loaded.Files)}
}

// Run serves the admission API and the relays until ctx ends, then shuts
// down: it stops listening, kills running executions (recorded killed),
// records pending tickets as never run, and returns when everything has
// ended.
func (s *Service) Run(ctx context.Context) error {
	if err := socket.PrivateDir(s.opts.RelayDir, 0o711); err != nil {
		return fmt.Errorf("relay directory: %w", err)
	}
	tickets.Sweep(s.opts.RelayDir, 0)
	// The pool exists before the socket does: a client that finds the
	// socket finds the pool in status (its sandboxes may still be
	// starting).
	s.startPool(s.gen.Load())
	l, err := socket.Listen(s.opts.SocketPath, s.log)
	if err != nil {
		s.gen.Load().ex.ClosePool()
		return err
	}
	if s.opts.Reconcile != nil {
		closed, err := s.opts.Reconcile(ctx)
		for _, c := range closed {
			s.log.Warn("audit: closed an execution a previous service left open", "execution", c)
		}
		if err != nil {
			s.log.Error("audit: reconciling what a previous service left open", "err", err)
		}
	}
	s.startExport(s.gen.Load())
	// A request must arrive whole within ReadTimeout (the handler lifts
	// the deadline once the body is in, for streamed answers); no write
	// timeout, since an execution streams for as long as it runs.
	srv := &http.Server{
		Handler:           localserver.Handler(s, s.log),
		ReadHeaderTimeout: min(10*time.Second, s.opts.ReadTimeout),
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(socket.Limit(l, s.opts.MaxConns, s.log)) }()
	dctx, stopDashboard := context.WithCancel(ctx)
	defer stopDashboard()
	dashDone := s.startDashboard(dctx)
	s.log.Info("gatehouse service started", "socket", s.opts.SocketPath, "relay_dir", s.opts.RelayDir,
		"files", s.gen.Load().loaded.Files, "pid", os.Getpid())

	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case serveErr = <-errc:
			break loop
		case <-sweep.C:
			tickets.Sweep(s.opts.RelayDir, 15*time.Minute)
		}
	}
	stopDashboard()
	s.shutdown(srv)
	<-dashDone
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

func (s *Service) shutdown(srv *http.Server) {
	s.log.Info("shutting down")
	s.hub.publish(api.StreamNotice{Type: api.NoticeService, State: "stopping"})
	s.hub.end()
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	for name, r := range s.tickets.Close() {
		s.neverRan(r, api.StatusReasonServiceStopped, "the Gatehouse service stopped before the relay redeemed the ticket")
		r.in.Release()
		tickets.Retire(s.opts.RelayDir, name, tickets.GoneExpired)
	}
	s.gen.Load().ex.ClosePool()
	s.stopExport()
	s.sessions.Close()
	s.stopRoot() // running executions: SIGTERM, then SIGKILL; recorded killed
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-sctx.Done():
		s.log.Warn("executions still running at shutdown")
	}
	s.log.Info("gatehouse service stopped")
}

// Status describes the service now, including the sandbox a command would
// get (probed).
func (s *Service) Status(ctx context.Context) *api.Status {
	g := s.gen.Load()
	cfg := g.ex.Config()
	st := &api.Status{
		Version:    s.opts.Version,
		PID:        os.Getpid(),
		Started:    s.started.UTC(),
		Socket:     s.opts.SocketPath,
		RelayDir:   s.opts.RelayDir,
		Config:     nonNil(g.loaded.Files),
		ReloadedAt: g.at.UTC(),
		Policy: api.PolicySummary{
			Routing:             cfg.Policy.BuiltinExecRouting,
			SandboxRequired:     cfg.Policy.SandboxRequired,
			CommandAnalysisMode: cfg.Policy.CommandAnalysisMode,
			DefaultAction:       cfg.Policy.DefaultAction,
			WorkspaceRoots:      cfg.WorkspaceRootsEffective(),
			ExecTimeoutSeconds:  cfg.Policy.ExecTimeoutSeconds,
			MaxConcurrent:       cfg.Exec.Limits.MaxConcurrent,
			TicketTTLSeconds:    cfg.Exec.Limits.TicketTTLSeconds,
			MaxPendingTickets:   cfg.Exec.Limits.MaxPendingTickets,
			EgressAllowlist:     nonNil(cfg.Policy.EgressAllowlist),
		},
		Pending:    s.tickets.Pending(),
		WarmPool:   g.ex.Pool(),
		Approvals:  s.approvals.Count(),
		Workspaces: len(g.ex.WorkspaceRoots()),
	}
	if p := s.reloadErr.Load(); p != nil {
		st.ReloadError = *p
	}
	s.mu.Lock()
	st.Running = s.running
	s.mu.Unlock()
	st.Sandbox = s.probeSandbox(ctx, g)
	return st
}

// probeSandbox probes the sandbox a command would get, reusing a probe of
// the same configuration younger than ProbeTTL: status is polled (the
// tray, scripts), and each probe starts a sandbox. One probe runs at a
// time.
func (s *Service) probeSandbox(ctx context.Context, g *generation) api.SandboxStatus {
	p := &s.probe
	p.Lock()
	defer p.Unlock()
	if p.gen == g && time.Since(p.at) < s.opts.ProbeTTL {
		return p.st
	}
	backend, why, res, err := g.ex.ProbeSandbox(ctx)
	st := api.SandboxStatus{Backend: string(backend), Why: why}
	switch {
	case err != nil:
		st.Error = err.Error()
	case res != nil:
		st.Mode = string(res.Mode)
		if res.Error != "" {
			st.Error = res.Error
		}
	}
	p.testOnlyRuns++
	if ctx.Err() == nil { // a probe cut short by its caller says nothing
		p.gen, p.at, p.st = g, time.Now(), st
	}
	return st
}

// StdinMaxBytes is the largest stdin a call may pass under the
// configuration in force.
func (s *Service) StdinMaxBytes() int64 {
	return int64(s.gen.Load().ex.Config().Exec.Limits.StdinMaxBytes)
}

// Events returns up to limit recent events, newest first.
func (s *Service) Events(limit int) []api.Event { return s.ring.list(limit) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
