package service

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/relay"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/tickets"
)

// TestMain lets the test binary serve as Gatehouse's sandbox init and as
// the relay ("relay DIR TICKET"), which tests kill.
func TestMain(m *testing.M) {
	sandboxtest.Stage(map[string]func([]string) int{
		"sandbox-init": sandboxinit.Init,
		"sandbox-exec": sandboxinit.Exec,
		"session-net":  sandboxinit.SessionNet,
		"relay": func(args []string) int {
			return relay.Run(context.Background(), args[0], args[1], os.Stdout, os.Stderr)
		},
	})
	os.Exit(m.Run())
}

// fixture is a running service for a fake user.
type fixture struct {
	t      *testing.T
	home   string
	ws     string
	relay  string
	svc    *Service
	c      *localapi.Client
	stop   context.CancelFunc
	done   chan error
	broken atomic.Bool // Load fails (reload tests)
	mutate atomic.Pointer[func(*policy.Config)]
	log    lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fixtureAudit, when set, is the audit log of the services start makes.
var fixtureAudit pipeline.AuditLog

func start(t *testing.T, mutate func(*policy.Config)) *fixture {
	t.Helper()
	return startWith(t, mutate, nil)
}

// startWith is start with opt changing the service's options.
func startWith(t *testing.T, mutate func(*policy.Config), opt func(*Options)) *fixture {
	t.Helper()
	return startExec(t, mutate, opt, nil)
}

// startExec is startWith with pipe changing the executors' options.
func startExec(t *testing.T, mutate func(*policy.Config), opt func(*Options), pipe func(*pipeline.Options)) *fixture {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	dir := sandboxtest.Dir(t)
	f := &fixture{t: t, home: filepath.Join(dir, "home"), relay: filepath.Join(dir, "relay")}
	f.ws = filepath.Join(f.home, "src")
	if err := os.MkdirAll(f.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		f.mutate.Store(&mutate)
	}
	sockDir, err := os.MkdirTemp("", "ghs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	exe, _ := os.Executable()
	o := Options{
		Load: func() (*policy.Loaded, error) {
			if f.broken.Load() {
				return nil, errors.New("config.yaml:3: exec.limits.max_concurrent: 0 is out of range; want 1 to 256")
			}
			l, err := policy.Load(policy.LoadOptions{Home: f.home})
			if err != nil {
				return nil, err
			}
			l.Config.Exec.DefaultCWD = f.ws
			if m := f.mutate.Load(); m != nil {
				(*m)(&l.Config)
			}
			return l, nil
		},
		NewExecutor: func(cfg *policy.Config) (*pipeline.Executor, error) {
			po := pipeline.Options{Home: f.home, InitPath: exe, HostPath: "/usr/local/bin:/usr/bin:/bin"}
			if pipe != nil {
				pipe(&po)
			}
			ex, err := pipeline.New(cfg, po)
			if err == nil && fixtureAudit != nil {
				ex.SetObservers(fixtureAudit, nil)
			}
			return ex, err
		},
		SocketPath: filepath.Join(sockDir, "gatehouse", "s.sock"),
		RelayDir:   f.relay,
		Version:    "test",
		Logger:     slog.New(slog.NewTextHandler(&f.log, nil)),
	}
	if opt != nil {
		opt(&o)
	}
	svc, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	ctx, cancel := context.WithCancel(context.Background())
	f.stop, f.done = cancel, make(chan error, 1)
	go func() { f.done <- svc.Run(ctx) }()
	t.Cleanup(f.shutdown)
	f.c = localapi.NewClient(svc.opts.SocketPath)
	for i := 0; ; i++ {
		if _, err := f.c.Status(context.Background()); err == nil {
			break
		}
		if i == 200 {
			t.Fatal("service did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return f
}

func (f *fixture) shutdown() {
	if f.stop == nil {
		return
	}
	f.stop()
	select {
	case err := <-f.done:
		if err != nil {
			f.t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		f.t.Error("Run did not return")
	}
	f.stop = nil
}

// decide admits command for routing and returns its ticket.
func (f *fixture) decide(command string) *api.DecideResponse {
	f.t.Helper()
	r, err := f.c.Decide(context.Background(), api.DecideRequest{Route: true, Request: api.ExecRequest{
		Command: command, Cwd: f.ws, Agent: "claude-code", Surface: api.SurfaceAgentHook, SessionID: "sess",
	}})
	if err != nil {
		f.t.Fatal(err)
	}
	if r.Decision != "allow" || r.Ticket == "" {
		f.t.Fatalf("decide: %+v", r)
	}
	return r
}

// relayCmd is a relay process for ticket.
func (f *fixture) relayCmd(ticket string) *exec.Cmd {
	exe, _ := os.Executable()
	return exec.Command(exe, "relay", f.relay, ticket)
}

func (f *fixture) runRelay(ticket string) (code int, stdout, stderr string) {
	f.t.Helper()
	cmd := f.relayCmd(ticket)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), o.String(), e.String()
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return 0, o.String(), e.String()
}

// waitEvent polls the recent events until one matches.
func (f *fixture) waitEvent(within time.Duration, match func(api.Event) bool) (api.Event, time.Duration) {
	f.t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		for _, e := range f.svc.Events(0) {
			if match(e) {
				return e, time.Since(start)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("no matching event within %v; events: %+v", within, f.svc.Events(0))
	return api.Event{}, 0
}

func TestRoutedCommandAndReplay(t *testing.T) {
	f := start(t, nil)
	r := f.decide("echo out; echo err >&2; exit 5")
	code, out, errOut := f.runRelay(r.Ticket)
	if code != 5 || out != "out\n" || errOut != "err\n" {
		t.Errorf("relay: exit %d stdout %q stderr %q", code, out, errOut)
	}
	run, _ := f.waitEvent(time.Second, func(e api.Event) bool { return e.ParentID == r.EventID })
	if run.Status != "completed" || *run.ExitCode != 5 || run.Surface != api.SurfaceAgentHook || run.SessionID != "sess" {
		t.Errorf("execution event %+v", run)
	}
	// Replay: one line says the ticket was used; the FIFOs are gone.
	code, out, errOut = f.runRelay(r.Ticket)
	if code != 126 || out != "" || !strings.Contains(errOut, "already used") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("replay: exit %d %q %q", code, out, errOut)
	}
	if end, err := f.c.Redeem(context.Background(), r.Ticket, io.Discard, io.Discard); err != nil || end.Error == nil || end.Error.Kind != api.ErrTicketUsed {
		t.Errorf("replay over the socket: %+v %v", end, err)
	}
	ents, _ := os.ReadDir(f.relay)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".gone") {
			t.Errorf("left in the relay directory: %s", e.Name())
		}
	}
	if fi, _ := os.Stat(f.relay); fi.Mode().Perm() != 0o711 {
		t.Errorf("relay directory mode %v", fi.Mode().Perm())
	}
}

func TestForgedAndTruncatedTickets(t *testing.T) {
	f := start(t, nil)
	r := f.decide("true")
	for _, tc := range []struct{ ticket, want string }{
		{r.Ticket[:len(r.Ticket)-4], "malformed"},
		{tickets.New(), "unknown"},
		{"--help", "malformed"},
	} {
		code, _, errOut := f.runRelay(tc.ticket)
		if code != 126 || !strings.Contains(errOut, tc.want) {
			t.Errorf("relay %q: exit %d %q, want 126 and %q", tc.ticket, code, errOut, tc.want)
		}
	}
	// The real ticket still works after the forgeries.
	if code, _, errOut := f.runRelay(r.Ticket); code != 0 {
		t.Errorf("real ticket: %d %s", code, errOut)
	}
}

func TestTicketExpiresNeverRan(t *testing.T) {
	f := start(t, func(c *policy.Config) { c.Exec.Limits.TicketTTLSeconds = 1 })
	r := f.decide("touch ran")
	ev, _ := f.waitEvent(5*time.Second, func(e api.Event) bool { return e.ParentID == r.EventID })
	if ev.Status != "never_ran" || ev.StatusReason != ReasonTicketExpired || ev.SandboxMode != "" || ev.ExitCode != nil {
		t.Errorf("expired ticket's event %+v", ev)
	}
	code, _, errOut := f.runRelay(r.Ticket)
	if code != 126 || !strings.Contains(errOut, "expired") {
		t.Errorf("relay after expiry: %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "ran")); err == nil {
		t.Error("an expired ticket's command ran")
	}
}

// The relay dies mid-stream (Claude Code's timeout, Ctrl-C): the service
// notices within a second and kills the execution, recorded killed.
func TestRelayKilledMidStream(t *testing.T) {
	f := start(t, nil)
	r := f.decide("echo started; sleep 30; echo never")
	cmd := f.relayCmd(r.Ticket)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "started\n" {
		t.Fatalf("relay printed %q", line)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	ev, took := f.waitEvent(5*time.Second, func(e api.Event) bool { return e.ParentID == r.EventID })
	if ev.Status != "killed" {
		t.Errorf("execution event after the relay died: %+v", ev)
	}
	if took > time.Second {
		t.Errorf("the service took %v to notice the relay's death", took)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	f := start(t, func(c *policy.Config) { c.Exec.Limits.MaxConcurrent = 1 })
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan *api.End, 1)
	go func() {
		end, _ := f.c.Execute(ctx, api.ExecuteRequest{Request: api.ExecRequest{Command: "sleep 30", Agent: "cli", Surface: api.SurfaceCLI}}, io.Discard, io.Discard)
		first <- end
	}()
	for i := 0; f.svc.Status(context.Background()).Running != 1; i++ {
		if i == 500 {
			t.Fatal("the first command did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	end, err := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: "true", Agent: "cli", Surface: api.SurfaceCLI}}, io.Discard, io.Discard)
	if err != nil || end.Exit != 126 || end.Error == nil || end.Error.BlockedBy != ReasonConcurrency || end.Event.StatusReason != ReasonConcurrency || end.Event.Status != "never_ran" {
		t.Errorf("second command: %+v %v", end, err)
	}
	// The client going away kills the first (recorded killed).
	cancel()
	f.waitEvent(10*time.Second, func(e api.Event) bool { return e.Status == "killed" })
	<-first
}

func TestReloadKeepsOldConfigOnError(t *testing.T) {
	f := start(t, nil)
	f.broken.Store(true)
	r, err := f.c.Reload(context.Background())
	if err != nil || r.OK || !strings.Contains(r.Error, "exec.limits.max_concurrent") {
		t.Fatalf("reload of a bad config: %+v %v", r, err)
	}
	st, _ := f.c.Status(context.Background())
	if st.ReloadError == "" || st.Policy.Routing != api.RoutingGovernedShell {
		t.Errorf("status after a failed reload: %+v", st)
	}
	f.decide("true") // still serving
	f.broken.Store(false)
	m := func(c *policy.Config) { c.Policy.BuiltinExecRouting = api.RoutingFramework }
	f.mutate.Store(&m)
	if r, err := f.c.Reload(context.Background()); err != nil || !r.OK {
		t.Fatalf("reload: %+v %v", r, err)
	}
	d, _ := f.c.Decide(context.Background(), api.DecideRequest{Route: true, Request: api.ExecRequest{Command: "true", Cwd: f.ws}})
	if d.Routing != api.RoutingFramework || d.Ticket != "" || d.Decision != "allow" {
		t.Errorf("after reload to framework: %+v", d)
	}
	// A hook that asks for governed_shell still gets a ticket.
	d, _ = f.c.Decide(context.Background(), api.DecideRequest{Route: true, Routing: api.RoutingGovernedShell, Request: api.ExecRequest{Command: "true", Cwd: f.ws}})
	if d.Ticket == "" {
		t.Errorf("governed_shell asked: %+v", d)
	}
}

// Shutdown kills running executions (recorded killed) and records pending
// tickets as never run.
func TestShutdown(t *testing.T) {
	f := start(t, nil)
	pending := f.decide("true")
	got := make(chan *api.End, 1)
	go func() {
		end, _ := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: "echo up; sleep 60", Agent: "cli", Surface: api.SurfaceCLI}}, io.Discard, io.Discard)
		got <- end
	}()
	for f.svc.Status(context.Background()).Running != 1 {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	f.shutdown()
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	var killed, never bool
	for _, e := range f.svc.Events(0) {
		killed = killed || e.Status == "killed" && e.Surface == api.SurfaceCLI
		never = never || e.ParentID == pending.EventID && e.Status == "never_ran" && e.StatusReason == ReasonServiceStop
	}
	if !killed || !never {
		t.Errorf("events after shutdown (killed %v, never_ran %v): %+v", killed, never, f.svc.Events(0))
	}
	select {
	case end := <-got:
		if end != nil && end.Exit != 137 {
			t.Errorf("the running command ended %+v", end)
		}
	case <-time.After(5 * time.Second):
		t.Error("the client was not answered")
	}
}

// Another user gets nothing: the socket's directory keeps them out, and
// should its modes be opened up, the peer check still does.
func TestOtherUIDGetsNothing(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl missing")
	}
	f := start(t, nil)
	sock := f.svc.opts.SocketPath
	asNobody := func() (int, string) {
		cmd := exec.Command(curl, "-sS", "--max-time", "5", "--unix-socket", sock, "http://x"+api.PathStatus)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	if code, out := asNobody(); code == 0 || strings.Contains(out, "version") {
		t.Errorf("uid 65534 reached the service: %s", out)
	}
	// Open the directory and the socket: the peer check must refuse.
	os.Chmod(filepath.Dir(sock), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(sock)), 0o755)
	os.Chmod(sock, 0o666)
	code, out := asNobody()
	if code == 0 || strings.Contains(out, "version") {
		t.Errorf("uid 65534 reached the service through an open socket: exit %d %s", code, out)
	}
	if !strings.Contains(f.log.String(), "refused a connection from another user") {
		t.Errorf("the peer check did not refuse uid 65534; log:\n%s", f.log.String())
	}
	if _, err := f.c.Status(context.Background()); err != nil {
		t.Errorf("the owner was refused: %v", err)
	}
}

func TestExecuteStreamsAndMatchesPipeline(t *testing.T) {
	f := start(t, nil)
	var out, errb bytes.Buffer
	end, err := f.c.Execute(context.Background(), api.ExecuteRequest{
		Request:    api.ExecRequest{Command: "cat; echo e >&2; exit 3", Agent: "cli", Surface: api.SurfaceCLI},
		StdinBytes: []byte("in\xff\n"),
	}, &out, &errb)
	// The byte that is not UTF-8 arrives escaped (exec.output.terminal_controls).
	if err != nil || end.Exit != 3 || out.String() != `in\xff`+"\n" || errb.String() != "e\n" {
		t.Errorf("execute: %+v %v %q %q", end, err, out.String(), errb.String())
	}
	if end.Event.ParentID != "" || end.Event.Status != "completed" || end.Event.SandboxMode == "" {
		t.Errorf("event %+v", end.Event)
	}
	// Denied: nothing ran, the reason comes back.
	end, _ = f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: "touch x", Cwd: "/etc"}}, io.Discard, io.Discard)
	if end.Exit != 126 || end.Error == nil || end.Error.BlockedBy != pipeline.DenyCwdOutside {
		t.Errorf("denied: %+v", end)
	}
	// Bad argument.
	end, _ = f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: " "}}, io.Discard, io.Discard)
	if end.Exit != 2 || end.Error == nil || end.Error.Kind != api.ErrArgument {
		t.Errorf("bad argument: %+v", end)
	}
	st, _ := f.c.Status(context.Background())
	if st.Version != "test" || st.Sandbox.Mode == "" || st.Policy.MaxConcurrent != 8 {
		t.Errorf("status %+v", st)
	}
	evs, _ := f.c.Events(context.Background(), 1)
	if len(evs) != 1 || evs[0].Decision != "deny" {
		t.Errorf("events: %s", fmt.Sprint(evs))
	}
}

