//go:build cgo || !darwin

package tray

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/notify"
)

// Reconnection: the first retry comes at once, then each waits twice the
// last, up to maxBackoff.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
	// pollEvery is how often the status is read from a service that
	// serves no live stream.
	pollEvery = 2 * time.Second
	// callTimeout bounds one call to the service.
	callTimeout = 5 * time.Second
	// recentFetch is how many events are read at connection: decisions
	// and file-tool events are among them, so more than MaxRecent.
	recentFetch = 50
	// portsPoll is how often the session networks are read while an
	// execution runs in one: a server it starts is told by no notice.
	portsPoll = 3 * time.Second
)

// app is the tray apart from its menu binding: the state, the connection
// to the service and what the menu's actions do. Its methods are safe for
// concurrent use.
type app struct {
	opts Options
	log  *slog.Logger

	mu sync.Mutex
	st State

	// changed is signalled (without blocking) when st changes; wake when
	// the connection should be tried again at once.
	changed chan struct{}
	wake    chan struct{}
	// quit ends the tray; the binding sets it.
	quit func()
}

// stoppingPoll is how often the status is read from a service that said
// it is stopping: its live stream may stay open while it winds down (the
// service's shutdown waits for open connections), so the stream does not
// say when it is gone.
const stoppingPoll = 250 * time.Millisecond

func newApp(opts Options) *app {
	if opts.Sender == nil {
		opts.Sender = notify.Desktop{}
	}
	if opts.Open == nil {
		opts.Open = Open
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &app{opts: opts, log: log, changed: make(chan struct{}, 1), wake: make(chan struct{}, 1), quit: func() {}}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// update changes the state under the lock and signals the change.
func (a *app) update(f func(*State)) {
	a.mu.Lock()
	f(&a.st)
	a.mu.Unlock()
	signal(a.changed)
}

// snapshot returns a copy of the state that later updates do not touch.
func (a *app) snapshot() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.st
	s.Approvals = slices.Clone(s.Approvals)
	s.Recent = slices.Clone(s.Recent)
	s.Workspaces = slices.Clone(s.Workspaces)
	s.Sessions = slices.Clone(s.Sessions)
	return s
}

// connect keeps the tray connected until ctx ends: it reads the state,
// follows the live stream, and when the service goes away says so and
// tries again with backoff.
func (a *app) connect(ctx context.Context) {
	backoff := minBackoff
	for ctx.Err() == nil {
		reached, err := a.session(ctx)
		if ctx.Err() != nil {
			return
		}
		a.update(func(s *State) { s.Tried, s.Connected, s.Stopping = true, false, false })
		if reached {
			a.log.Info("the service went away", "err", err)
			backoff = minBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// session reads the service's state and follows its stream until it
// ends. reached says whether the service answered at all.
func (a *app) session(ctx context.Context) (reached bool, err error) {
	c := a.opts.Client
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	st, err := c.Status(cctx)
	if err != nil {
		return false, err
	}
	approvals, aerr := c.Approvals(cctx)
	events, eerr := c.Events(cctx, recentFetch)
	workspaces, werr := c.Workspaces(cctx)
	sessions, perr := c.Ports(cctx)
	for _, err := range []error{aerr, eerr, werr, perr} {
		if err != nil {
			a.log.Warn("reading the service's state", "err", err)
		}
	}
	a.update(func(s *State) {
		s.Tried, s.Connected, s.Stopping = true, true, false
		s.Status, s.Approvals, s.Workspaces, s.Sessions = *st, approvals, workspaces, sessions
		s.SetEvents(events)
	})
	// A service that says it is stopping may keep the stream open while
	// it winds down: the tray stops following it and reads the status
	// until the service is gone.
	sctx, endStream := context.WithCancel(ctx)
	defer endStream()
	go a.pollPorts(sctx)
	stopping := false
	err = c.Stream(sctx, func(n api.StreamNotice) {
		var refetchA, refetchW bool
		a.update(func(s *State) { refetchA, refetchW = s.Apply(n); stopping = s.Stopping })
		if stopping {
			endStream()
			return
		}
		a.refetch(ctx, refetchA, refetchW)
		if RefetchPorts(n) {
			a.refetchPorts(ctx)
		}
	})
	if stopping && ctx.Err() == nil {
		return true, a.untilGone(ctx, a.snapshot().Status)
	}
	if err == nil || errors.Is(err, localapi.ErrLost) || errors.Is(err, localapi.ErrNotRunning) || ctx.Err() != nil {
		return true, err
	}
	// A service that serves no live stream (an older one): read its
	// status every pollEvery instead, until it goes away.
	a.log.Warn("no live stream; reading the status instead", "err", err)
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case <-time.After(pollEvery):
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		st, err := c.Status(cctx)
		cancel()
		if err != nil {
			return true, err
		}
		a.update(func(s *State) { s.Status = *st })
		a.refetch(ctx, st.Approvals != len(a.snapshot().Approvals), st.Workspaces != len(a.snapshot().Workspaces))
		a.refetchPorts(ctx)
	}
}

// pollPorts reads the session networks every portsPoll while an
// execution runs in one, until ctx ends.
func (a *app) pollPorts(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(portsPoll):
		}
		if SessionsRunning(a.snapshot()) {
			a.refetchPorts(ctx)
		}
	}
}

// refetchPorts reads the session networks again.
func (a *app) refetchPorts(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	list, err := a.opts.Client.Ports(ctx)
	if err != nil {
		a.log.Warn("reading the session networks", "err", err)
		return
	}
	a.update(func(s *State) { s.Sessions = list })
}

// untilGone reads the status of the stopping service of was until it no
// longer answers (its error is returned) or another service does.
func (a *app) untilGone(ctx context.Context, was api.Status) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(stoppingPoll):
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		st, err := a.opts.Client.Status(cctx)
		cancel()
		if !StillStopping(was, st, err) {
			return err
		}
	}
}

