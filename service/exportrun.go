package service

import (
	"context"
	"reflect"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// exportRun is the audit export in progress: the section it runs for,
// and how to stop it.
type exportRun struct {
	cfg    policy.AuditExport
	cancel context.CancelFunc
	done   chan struct{}
}

// startExport runs the audit export for g's configuration
// (Options.Export), restarting it when the section changed since the
// last start, stopping it when the section turns it off. It does nothing
// once the service is closing.
func (s *Service) startExport(g *generation) {
	if s.opts.Export == nil {
		return
	}
	cfg := g.loaded.Config.Exec.Audit.Export
	s.exportMu.Lock()
	defer s.exportMu.Unlock()
	if cur := s.export; cur != nil {
		if reflect.DeepEqual(cur.cfg, cfg) {
			return
		}
		cur.cancel()
		<-cur.done
		s.export = nil
		s.log.Info("audit export stopped for the new configuration")
	}
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing || !cfg.OTLP.Enabled() {
		return
	}
	ctx, cancel := context.WithCancel(s.root)
	run := &exportRun{cfg: cfg, cancel: cancel, done: make(chan struct{})}
	s.export = run
	gcfg := &g.loaded.Config
	go func() {
		defer close(run.done)
		s.log.Info("audit export to the collector", "endpoint", cfg.OTLP.Endpoint, "protocol", cfg.OTLP.Protocol)
		if err := s.opts.Export(ctx, gcfg); err != nil {
			s.log.Error("audit export stopped", "err", err)
		}
	}()
}

// stopExport stops the audit export and waits for it.
func (s *Service) stopExport() {
	s.exportMu.Lock()
	defer s.exportMu.Unlock()
	if s.export != nil {
		s.export.cancel()
		<-s.export.done
		s.export = nil
	}
}
