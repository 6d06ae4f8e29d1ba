package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/daemon"
)

// How the user service runs, chosen once per command: systemd --user on
// Linux where the user has a service manager, launchd on macOS, and on a
// Linux session without systemd --user (a container, WSL, a minimal
// install) a background 'gatehouse serve' that 'gatehouse service start'
// supervises (service_background.go).

// envServiceManager overrides the choice: auto (the default), systemd,
// launchd or none (the background process).
const envServiceManager = "GATEHOUSE_SERVICE_MANAGER"

// The ways the service runs.
const (
	waySystemd    = "systemd"
	wayLaunchd    = "launchd"
	wayBackground = "none"
)

// A userService runs the Gatehouse service one way: *systemService
// (systemd --user, launchd) or *backgroundService. Each message is what
// was done, for a line after "service: ".
type userService interface {
	// Install makes the service start at login; running it again changes
	// nothing.
	Install() (string, error)
	// Uninstall stops the service and removes what Install added; a
	// service never installed is not an error.
	Uninstall() error
	// Start starts the service unless it runs; it returns once it runs.
	Start() (string, error)
	// Stop stops the service; one that does not run is not an error.
	Stop() (string, error)
	// Status says whether the service runs, and which way.
	Status() (string, error)
}

// chooseServiceWay returns how the service runs on goos: value is
// $GATEHOUSE_SERVICE_MANAGER, systemdUser tells why the user has no
// systemd --user (nil when there is one). why says why the background
// process was chosen.
func chooseServiceWay(goos, value string, systemdUser func() error) (way, why string, err error) {
	switch value {
	case "", "auto":
		switch goos {
		case "darwin":
			return wayLaunchd, "", nil
		case "windows":
			return "", "", errors.New("the Gatehouse service does not run on Windows")
		}
		if err := systemdUser(); err != nil {
			return wayBackground, "no systemd --user: " + err.Error(), nil
		}
		return waySystemd, "", nil
	case waySystemd:
		if goos == "darwin" || goos == "windows" {
			return "", "", fmt.Errorf("%s=systemd: there is no systemd on %s", envServiceManager, goos)
		}
		return waySystemd, "", nil
	case wayLaunchd:
		if goos != "darwin" {
			return "", "", fmt.Errorf("%s=launchd: launchd runs only on macOS", envServiceManager)
		}
		return wayLaunchd, "", nil
	case wayBackground:
		if goos == "darwin" || goos == "windows" {
			return "", "", fmt.Errorf("%s=none: the background process runs only on Linux; macOS runs the service with launchd", envServiceManager)
		}
		return wayBackground, envServiceManager + "=none", nil
	}
	return "", "", fmt.Errorf("%s: %q is not one of auto, systemd, launchd, none", envServiceManager, value)
}

// probeSystemdUser returns nil when this user has a systemd --user
// manager to talk to: systemctl is installed and 'systemctl --user
// show-environment' answers (it fails without a user bus, as in most
// containers, WSL without systemd, and sessions that did not log in
// through pam_systemd).
func probeSystemdUser() error {
	path, err := exec.LookPath("systemctl")
	if err != nil {
		return errors.New("systemctl is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--user", "show-environment").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("'systemctl --user show-environment' failed: %s", msg)
	}
	return nil
}

// serviceManager returns this user's service, run the way this host
// allows (or $GATEHOUSE_SERVICE_MANAGER names).
func serviceManager(env *Env) (userService, error) {
	exe, err := selfPath()
	if err != nil {
		return nil, err
	}
	return serviceManagerFor(env, exe)
}

// serviceManagerFor is serviceManager for the gatehouse binary exe.
func serviceManagerFor(env *Env, exe string) (userService, error) {
	home, err := homeDir(env)
	if err != nil {
		return nil, err
	}
	value := strings.TrimSpace(env.Getenv(envServiceManager))
	way, why, err := chooseServiceWay(runtime.GOOS, value, probeSystemdUser)
	if err != nil {
		return nil, withHint(err, "unset "+envServiceManager+", or run 'gatehouse serve' in a terminal")
	}
	if way == wayBackground {
		return newBackgroundService(env, exe, home, why), nil
	}
	m, err := daemon.NewManager(exe, home)
	if errors.Is(err, daemon.ErrNoManager) && way == waySystemd && (value == "" || value == "auto") {
		// systemctl answers, but kardianos finds no systemd to install
		// into (no /run/systemd/system): run it in the background.
		return newBackgroundService(env, exe, home, err.Error()), nil
	}
	if err != nil {
		return nil, withHint(err, "set "+envServiceManager+"=none to run it as a background process, or run 'gatehouse serve' in a terminal")
	}
	return &systemService{m: m, way: way, unit: daemon.UnitPath(runtime.GOOS, home)}, nil
}

// A systemService is the service under the OS's user service manager,
// through kardianos (service/daemon).
type systemService struct {
	m    *daemon.Manager
	way  string
	unit string // the unit's file
}

// what names the unit for messages.
func (s *systemService) what() string {
	if s.way == wayLaunchd {
		return "launchd agent " + s.unit
	}
	return "systemd --user unit " + s.unit
}

func (s *systemService) Install() (string, error) {
	changed, err := s.m.Install()
	if err != nil {
		return "", fmt.Errorf("installing the user service: %w", err)
	}
	if !changed {
		return "already installed (" + s.what() + ")", nil
	}
	return "installed (" + s.what() + ")", nil
}

func (s *systemService) Uninstall() error { return s.m.Uninstall() }

func (s *systemService) Start() (string, error) {
	if err := s.m.Start(); err != nil {
		return "", withHint(fmt.Errorf("starting the user service (%s): %w", s.way, err), "install it first with 'gatehouse service install'")
	}
	return "started (" + s.what() + ")", nil
}

func (s *systemService) Stop() (string, error) {
	if err := s.m.Stop(); err != nil {
		return "", fmt.Errorf("stopping the user service (%s): %w", s.way, err)
	}
	return "stopped (" + s.what() + ")", nil
}

func (s *systemService) Status() (string, error) {
	st, err := s.m.Status()
	if err != nil {
		return "", fmt.Errorf("service status (%s): %w", s.way, err)
	}
	return st + " (" + s.what() + ")", nil
}
