// Package socket creates and dials the service's unix socket: a 0600
// socket in a 0700 directory, whose listener hands over only connections
// from the service's own user (the peer's uid is checked with SO_PEERCRED
// on Linux, getpeereid on macOS).
package socket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/service/dirs"
)

// Name is the socket's file name in its directory.
const Name = "gatehouse.sock"

// maxPath is the longest socket path every supported OS accepts
// (sun_path is 104 bytes on macOS, 108 on Linux, NUL included).
const maxPath = 103

// ErrUnsupported is returned where the platform has no unix sockets with
// peer credentials (Windows).
var ErrUnsupported = errors.New("the Gatehouse service socket is not supported on this platform")

// Dir returns the directory of the service socket: on darwin
// ~/Library/Application Support/Gatehouse/run; elsewhere
// $XDG_RUNTIME_DIR/gatehouse, or stateDir/run when XDG_RUNTIME_DIR is unset
// or relative. It is pure: the caller passes the environment.
func Dir(goos, home, xdgRuntimeDir, stateDir string) string {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Gatehouse", "run")
	}
	if xdgRuntimeDir != "" && filepath.IsAbs(xdgRuntimeDir) {
		return filepath.Join(xdgRuntimeDir, "gatehouse")
	}
	return filepath.Join(stateDir, "run")
}

// Listen creates path's directory (mode 0700; an existing one must belong
// to this user and is narrowed to 0700), replaces a stale socket, and
// listens on path with mode 0600. Accept returns only connections whose
// peer runs as this user; others are closed unanswered and logged.
func Listen(path string, logger *slog.Logger) (net.Listener, error) {
	if len(path) > maxPath {
		return nil, fmt.Errorf("socket path %s is %d bytes, longer than the %d a unix socket allows; set XDG_RUNTIME_DIR to a shorter directory", path, len(path), maxPath)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Dir(path)
	if err := PrivateDir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	l, err := listen(path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("securing the socket: %w", err)
	}
	return &peerListener{Listener: l, uid: os.Getuid(), logger: logger}, nil
}

// PrivateDir creates dir (and its parents, 0700) when missing and makes
// sure it belongs to this user with exactly mode perm.
func PrivateDir(dir string, perm fs.FileMode) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d); remove it", dir, uid, os.Getuid())
	}
	if fi.Mode().Perm() != perm {
		if err := os.Chmod(dir, perm); err != nil {
			return fmt.Errorf("setting the mode of %s: %w", dir, err)
		}
	}
	return nil
}

// removeStale removes a socket left by a service that is gone; a live one
// is an error.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; remove it", path)
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return fmt.Errorf("another gatehouse service is already listening on %s", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	return nil
}

// Dial connects to the service socket at path.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return dial(ctx, &d, path)
}

// NotRunning reports whether err from Dial means no service listens there
// (no socket, or a stale one).
func NotRunning(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

type peerListener struct {
	net.Listener
	uid    int
	logger *slog.Logger
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := PeerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		if err != nil {
			l.logger.Warn("refused a connection whose peer could not be identified", "err", err)
		} else {
			l.logger.Warn("refused a connection from another user", "peer_uid", uid)
		}
		c.Close()
	}
}

// Paths are where the service and its clients meet.
type Paths struct {
	State  string // the state directory
	Socket string // the admission API's socket
	Relay  string // the relays' FIFO directory
}

// Locate returns this user's Paths: getenv reads XDG_STATE_HOME,
// XDG_RUNTIME_DIR and GATEHOUSE_SOCKET (which names the socket itself).
func Locate(goos, home string, getenv func(string) string) Paths {
	state := dirs.State(goos, home, getenv("XDG_STATE_HOME"))
	p := Paths{State: state, Relay: filepath.Join(state, "relay")}
	if s := getenv("GATEHOUSE_SOCKET"); s != "" {
		p.Socket = s
	} else {
		p.Socket = filepath.Join(Dir(goos, home, getenv("XDG_RUNTIME_DIR"), state), Name)
	}
	return p
}