// refetch reads the pending approvals and the workspaces again, as asked.
func (a *app) refetch(ctx context.Context, approvals, workspaces bool) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if approvals {
		if list, err := a.opts.Client.Approvals(ctx); err == nil {
			a.update(func(s *State) { s.Approvals = list })
		}
	}
	if workspaces {
		if list, err := a.opts.Client.Workspaces(ctx); err == nil {
			a.update(func(s *State) { s.Workspaces = list })
		}
	}
}

// do carries out a click's action.
func (a *app) do(ctx context.Context, act Action) {
	switch act.Kind {
	case ActAnswer:
		a.answer(ctx, act)
	case ActShowEvent:
		s := a.snapshot()
		if ev, ok := s.Event(act.ID); ok {
			a.notify(Card(ev, time.Now()))
		}
	case ActOpen:
		if err := a.opts.Open(act.ID); err != nil {
			a.notify("Gatehouse: cannot open "+Shorten(act.ID, lineWidth), err.Error())
		}
	case ActOpenDashboard:
		a.openDashboard(ctx)
	case ActOpenPort, ActClosePort:
		a.port(ctx, act)
	case ActRunDoctor:
		a.runDoctor(ctx)
	case ActStartService:
		a.startService(ctx)
	case ActQuit:
		a.quit()
	}
}

// answer sends the answer a click made: the entry picked and the
// local-service tick as the item carries them.
func (a *app) answer(ctx context.Context, act Action) {
	id := act.ID
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := a.opts.Client.Answer(ctx, api.AnswerRequest{ID: id, Answer: act.Answer, Entry: act.Entry, LocalService: act.LocalService, By: api.ByTray})
	if err != nil {
		a.notify("Gatehouse: the answer was not taken", err.Error())
		// The request may have been answered elsewhere or expired.
		a.refetch(ctx, true, false)
		return
	}
	a.update(func(s *State) { s.RemoveApproval(id) })
}

