// Package daemon adapts the service to the OS's user-level service
// manager through github.com/kardianos/service: a systemd --user unit on
// Linux (Delegate=yes, so the executor can give each command a cgroup), a
// LaunchAgent on macOS. It installs, starts, stops and removes that unit,
// and runs the service under it.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"

	"syscall"
	"time"

	kservice "github.com/kardianos/service"
)

// Name returns the unit's name on goos: the systemd unit gatehouse.service,
// the LaunchAgent label dev.gatehouse.agent.
func Name(goos string) string {
	if goos == "darwin" {
		return "dev.gatehouse.agent"
	}
	return "gatehouse"
}

// UnitPath returns the file the unit is installed as.
func UnitPath(goos, home string) string {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "LaunchAgents", Name(goos)+".plist")
	}
	return filepath.Join(home, ".config", "systemd", "user", Name(goos)+".service")
}

// ErrNoManager means the host has no user service manager Gatehouse can
// install into.
var ErrNoManager = errors.New("no user service manager here (systemd --user on Linux, launchd on macOS)")

func config(exe string) *kservice.Config {
	return &kservice.Config{
		Name:        Name(runtime.GOOS),
		DisplayName: "Gatehouse",
		Description: "Gatehouse: governed shell for AI coding agents",
		Executable:  exe,
		Arguments:   []string{"serve"},
		Option: kservice.KeyValue{
			"UserService":   true,
			"SystemdScript": SystemdUnit,
			"LaunchdConfig": LaunchdPlist,
			"KeepAlive":     true,
			"RunAtLoad":     true,
		},
	}
}

// program runs the service under kardianos: Start launches it and does
// not block; Stop ends it.
type program struct {
	run    func(context.Context) error
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func (p *program) Start(kservice.Service) error {
	go func() {
		p.err = p.run(p.ctx)
		close(p.done)
	}()
	return nil
}

func (p *program) Stop(kservice.Service) error {
	p.cancel()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		return errors.New("the service did not stop within 30 s")
	}
	return nil
}

// Run runs run until SIGTERM or SIGINT (the service manager's stop), until
// ctx ends, or until run returns by itself; run's context ends first in
// the first two cases. It returns run's error.
func Run(ctx context.Context, run func(context.Context) error) error {
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &program{run: run, ctx: pctx, cancel: cancel, done: make(chan struct{})}
	cfg := config("")
	cfg.Option["RunWait"] = func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		defer signal.Stop(sig)
		select {
		case <-sig:
		case <-ctx.Done():
		case <-p.done:
		}
	}
	s, err := kservice.New(p, cfg)
	if err != nil {
		return err
	}
	if err := s.Run(); err != nil {
		return err
	}
	return p.err
}

// A Manager controls the installed unit of the gatehouse binary exe.
type Manager struct {
	s    kservice.Service
	exe  string
	home string
}

// NewManager returns the manager of exe's user service, or ErrNoManager.
func NewManager(exe, home string) (*Manager, error) {
	s, err := kservice.New(&program{}, config(exe))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoManager, err)
	}
	switch p := s.Platform(); {
	case p == "linux-systemd" || p == "darwin-launchd":
	default:
		return nil, fmt.Errorf("%w: found %s", ErrNoManager, p)
	}
	return &Manager{s: s, exe: exe, home: home}, nil
}

// Installed reports whether the unit file exists, and whether it runs
// this manager's binary.
func (m *Manager) Installed() (exists, current bool) {
	b, err := os.ReadFile(UnitPath(runtime.GOOS, m.home))
	if err != nil {
		return false, false
	}
	return true, strings.Contains(string(b), m.exe) || strings.Contains(string(b), strings.ReplaceAll(m.exe, " ", `\x20`))
}

// Install installs the unit; an installed unit of another binary is
// replaced, one of this binary is left as is (changed reports which).
func (m *Manager) Install() (changed bool, err error) {
	exists, current := m.Installed()
	if exists && current {
		return false, nil
	}
	if exists {
		if err := m.s.Uninstall(); err != nil {
			return false, fmt.Errorf("removing the old unit: %w", err)
		}
	}
	if err := m.s.Install(); err != nil {
		return false, err
	}
	return true, nil
}

// Uninstall stops and removes the unit; a missing unit is not an error.
func (m *Manager) Uninstall() error {
	if exists, _ := m.Installed(); !exists {
		return nil
	}
	m.s.Stop()
	return m.s.Uninstall()
}

// Start starts the installed unit.
func (m *Manager) Start() error { return m.s.Start() }

// Stop stops the unit.
func (m *Manager) Stop() error { return m.s.Stop() }

// Status returns "running", "stopped" or "not installed".
func (m *Manager) Status() (string, error) {
	st, err := m.s.Status()
	switch {
	case errors.Is(err, kservice.ErrNotInstalled):
		return "not installed", nil
	case err != nil:
		return "unknown", err
	case st == kservice.StatusRunning:
		return "running", nil
	case st == kservice.StatusStopped:
		return "stopped", nil
	}
	return "unknown", nil
}
