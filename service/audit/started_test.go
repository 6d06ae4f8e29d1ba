package audit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// started returns the started form of a test record: no status yet.
func startedRecord(id string) Record {
	r := testRecord(id, time.Now())
	r.Event.Status, r.Event.ExitCode, r.Event.DurationMS = "", nil, 0
	r.Stdout = nil
	return r
}

// A started execution with no end is open until its end is appended; the
// service's open executions are closed by Reconcile as killed
// (service_crashed), and Verify tells the two states apart.
func TestStartedReconcile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	s := openStore(t, path, keys, func(o *Options) { o.Service = true })

	// One execution that ends, one the service was running when it died.
	for _, id := range []string{hexID(1), hexID(2)} {
		if err := s.Started(ctx, startedRecord(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(ctx, testRecord(hexID(1), time.Now())); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || rep.Problem != nil {
		t.Fatalf("verify: %v %v", err, rep.Problem)
	}
	if len(rep.Open) != 1 || rep.Open[0].ID != hexID(2) || !rep.Open[0].Service || rep.Open[0].PID != os.Getpid() ||
		rep.Open[0].Command != "echo "+hexID(2) || rep.Reconciled != 0 {
		t.Fatalf("open %+v, reconciled %d; want %s open", rep.Open, rep.Reconciled, hexID(2))
	}
	if rep.Rows != 3 || rep.KeySource != KeySourceKeychain || rep.KeyLocation == "" {
		t.Errorf("rows %d key %q %q", rep.Rows, rep.KeySource, rep.KeyLocation)
	}
	// Started rows are in the chain: changing one is found.
	if _, err := s.w.Exec("UPDATE events SET command = 'echo other' WHERE kind = 'started' AND parent_id = ?", hexID(2)); err != nil {
		t.Fatal(err)
	}
	if rep, _ := s.Verify(ctx); rep.Problem == nil || rep.Problem.Kind != ProblemChanged {
		t.Fatalf("a changed started row: %+v", rep.Problem)
	}
	if _, err := s.w.Exec("UPDATE events SET command = ? WHERE kind = 'started' AND parent_id = ?", "echo "+hexID(2), hexID(2)); err != nil {
		t.Fatal(err)
	}
	// Not listed as events.
	if all, _ := s.List(ctx, Filter{}); len(all) != 1 {
		t.Errorf("list shows %d events, want 1", len(all))
	}

	closed, err := s.Reconcile(ctx)
	if err != nil || len(closed) != 1 {
		t.Fatalf("reconcile: %v %+v", err, closed)
	}
	e, err := s.Get(ctx, hexID(2))
	if err != nil {
		t.Fatal(err)
	}
	if e.Event.Status != "killed" || e.Event.StatusReason != ReasonServiceCrashed || e.Event.ExitCode != nil ||
		!strings.Contains(e.Event.Reason, "ended abruptly") || e.Command != "echo "+hexID(2) {
		t.Errorf("reconciled event %+v", e.Event)
	}
	rep, err = s.Verify(ctx)
	if err != nil || rep.Problem != nil || len(rep.Open) != 0 || rep.Reconciled != 1 {
		t.Fatalf("after reconcile: %v %v open %+v reconciled %d", err, rep.Problem, rep.Open, rep.Reconciled)
	}
	// A second start finds nothing left.
	if closed, err := s.Reconcile(ctx); err != nil || len(closed) != 0 {
		t.Errorf("second reconcile: %v %+v", err, closed)
	}
}

// A routed decision without its execution is open; Reconcile records its
// execution never_ran, linked to it.
func TestReconcileRouted(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "audit.db"), keyring.NewMemory(), func(o *Options) { o.Service = true })
	dec := func(id string, routed bool) {
		r := testRecord(id, time.Now())
		r.Event.Status, r.Event.ExitCode, r.Event.Routed = "", nil, routed
		if err := s.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	dec(hexID(1), true)  // its ticket died with the service
	dec(hexID(2), false) // framework routing: the agent ran it
	dec(hexID(3), true)  // redeemed
	ex := testRecord(hexID(4), time.Now())
	ex.Event.ParentID = hexID(3)
	if err := s.Append(ctx, ex); err != nil {
		t.Fatal(err)
	}
	open, err := s.Unfinished(ctx)
	if err != nil || len(open) != 1 || open[0].ID != hexID(1) || open[0].Kind != UnfinishedRouted {
		t.Fatalf("open %+v %v", open, err)
	}
	closed, err := s.Reconcile(ctx)
	if err != nil || len(closed) != 1 {
		t.Fatalf("reconcile: %v %+v", err, closed)
	}
	kids, _ := s.Children(ctx, hexID(1))
	if len(kids) != 1 || kids[0].Status != "never_ran" || kids[0].StatusReason != ReasonServiceCrashed {
		t.Errorf("children %+v", kids)
	}
	if open, _ := s.Unfinished(ctx); len(open) != 0 {
		t.Errorf("still open: %+v", open)
	}
}

// An in-process gatehouse's execution is left open while its process
// lives, and closed (process_crashed) once it is gone.
func TestReconcileOtherProcess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	s := openStore(t, path, keys)
	if err := s.Started(ctx, startedRecord(hexID(1))); err != nil {
		t.Fatal(err)
	}
	// This process is alive: the service leaves it alone.
	svc := openStore(t, path, keys, func(o *Options) { o.Service = true })
	if closed, err := svc.Reconcile(ctx); err != nil || len(closed) != 0 {
		t.Fatalf("reconciled a running execution: %v %+v", err, closed)
	}
	// A process that is gone: its pid, reaped.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := cmd.Process.Pid
	if _, err := s.w.Exec(`UPDATE events SET event = json_set(event, '$.pid', ?) WHERE kind = 'started'`, gone); err != nil {
		t.Fatal(err)
	}
	// (The row no longer matches its HMAC; Reconcile reads, it does not
	// verify.)
	closed, err := svc.Reconcile(ctx)
	if err != nil || len(closed) != 1 || closed[0].End.StatusReason != ReasonProcessCrashed {
		t.Fatalf("reconcile: %v %+v", err, closed)
	}
}