// port opens or closes the forward of a session's port the click names,
// through the service, and says where it is or why not.
func (a *app) port(ctx context.Context, act Action) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := api.PortRequest{Agent: act.Agent, SessionID: act.ID, Port: act.Port, By: api.ByTray}
	session := Escape(ShortSession(act.ID))
	if act.Kind == ActOpenPort {
		f, err := a.opts.Client.OpenPort(ctx, req)
		switch {
		case err != nil:
			a.notify(fmt.Sprintf("Gatehouse: port %d was not opened", act.Port), err.Error())
		case f != nil:
			a.notify(fmt.Sprintf("Gatehouse: port %d open on this machine", f.Port),
				fmt.Sprintf("http://127.0.0.1:%d/ reaches port %d of %s's session %s, until you close it or the session ends.", f.HostPort, f.Port, Shorten(f.Agent, 24), session))
		}
	} else if _, err := a.opts.Client.ClosePort(ctx, req); err != nil {
		a.notify(fmt.Sprintf("Gatehouse: the forward of port %d was not closed", act.Port), err.Error())
	}
	a.refetchPorts(ctx)
}

// openDashboard opens the dashboard signed in: the opener gets the
// sign-in page the service wrote for a new login code, never the code
// (an argument list is readable by every local user).
func (a *app) openDashboard(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	l, err := a.opts.Client.DashboardLogin(ctx)
	if err != nil {
		a.notify("Gatehouse: no dashboard", err.Error())
		return
	}
	if l.LaunchFile == "" {
		a.notify("Gatehouse: cannot open the dashboard", "the service wrote no sign-in page; run gatehouse dashboard in a terminal for a login code")
		return
	}
	if err := a.opts.Open(l.LaunchFile); err != nil {
		a.notify("Gatehouse: cannot open the dashboard", err.Error())
	}
}

// reportName is the doctor's report, in Options.ReportDir.
const reportName = "doctor-report.txt"

// runDoctor asks for doctor's report, writes it to a file the menu
// opens, and notifies its summary.
func (a *app) runDoctor(ctx context.Context) {
	a.update(func(s *State) { s.DoctorRunning = true })
	defer a.update(func(s *State) { s.DoctorRunning = false })
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := a.doctorReport(ctx)
	if err != nil {
		a.notify("Gatehouse doctor did not run", err.Error())
		return
	}
	file := filepath.Join(a.opts.ReportDir, reportName)
	if werr := writePrivate(file, []byte(DoctorText(r, time.Now()))); werr != nil {
		a.notify("Gatehouse doctor: the report was not written", werr.Error())
		return
	}
	a.update(func(s *State) { s.Report = file })
	a.notify(DoctorSummary(r, file))
}

// doctorReport is the report the service's API serves; with no service
// running, the same report made by 'Exe doctor --json' (whose checks say
// the service is down first).
func (a *app) doctorReport(ctx context.Context) (*api.DoctorReport, error) {
	r, err := a.opts.Client.Doctor(ctx)
	if !errors.Is(err, localapi.ErrNotRunning) {
		return r, err
	}
	out, err := exec.CommandContext(ctx, a.opts.Exe, "doctor", "--json").Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, err
	}
	var rep api.DoctorReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("reading gatehouse doctor --json: %w", err)
	}
	return &rep, nil
}

// writePrivate writes data to file (mode 0600), creating its directory
// (0700) when missing.
func writePrivate(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".report-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// startService starts the user service as 'gatehouse service start'
// does, then tries the connection at once.
func (a *app) startService(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, a.opts.Exe, "service", "start").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		a.notify("Gatehouse: the service did not start", msg)
		return
	}
	signal(a.wake)
}

func (a *app) notify(title, body string) {
	if err := a.opts.Sender.Send(title, body); err != nil {
		a.log.Warn("notifying", "title", title, "err", err)
	}
}