// File tools are refused the relay and socket directories and the
// deny-read set, and writes outside the roots; each decision is an event.
func TestFileAccess(t *testing.T) {
	f := start(t, nil)
	ask := func(access string, search bool, paths ...string) *api.DecideResponse {
		t.Helper()
		r, err := f.c.FileAccess(context.Background(), api.FileAccessRequest{
			Tool: "Read", Access: access, Search: search, Paths: paths, Cwd: f.ws,
			Agent: "claude-code", Surface: api.SurfaceAgentHook, SessionID: "sess",
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		access string
		search bool
		path   string
		code   string
	}{
		{api.FileRead, false, filepath.Join(f.home, ".ssh", "id"), DenyPathDenied},
		{api.FileRead, false, filepath.Join(f.relay, "x"), DenyPathDenied},
		{api.FileRead, false, filepath.Join(filepath.Dir(f.svc.opts.SocketPath), "s.sock"), DenyPathDenied},
		// An execution's credential files, whichever agent it was for.
		{api.FileRead, false, filepath.Join(broker.DefaultDir(""), "0123abcd", "token"), DenyPathDenied},
		{api.FileRead, false, "/proc/self/environ", DenyPathDenied},
		{api.FileRead, true, f.home, DenyPathDenied},
		{api.FileWrite, false, filepath.Join(f.home, "x"), DenyPathOutsideWorkspace},
		{api.FileWrite, false, "new/file.go", ""},
		{api.FileRead, false, "/etc/hosts", ""},
	} {
		r := ask(tc.access, tc.search, tc.path)
		if r.BlockedBy != tc.code || (tc.code == "") != (r.Decision == "allow") || r.EventID == "" {
			t.Errorf("%s %s: %+v, want %q", tc.access, tc.path, r, tc.code)
			continue
		}
		ev, _ := f.waitEvent(time.Second, func(e api.Event) bool { return e.ID == r.EventID })
		if ev.ActionType != "file:"+tc.access || ev.Decision != r.Decision || ev.Tool != "Read" || len(ev.Paths) != 1 || ev.SessionID != "sess" {
			t.Errorf("event %+v", ev)
		}
	}
	if r := ask("exec", false, "/x"); r.Decision != "deny" || r.BlockedBy != "invalid_argument" {
		t.Errorf("bad access: %+v", r)
	}
}

// A denial's remedy travels as its own field on both surfaces, not glued
// onto the reason.
func TestDenialCarriesHint(t *testing.T) {
	f := start(t, nil)
	const cmd = `true <<<"${credential:deploy_key}"`
	const hint = `an operator can add "claude-code" to policy.credential_grants.deploy_key`
	d, err := f.c.Decide(context.Background(), api.DecideRequest{Route: true, Request: api.ExecRequest{
		Command: cmd, Cwd: f.ws, Agent: "claude-code", Surface: api.SurfaceAgentHook, SessionID: "sess"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Decision != "deny" || d.BlockedBy != "credential_not_granted" || d.Hint != hint || strings.Contains(d.Reason, "policy.credential_grants") {
		t.Errorf("decide: %+v", d)
	}
	end, _ := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{Command: cmd, Agent: "claude-code"}}, io.Discard, io.Discard)
	if end.Error == nil || end.Error.Kind != api.ErrDenied || end.Error.Hint != hint || strings.Contains(end.Error.Message, "policy.credential_grants") {
		t.Errorf("execute: %+v", end.Error)
	}
}

// The service keeps warm sandboxes for the configuration in force; a
// reload replaces every one, and shutdown ends them.
func TestReloadReplacesWarmSandboxes(t *testing.T) {
	f := start(t, nil)
	ready := func() api.PoolStatus {
		t.Helper()
		for i := 0; ; i++ {
			st, err := f.c.Status(context.Background())
			if err == nil && st.WarmPool.Ready == st.WarmPool.Size {
				return st.WarmPool
			}
			if i == 500 {
				t.Fatalf("warm pool never filled: %+v %v", st, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if p := ready(); p.Size != 2 || p.Agent != "claude-code" || p.IdleRSS <= 0 {
		t.Errorf("warm pool %+v", p)
	}
	before := bwrapChildren(t)
	if len(before) != 2 {
		t.Fatalf("bwrap children %v, want the 2 warm sandboxes", before)
	}
	if r, err := f.c.Reload(context.Background()); err != nil || !r.OK {
		t.Fatalf("reload: %+v %v", r, err)
	}
	ready()
	after := bwrapChildren(t)
	for _, p := range before {
		if slices.Contains(after, p) {
			t.Errorf("warm sandbox %d survived the reload (after: %v)", p, after)
		}
	}
	if len(after) != 2 {
		t.Errorf("bwrap children after the reload %v, want 2 new ones", after)
	}
	f.shutdown()
	if left := bwrapChildren(t); len(left) != 0 {
		t.Errorf("warm sandboxes left after shutdown: %v", left)
	}
}

// bwrapChildren are the pids of this process's bwrap children.
func bwrapChildren(t *testing.T) []int {
	t.Helper()
	var out []int
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		for _, f := range strings.Fields(string(b)) {
			comm, _ := os.ReadFile("/proc/" + f + "/comm")
			if strings.TrimSpace(string(comm)) == "bwrap" {
				pid, _ := strconv.Atoi(f)
				out = append(out, pid)
			}
		}
	}
	slices.Sort(out)
	return out
}

// The audit export runs for the configuration in force: started once the
// service holds its socket, left alone by a reload that does not change
// it, restarted by one that does, stopped by one that turns it off and by
// shutdown.
func TestExportFollowsConfiguration(t *testing.T) {
	type change struct {
		started  bool
		endpoint string
	}
	changes := make(chan change, 16)
	endpoint := func(e string) func(*policy.Config) {
		return func(c *policy.Config) { c.Exec.Audit.Export.OTLP.Endpoint = e }
	}
	f := startWith(t, endpoint("http://127.0.0.1:4318"), func(o *Options) {
		o.Export = func(ctx context.Context, cfg *policy.Config) error {
			e := cfg.Exec.Audit.Export.OTLP.Endpoint
			changes <- change{true, e}
			<-ctx.Done()
			changes <- change{false, e}
			return nil
		}
	})
	next := func(want change) {
		t.Helper()
		select {
		case got := <-changes:
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no change; want %+v", want)
		}
	}
	none := func() {
		t.Helper()
		select {
		case got := <-changes:
			t.Fatalf("unexpected %+v", got)
		case <-time.After(100 * time.Millisecond):
		}
	}
	reload := func(m func(*policy.Config)) {
		t.Helper()
		f.mutate.Store(&m)
		if r, err := f.c.Reload(context.Background()); err != nil || !r.OK {
			t.Fatalf("reload: %+v %v", r, err)
		}
	}
	next(change{true, "http://127.0.0.1:4318"})
	reload(func(c *policy.Config) {
		endpoint("http://127.0.0.1:4318")(c)
		c.Policy.ExecTimeoutSeconds = 60 // another section changed
	})
	none()
	reload(endpoint("http://127.0.0.1:4319"))
	next(change{false, "http://127.0.0.1:4318"})
	next(change{true, "http://127.0.0.1:4319"})
	reload(endpoint(""))
	next(change{false, "http://127.0.0.1:4319"})
	none()
	reload(endpoint("http://[::1]:4318"))
	next(change{true, "http://[::1]:4318"})
	f.shutdown()
	next(change{false, "http://[::1]:4318"})
}
