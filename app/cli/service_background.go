package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// The service as a background process, where there is no systemd --user.
// 'gatehouse service start' runs 'gatehouse serve --pidfile FILE' in a
// session of its own (setsid: it outlives the terminal), stdin /dev/null,
// its output appended to the log, in /, and returns once the service
// answers on its socket. Files, in the state directory:
//
//	service.lock  the service's lock (service_lock_unix.go): whoever holds it runs
//	service.pid   the pid of the background process 'service start' launched
//	service.log   its output (moved to service.log.1 past 8 MiB)
//
// The lock, not the pidfile, says whether a service runs: a pidfile whose
// pid does not hold the lock is stale (the service was killed, the machine
// restarted, the pid was reused) and no signal is ever sent to it. Login
// starts the service through an XDG autostart entry.

// startWait bounds how long start waits for the service to answer, and
// stop for it to end (the service gives its executions 30 s).
const startWait, stopWait = 45 * time.Second, 45 * time.Second

// maxLog is the log's size past which start moves it aside.
const maxLog = 8 << 20

// serviceLockPath is the service's lock in the state directory.
func serviceLockPath(state string) string { return filepath.Join(state, "service.lock") }

// serviceAutostartPath is the XDG autostart entry that starts the
// background service at login; xdgConfigHome is used when absolute.
func serviceAutostartPath(home, xdgConfigHome string) string {
	config := filepath.Join(home, ".config")
	if xdgConfigHome != "" && filepath.IsAbs(xdgConfigHome) {
		config = xdgConfigHome
	}
	return filepath.Join(config, "autostart", "gatehouse-service.desktop")
}

// serviceDesktopEntry is that entry: it names the background way, so that
// login starts the service the way it was installed.
func serviceDesktopEntry(exe string) []byte {
	return []byte(`[Desktop Entry]
Type=Application
Name=Gatehouse service
Comment=Starts the Gatehouse user service at login (no systemd --user here)
Exec=env ` + envServiceManager + `=none ` + desktopExecArg(exe) + ` service start
Terminal=false
NoDisplay=true
X-GNOME-Autostart-enabled=true
`)
}

// A backgroundService supervises 'gatehouse serve' as a background
// process.
type backgroundService struct {
	exe       string
	why       string // why the service runs this way
	state     string // the state directory
	socket    string
	autostart string
}

func newBackgroundService(env *Env, exe, home, why string) *backgroundService {
	p := servicePaths(env, home)
	return &backgroundService{exe: exe, why: why, state: p.state, socket: p.socket,
		autostart: serviceAutostartPath(home, env.Getenv("XDG_CONFIG_HOME"))}
}

func (b *backgroundService) pidfile() string { return filepath.Join(b.state, "service.pid") }
func (b *backgroundService) logfile() string { return filepath.Join(b.state, "service.log") }

// bgState is what is running now.
type bgState struct {
	held    bool // a service holds the lock: one runs
	holder  int  // its pid (0: in another pid namespace)
	pid     int  // the pidfile's pid (0: no pidfile, or not a pid)
	pidfile bool // there is a pidfile
	answers bool // a service answers on the socket
}

// ours reports whether the running service is the background process the
// pidfile names.
func (st bgState) ours() bool { return st.held && st.pid > 0 && st.pid == st.holder }

// stale reports whether the pidfile names no running service.
func (st bgState) stale() bool { return st.pidfile && !st.ours() }

// staleNote describes a stale pidfile.
func (st bgState) staleNote() string {
	if st.pid > 0 {
		return fmt.Sprintf("a stale pidfile named pid %d, not a running service", st.pid)
	}
	return "a stale pidfile held no pid"
}