// Without a keychain the key goes to a 0600 file beside the database; the
// trail says so, and reopening reads it back.
func TestKeyFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	none := &keyring.Memory{Err: &keyring.UnavailableError{Cause: "no D-Bus session bus", Hint: "start one"}}
	s := openStore(t, path, none)
	if err := s.Started(ctx, startedRecord(hexID(1))); err != nil {
		t.Fatalf("started without a keychain: %v", err)
	}
	if err := s.Append(ctx, testRecord(hexID(1), time.Now())); err != nil {
		t.Fatal(err)
	}
	src, loc, err := s.KeySource(ctx)
	if err != nil || src != KeySourceFile || filepath.Dir(loc) != dir || !strings.HasPrefix(filepath.Base(loc), KeyFilePrefix) {
		t.Fatalf("key source %q %q %v", src, loc, err)
	}
	fi, err := os.Stat(loc)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	s.Close()

	s2 := openStore(t, path, none)
	rep, err := s2.Verify(ctx)
	if err != nil || rep.Problem != nil || rep.KeySource != KeySourceFile || rep.KeyLocation != loc || len(rep.Open) != 0 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	// A wider mode is narrowed on read.
	os.Chmod(loc, 0o644)
	s3 := openStore(t, path, none)
	if err := s3.Append(ctx, testRecord(hexID(2), time.Now())); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(loc); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after read", fi.Mode().Perm())
	}
	// A missing key file is named.
	os.Rename(loc, loc+".moved")
	s4 := openStore(t, path, none)
	if _, err := s4.Verify(ctx); err == nil || !strings.Contains(err.Error(), loc) {
		t.Errorf("missing key file: %v", err)
	}

	// A keychain that answers keeps the key there, as before.
	s5 := openStore(t, filepath.Join(t.TempDir(), "audit.db"), keyring.NewMemory())
	if err := s5.Append(ctx, testRecord(hexID(1), time.Now())); err != nil {
		t.Fatal(err)
	}
	if src, loc, _ := s5.KeySource(ctx); src != KeySourceKeychain || !strings.HasPrefix(loc, KeyPrefix) {
		t.Errorf("key source %q %q", src, loc)
	}
	// A keychain that fails otherwise (not unavailable) is an error, not
	// a file.
	bad := &keyring.Memory{Err: os.ErrPermission}
	s6 := openStore(t, filepath.Join(t.TempDir(), "audit.db"), bad)
	if err := s6.Append(ctx, testRecord(hexID(1), time.Now())); err == nil {
		t.Error("append with a failing keychain succeeded")
	}
	_ = api.Event{}
}
