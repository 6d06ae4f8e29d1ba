// Package assemble builds Gatehouse's user service, and the executors of
// the faces that run commands in-process, from one user's files.
//
// Locate computes the user's [Paths] (configuration, state, socket, relay
// directory, audit trail, caches, credential directory, the paths no
// command sees) and keychain once, from the environment; everything here
// takes that value and reads no environment of its own. [New] returns the
// service ready to Run: the pipeline and its observers for each
// configuration it loads, the audit trail's reconciliation and export,
// approval notifications, trusting workspaces under the configuration in
// force, and the dashboard. [Executor] and [OpenObservers] build the same
// pipeline, and its audit trail and notifier, for gatehouse exec, explain
// and mcp when no service runs.
//
// The package imports nothing of app/: the service starts from here alone
// (a test keeps it so).
package assemble

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/dashboard"
	"github.com/gatehouse-dev/gatehouse/service/export"
	"github.com/gatehouse-dev/gatehouse/service/notify"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Options configure New. Paths is required; Load says where the
// configuration comes from (policy.DefaultLoadOptions, with the user file
// a flag or $GATEHOUSE_CONFIG names).
type Options struct {
	Paths Paths
	Load  policy.LoadOptions
	// Version is the version the service reports and the export names.
	Version string
	// Logger is the service's log; nil discards it.
	Logger *slog.Logger
	// Doctor runs gatehouse doctor (service/doctor), told the service's
	// own status: GET /v1/doctor serves its report, the dashboard's doctor
	// page shows it (service.Options.Doctor). Nil means this user's, as
	// gatehouse doctor runs it (DoctorOptions).
	Doctor func(ctx context.Context, self *api.Status) *api.DoctorReport
}

// New builds the user service of o.Paths: it loads the configuration (an
// invalid one is an error naming the file, line and field) and builds its
// pipeline, as service.New does, with everything the service needs to
// run. The caller takes the service's lock first, then calls Run. What ctx
// carries lasts until it ends: each configuration's audit trail and
// notifier, and the dashboard's trail.
func New(ctx context.Context, o Options) (*service.Service, error) {
	p, logger := o.Paths, o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if p.Keys == nil {
		return nil, errors.New("assemble: Paths.Keys is required")
	}
	probe.SetVersionCache(p.ProbeVer)
	prompter := sync.OnceValue(func() notify.Prompter {
		pr, err := notify.NewActionPrompter()
		if err != nil {
			logger.Info("approval notifications without actions", "why", err)
			return notify.PlainPrompter{}
		}
		return pr
	})
	return service.New(service.Options{
		Load: func() (*policy.Loaded, error) { return policy.Load(o.Load) },
		NewExecutor: func(cfg *policy.Config) (*pipeline.Executor, error) {
			// What the settings file could not narrow, once per load.
			for _, w := range cfg.Settings.Warnings() {
				logger.Warn("settings file entry ignored", "entry", w)
			}
			ex, err := Executor(p, cfg, logger, false)
			if err != nil {
				return nil, err
			}
			// Each configuration gets its own trail and notifier: a
			// ticket decided under the previous one still records
			// through it.
			obs := OpenObservers(ctx, p, cfg, true, logger)
			ex.SetObservers(obs, obs.Notifier())
			return ex, nil
		},
		SocketPath:     p.Socket,
		RelayDir:       p.Relay,
		SavedRulesFile: o.Load.SavedRulesFile,
		// A person's approval trusts a workspace under the configuration
		// in force.
		Trust: func(cfg *policy.Config, dir, agent, by string) (string, error) {
			return TrustStore(p).AddFor(dir, agent, by, Guard(p, cfg))
		},
		Untrust:    func(dir string) error { return TrustStore(p).Remove(dir) },
		Workspaces: func(cfg *policy.Config) ([]api.Workspace, error) { return Workspaces(p, cfg) },
		// A waiting approval raises a notification with the platform's
		// actions where it has them.
		ApprovalOpened: func(a api.Approval, answer func(api.AnswerRequest) api.AnswerResponse) {
			go func() {
				if err := prompter().Open(a, answer); err != nil {
					logger.Warn("approval notification", "id", a.ID, "err", err)
				}
			}()
		},
		ApprovalClosed: func(a api.Approval) { go prompter().Close(a.ID) },
		Dashboard:      dashboardFor(ctx, p, logger),
		Doctor:         orDoctor(o.Doctor, p, o.Load),
		Version:        o.Version,
		Logger:         logger,
		Reconcile:      func(ctx context.Context) ([]string, error) { return reconcile(ctx, p) },
		Export: func(ctx context.Context, cfg *policy.Config) error {
			return exportTrail(ctx, p, cfg.Exec.Audit.Export.OTLP, o.Version, logger)
		},
	})
}