func (b *backgroundService) look() (bgState, error) {
	var st bgState
	var err error
	if st.held, st.holder, err = serviceLockHolder(serviceLockPath(b.state)); err != nil {
		return st, err
	}
	raw, err := os.ReadFile(b.pidfile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return st, fmt.Errorf("reading the pidfile: %w", err)
	default:
		st.pidfile = true
		if n, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && n > 0 {
			st.pid = n
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = localapi.NewClient(b.socket).Status(ctx)
	st.answers = err == nil
	return st, nil
}

// removeStale removes a stale pidfile, and says so.
func (b *backgroundService) removeStale(st bgState) (string, error) {
	if !st.stale() {
		return "", nil
	}
	if err := os.Remove(b.pidfile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("removing the stale pidfile: %w", err)
	}
	return "; removed " + st.staleNote(), nil
}

// running describes a service that runs.
func (b *backgroundService) running(st bgState) string {
	if st.ours() {
		return fmt.Sprintf("as a background process (pid %d; %s); log: %s", st.pid, b.why, b.logfile())
	}
	if st.holder > 0 {
		return fmt.Sprintf("(pid %d), not as a background process of 'gatehouse service start' (systemd --user, or a 'gatehouse serve' in a terminal)", st.holder)
	}
	return fmt.Sprintf("(on %s), not as a background process of 'gatehouse service start'", b.socket)
}

func (b *backgroundService) Status() (string, error) {
	st, err := b.look()
	if err != nil {
		return "", err
	}
	var msg string
	switch {
	case st.held && !st.answers:
		msg = "starting " + b.running(st) + "; not answering on " + b.socket + " yet"
	case st.held || st.answers:
		msg = "running " + b.running(st)
	default:
		msg = "stopped (it runs as a background process here: " + b.why + ")"
	}
	if st.stale() {
		msg += "; " + st.staleNote() + " ('gatehouse service start' replaces it)"
	}
	return msg, nil
}

func (b *backgroundService) Start() (string, error) {
	st, err := b.look()
	if err != nil {
		return "", err
	}
	if st.held || st.answers {
		return "already running " + b.running(st), nil
	}
	note, err := b.removeStale(st)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(b.state, 0o700); err != nil {
		return "", err
	}
	if fi, err := os.Stat(b.logfile()); err == nil && fi.Size() > maxLog {
		os.Rename(b.logfile(), b.logfile()+".1")
	}
	logf, err := os.OpenFile(b.logfile(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("opening the service's log: %w", err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "%s gatehouse service start: %s serve (%s)\n", time.Now().UTC().Format(time.RFC3339), b.exe, b.why)
	from, _ := logf.Seek(0, io.SeekEnd)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return "", err
	}
	defer devnull.Close()
	cmd := exec.Command(b.exe, "serve", "--pidfile", b.pidfile())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting %s serve: %w", b.exe, err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(startWait)
	var ended bool // the process ended: another start won the lock, or it failed
	var endErr error
	for {
		select {
		case endErr = <-exited:
			ended = true
		case <-tick.C:
		}
		st, err := b.look()
		if err != nil {
			return "", err
		}
		switch {
		case !ended && st.answers && st.ours() && st.pid == pid:
			return "started " + b.running(st) + note, nil
		case ended && !st.held:
			return "", withHint(fmt.Errorf("the service ended as it started (%v): %s", endErr, logTail(b.logfile(), from)),
				"its whole output is in "+b.logfile())
		case ended && st.answers && (st.ours() || time.Now().After(deadline)):
			// Another start won the lock.
			return "already running " + b.running(st) + note, nil
		case time.Now().After(deadline) && ended:
			return "", withHint(fmt.Errorf("another start's service %s did not answer on %s within %v", b.running(st), b.socket, startWait),
				"'gatehouse service status' says how it runs now")
		case time.Now().After(deadline):
			terminate(pid)
			return "", withHint(fmt.Errorf("the service did not answer on %s within %v; it was stopped", b.socket, startWait),
				"its output is in "+b.logfile())
		}
	}
}

func (b *backgroundService) Stop() (string, error) {
	st, err := b.look()
	if err != nil {
		return "", err
	}
	switch {
	case st.ours():
	case st.held || st.answers:
		return "", withHint(fmt.Errorf("the service running here %s", b.running(st)),
			"stop it where it was started: 'systemctl --user stop gatehouse', or Ctrl-C in the terminal of its 'gatehouse serve'")
	default:
		note, err := b.removeStale(st)
		if err != nil {
			return "", err
		}
		return "not running" + note, nil
	}
	if err := terminate(st.pid); err != nil {
		return "", fmt.Errorf("stopping the service (pid %d): %w", st.pid, err)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(stopWait); ; <-tick.C {
		now, err := b.look()
		if err != nil {
			return "", err
		}
		if !now.held && !now.answers {
			if now.pidfile && now.pid == st.pid {
				os.Remove(b.pidfile())
			}
			return fmt.Sprintf("stopped (background process, pid %d)", st.pid), nil
		}
		if time.Now().After(deadline) {
			return "", withHint(fmt.Errorf("the service (pid %d) still runs %v after SIGTERM", st.pid, stopWait),
				fmt.Sprintf("'kill -KILL %d' ends it; its running commands are then recorded when it next starts", st.pid))
		}
	}
}

// Install makes login start the service: an XDG autostart entry, read by
// desktop sessions (elsewhere, a shell profile's 'gatehouse service
// start' does the same).
func (b *backgroundService) Install() (string, error) {
	content := serviceDesktopEntry(b.exe)
	old, err := readOptional(b.autostart)
	if err != nil {
		return "", err
	}
	if bytes.Equal(old, content) {
		return "already starts at login (" + b.autostart + ")", nil
	}
	if err := writeFileAtomic(b.autostart, content, 0o644); err != nil {
		return "", fmt.Errorf("adding the service's start at login: %w", err)
	}
	return "starts at login through " + b.autostart + " (an XDG autostart entry)", nil
}

// Uninstall stops the background service and removes its start at login.
func (b *backgroundService) Uninstall() error {
	if _, err := b.Stop(); err != nil {
		return err
	}
	if err := os.Remove(b.autostart); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeFileAtomic writes file (and its directory, 0700) through a
// temporary file renamed over it.
func writeFileAtomic(file string, content []byte, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".gatehouse-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	return err
}

// logTail is the last few lines of file written past offset from, on one
// line.
func logTail(file string, from int64) string {
	b, err := os.ReadFile(file)
	if err != nil || int64(len(b)) < from {
		return "no output"
	}
	lines := strings.Split(strings.TrimSpace(string(b[from:])), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	var out strings.Builder
	for _, l := range lines {
		l = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(l), "gatehouse: "), "error: ")
		if l == "" {
			continue
		}
		if out.Len() > 0 {
			if strings.HasSuffix(out.String(), ":") {
				out.WriteString(" ")
			} else {
				out.WriteString("; ")
			}
		}
		out.WriteString(l)
	}
	if out.Len() == 0 {
		return "no output"
	}
	return out.String()
}

// writePidfile writes pid to file, atomically; the returned func removes
// the file if it still names pid.
func writePidfile(file string, pid int) (remove func(), err error) {
	if err := writeFileAtomic(file, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing the pidfile: %w", err)
	}
	return func() {
		if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			os.Remove(file)
		}
	}, nil
}
