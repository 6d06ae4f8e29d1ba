package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/notify"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// envDiskFull names the directory the re-executed test runs in, inside its
// own mount namespace.
const envDiskFull = "GATEHOUSE_TEST_DISKFULL_DIR"

// With the state directory full, a command that cannot be put on the
// record does not run: it is denied audit_unavailable and a notification
// says why. Under policy.audit_required false it runs, and the warning
// comes back with it. Every command that ran is on the record, or its
// caller was told.
//
// The state directory is a small tmpfs in a private mount namespace: the
// test runs itself again under unshare (-m as root, -rm otherwise).
func TestDiskFull(t *testing.T) {
	if dir := os.Getenv(envDiskFull); dir != "" {
		diskFull(t, dir)
		return
	}
	dir := sandboxtest.Dir(t)
	args := []string{"-m", "--propagation", "private"}
	if os.Getuid() != 0 {
		args = append([]string{"-r"}, args...)
	}
	exe, _ := os.Executable()
	args = append(args, exe, "-test.run=^TestDiskFull$", "-test.v", "-test.count=1")
	if probe := exec.Command("unshare", append(args[:len(args)-4:len(args)-4], "true")...); probe.Run() != nil {
		if sandboxtest.Required() {
			t.Fatal("REQUIRE_SANDBOX=1 but unshare cannot make a mount namespace here")
		}
		t.Skip("unshare cannot make a mount namespace here")
	}
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(), envDiskFull+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("disk full: checked")) {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// auditNotes records audit_unavailable notifications.
type auditNotes struct {
	mu      sync.Mutex
	denied  int
	ranWarn int
}

func (*auditNotes) SandboxDegraded(notify.Degraded) bool      { return false }
func (*auditNotes) OutputRedacted(string, []string, int) bool { return false }
func (n *auditNotes) AuditUnavailable(_, cause string, ran bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ran {
		n.ranWarn++
	} else {
		n.denied++
	}
	return true
}

func diskFull(t *testing.T, dir string) {
	state := filepath.Join(dir, "state")
	home := filepath.Join(dir, "home")
	ws := filepath.Join(home, "src")
	for _, d := range []string{state, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount("tmpfs", state, "tmpfs", 0, "size=256k,mode=0700"); err != nil {
		t.Fatalf("mounting a tmpfs over the state directory: %v", err)
	}
	defer syscall.Unmount(state, syscall.MNT_DETACH)

	store, err := audit.Open(context.Background(), audit.Options{Path: filepath.Join(state, audit.FileName), Keys: keyring.NewMemory(), Service: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	notes := &auditNotes{}
	required := true
	var mu sync.Mutex
	exe, _ := os.Executable()
	svc, err := New(Options{
		Load: func() (*policy.Loaded, error) {
			l, err := policy.Load(policy.LoadOptions{Home: home})
			if err != nil {
				return nil, err
			}
			c := &l.Config
			c.Exec.DefaultCWD = ws
			c.Exec.Sandbox.Backend, c.Policy.SandboxRequired = "none", false
			c.Exec.Audit.OutputMaxBytes = 4096
			mu.Lock()
			c.Policy.AuditRequired = required
			mu.Unlock()
			return l, nil
		},
		NewExecutor: func(cfg *policy.Config) (*pipeline.Executor, error) {
			ex, err := pipeline.New(cfg, pipeline.Options{Home: home, InitPath: exe, HostPath: "/usr/local/bin:/usr/bin:/bin"})
			if err == nil {
				ex.SetObservers(store, notes)
			}
			return ex, err
		},
		SocketPath: filepath.Join(dir, "s.sock"),
		RelayDir:   filepath.Join(dir, "relay"),
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(tag string) *api.End {
		// Output the audit would keep, so that each record needs room.
		cmd := fmt.Sprintf("echo %s >> ran; head -c 2000 /dev/zero | tr '\\0' x", tag)
		return svc.Execute(context.Background(), api.ExecRequest{Command: cmd, Agent: "cli", Surface: api.SurfaceCLI},
			sandbox.Streams{Stdout: io.Discard, Stderr: io.Discard})
	}
	if end := run("room"); end.Error != nil || end.Warning != "" {
		t.Fatalf("with room: %+v %+v", end.Error, end)
	}

	// Fill the state directory (bounded: the tmpfs is 256 KiB).
	filler, err := os.OpenFile(filepath.Join(state, "filler"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for i := 0; i < 128; i++ {
		if _, err := filler.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for i := 0; i < 64; i++ { // the last partial page
		if _, err := filler.Write(chunk[:64]); err != nil {
			break
		}
	}
	filler.Close()

	// audit_required (the default): nothing runs off the record.
	denied := 0
	for range 20 {
		end := run("required")
		switch {
		case end.Error != nil && end.Error.BlockedBy == pipeline.DenyAuditUnavailable:
			denied++
			if end.Exit != api.ExitCannotRun || !strings.Contains(end.Error.Message, "could not be written") {
				t.Errorf("denial %+v", end.Error)
			}
		case end.Error != nil:
			t.Fatalf("unexpected error %+v", end.Error)
		}
	}
	if denied == 0 {
		t.Fatal("the full state directory denied nothing: the test did not fill it")
	}
	if notes.denied == 0 {
		t.Error("no audit_unavailable notification for the denials")
	}

	// audit_required false: it runs, and the caller is told.
	mu.Lock()
	required = false
	mu.Unlock()
	if r := svc.Reload(); !r.OK {
		t.Fatal(r.Error)
	}
	warned := 0
	for range 10 {
		end := run("optional")
		if end.Error != nil {
			t.Fatalf("under audit_required false: %+v", end.Error)
		}
		if end.Warning != "" {
			warned++
			if !strings.Contains(end.Warning, "audit record") {
				t.Errorf("warning %q", end.Warning)
			}
		}
	}
	// A framework-routed decision (the agent runs it itself) is told too.
	resp, err := svc.Decide(context.Background(), api.DecideRequest{Request: api.ExecRequest{Command: "true", Agent: "claude-code", Surface: api.SurfaceAgentHook}, Routing: api.RoutingFramework})
	if err != nil || resp.Decision != "allow" || resp.Warning == "" {
		t.Errorf("framework decision on a full disk: %v %+v", err, resp)
	}

	// Room again: what ran is on the record, or its caller was told.
	if err := os.Remove(filepath.Join(state, "filler")); err != nil {
		t.Fatal(err)
	}
	ran, _ := os.ReadFile(filepath.Join(ws, "ran"))
	count := func(tag string) int { return strings.Count(string(ran), tag+"\n") }
	started := map[string]int{}
	open, err := store.Unfinished(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := store.Verify(context.Background())
	if err != nil || rep.Problem != nil {
		t.Fatalf("verify after the disk was full: %v %+v", err, rep.Problem)
	}
	rows, err := store.List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ended := map[string]bool{}
	for _, e := range rows {
		ended[e.Event.ID] = true
		for _, tag := range []string{"required", "optional"} {
			if strings.Contains(e.Command, "echo "+tag+" ") && e.Event.Status == "completed" {
				started[tag]++
			}
		}
	}
	for _, o := range open {
		for _, tag := range []string{"required", "optional"} {
			if strings.Contains(o.Command, "echo "+tag+" ") {
				started[tag]++
			}
		}
	}
	if got, want := count("required"), 20-denied; got != want {
		t.Errorf("%d commands ran under audit_required, want %d (20 minus %d denied)", got, want, denied)
	}
	if count("required") != started["required"] {
		t.Errorf("under audit_required %d commands ran but %d are on the record", count("required"), started["required"])
	}
	if count("optional") != 10 || started["optional"]+warned < 10 || warned == 0 {
		t.Errorf("under audit_required false: %d ran, %d on the record, %d warned", count("optional"), started["optional"], warned)
	}
	fmt.Printf("disk full: checked: %d denied, %d warned, %d open on the record\n", denied, warned, len(open))
}