// reconcile closes on the user's audit trail what a previous service (or a
// gatehouse exec that is gone) left open, and describes each.
func reconcile(ctx context.Context, p Paths) ([]string, error) {
	if _, err := os.Stat(p.Audit); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	s, err := audit.Open(ctx, audit.Options{Path: p.Audit, Keys: p.Keys, Service: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	closed, err := s.Reconcile(ctx)
	var out []string
	for _, c := range closed {
		out = append(out, fmt.Sprintf("%s %s (%s): %s", c.ID, c.End.Status, c.End.StatusReason, audit.Shorten(c.Command, 60)))
	}
	return out, err
}

// exportTrail sends the user's audit trail to the collector cfg names
// until ctx ends (service/export); its header values come from the
// keychain.
func exportTrail(ctx context.Context, p Paths, cfg policy.OTLPExport, version string, logger *slog.Logger) error {
	s, err := audit.Open(ctx, audit.Options{Path: p.Audit, Keys: p.Keys})
	if err != nil {
		return err
	}
	defer s.Close()
	e, err := export.New(export.Options{
		Source:     s,
		Dial:       func(ctx context.Context) (export.Sender, error) { return export.Dial(ctx, cfg, p.Keys) },
		Encoder:    export.NewEncoder(export.Resource(version), version),
		BatchSize:  cfg.BatchSize,
		Timeout:    time.Duration(cfg.TimeoutSeconds) * time.Second,
		MinBackoff: time.Duration(cfg.RetryInitialBackoffMS) * time.Millisecond,
		MaxBackoff: time.Duration(cfg.RetryMaxBackoffMS) * time.Millisecond,
		Logger:     logger,
	})
	if err != nil {
		return err
	}
	return e.Serve(ctx)
}

// dashboardFor builds the dashboard the service serves: the user's audit
// trail (opened for reading and verifying), the service's own workspaces
// and its doctor (Service.Doctor, as GET /v1/doctor serves it).
func dashboardFor(ctx context.Context, p Paths, logger *slog.Logger) func(*service.Service) service.Dashboard {
	return func(svc *service.Service) service.Dashboard {
		o := dashboard.Options{Service: svc, Logger: logger, Doctor: svc.Doctor, LaunchDir: p.Launch}
		st, err := audit.Open(ctx, audit.Options{Path: p.Audit, Keys: p.Keys})
		if err != nil {
			o.TrailError = err.Error()
		} else {
			o.Trail = st
			context.AfterFunc(ctx, func() { st.Close() })
		}
		d, err := dashboard.New(o)
		if err != nil {
			return brokenDashboard{err}
		}
		return d
	}
}

// brokenDashboard is a dashboard that could not be built: it says why.
type brokenDashboard struct{ err error }

func (b brokenDashboard) Listen(l net.Listener) error {
	l.Close()
	return b.err
}

func (b brokenDashboard) Serve(ctx context.Context) error { return b.err }

func (b brokenDashboard) Login() (api.DashboardLoginResponse, error) {
	return api.DashboardLoginResponse{}, b.err
}
