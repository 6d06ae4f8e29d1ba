package audit

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The test binary doubles as a second appending process: TestMain runs
// child() when AUDIT_TEST_CHILD is set.
func TestMain(m *testing.M) {
	if os.Getenv("AUDIT_TEST_CHILD") != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child appends AUDIT_TEST_N events (forever when 0) to AUDIT_TEST_DB with
// the key in AUDIT_TEST_KEY, printing each committed count.
func child() int {
	keys := keyring.NewMemory()
	keys.Set(os.Getenv("AUDIT_TEST_KEYNAME"), os.Getenv("AUDIT_TEST_KEY"))
	s, err := Open(context.Background(), Options{Path: os.Getenv("AUDIT_TEST_DB"), Keys: keys})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv("AUDIT_TEST_N"))
	tag := os.Getenv("AUDIT_TEST_CHILD")
	w := bufio.NewWriter(os.Stdout)
	for i := 0; n == 0 || i < n; i++ {
		if err := s.Append(context.Background(), testRecord(fmt.Sprintf("%s-%06d", tag, i), time.Now())); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if n == 0 {
			fmt.Fprintln(w, i+1)
			w.Flush()
		}
	}
	return 0
}

func testRecord(id string, t time.Time) Record {
	code := 0
	return Record{
		Event: api.Event{
			ID: id, Time: t.UTC(), Agent: "cli", Surface: api.SurfaceCLI, ActionType: api.ActionShellExecute,
			Decision: "allow", Status: "completed", SandboxMode: "bubblewrap", ExitCode: &code, DurationMS: 3,
			ResolvedCmds: []string{"echo"}, PinnedScripts: []api.Pin{}, Credentials: []string{},
			Egress: api.Egress{DeniedHosts: []string{}},
		},
		Command: "echo " + id,
		Stdout:  []byte(id + "\n"),
	}
}

func hexID(i int) string { return fmt.Sprintf("%032x", i) }

func openStore(t testing.TB, path string, keys keyring.Store, mod ...func(*Options)) *Store {
	t.Helper()
	o := Options{Path: path, Keys: keys}
	for _, m := range mod {
		m(&o)
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func appendN(t testing.TB, s *Store, from, n int, start time.Time) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if err := s.Append(context.Background(), testRecord(hexID(i), start.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
}

func mustVerify(t *testing.T, s *Store) *Report {
	t.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problem != nil {
		t.Fatalf("verify: %v", rep.Problem)
	}
	return rep
}

func TestAppendAndRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "audit.db")
	keys := keyring.NewMemory()
	s := openStore(t, path, keys)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

	dec := testRecord("aaaa0000000000000000000000000001", t0)
	dec.Event.Status, dec.Event.ExitCode, dec.Event.SandboxMode = "", nil, ""
	exe := testRecord("bbbb0000000000000000000000000002", t0.Add(time.Second))
	exe.Event.ParentID = dec.Event.ID
	exe.Event.Agent = "claude-code"
	exe.Event.PinnedScripts = []api.Pin{{Path: "/w/x.sh", SHA256: "ab", Size: 3, PinMethod: "bind"}}
	exe.Event.Credentials = []string{"github_token"}
	exe.Event.Egress = api.Egress{Allowed: 1, Denied: 2, DeniedHosts: []string{"evil.example:443"}}
	exe.Event.Limits = &api.Limits{Tmpfs: true}
	exe.Stderr = []byte("warning\n")
	deny := testRecord("cccc0000000000000000000000000003", t0.Add(2*time.Second))
	deny.Event.Decision, deny.Event.BlockedBy, deny.Event.Reason = "deny", "sandbox_unavailable", "bwrap not found in PATH"
	deny.Event.Status, deny.Event.SandboxMode, deny.Event.ExitCode, deny.Stdout = "never_ran", "unavailable_denied", nil, nil
	none := testRecord("dddd0000000000000000000000000004", t0.Add(3*time.Second))
	none.Event.SandboxMode = "none"
	none.Command = "curl https://Example.com/x"
	none.Stdout, none.Stderr = []byte{}, nil // kept but empty, and not kept
	for _, r := range []Record{dec, exe, deny, none} {
		if err := s.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(ctx, none); err == nil {
		t.Error("appending a duplicate id succeeded")
	}

	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"all newest first", Filter{}, []string{"dddd", "cccc", "bbbb", "aaaa"}},
		{"oldest first", Filter{Oldest: true, Limit: 2}, []string{"aaaa", "bbbb"}},
		{"since", Filter{Since: t0.Add(2 * time.Second)}, []string{"dddd", "cccc"}},
		{"until", Filter{Until: t0.Add(time.Second)}, []string{"aaaa"}},
		{"status", Filter{Status: "completed"}, []string{"dddd", "bbbb"}},
		{"denied", Filter{Status: "denied"}, []string{"cccc"}},
		{"mode", Filter{SandboxMode: "none"}, []string{"dddd"}},
		{"agent", Filter{Agent: "claude-code"}, []string{"bbbb"}},
		{"grep command", Filter{Grep: "example.COM"}, []string{"dddd"}},
		{"grep reason", Filter{Grep: "bwrap not found"}, []string{"cccc"}},
		{"grep percent is literal", Filter{Grep: "%"}, nil},
		{"limit", Filter{Limit: 1}, []string{"dddd"}},
	} {
		got, err := s.List(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.Event.ID[:4])
		}
		if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, ids, tc.want)
		}
	}

	e, err := s.Get(ctx, "bbbb")
	if err != nil {
		t.Fatal(err)
	}
	if e.Event.ParentID != dec.Event.ID || e.Command != exe.Command || string(e.Stderr) != "warning\n" ||
		e.Event.Egress.DeniedHosts[0] != "evil.example:443" || e.Event.PinnedScripts[0].Path != "/w/x.sh" ||
		e.Event.Credentials[0] != "github_token" || !e.Event.Limits.Tmpfs {
		t.Errorf("Get: %+v", e)
	}
	if e, _ := s.Get(ctx, "cccc"); e.Stdout != nil {
		t.Errorf("output not kept came back as %q", e.Stdout)
	}
	if e, _ := s.Get(ctx, "dddd"); e.Stdout == nil || len(e.Stdout) != 0 || e.Stderr != nil {
		t.Errorf("empty kept output came back as %#v, %#v", e.Stdout, e.Stderr)
	}
	kids, err := s.Children(ctx, dec.Event.ID)
	if err != nil || len(kids) != 1 || kids[0].ID != exe.Event.ID {
		t.Errorf("Children: %v %v", kids, err)
	}
	s.Append(ctx, testRecord("bbbb0000000000000000000000000009", t0))
	if _, err := s.Get(ctx, "bbbb"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := s.Get(ctx, "ffff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing id: %v", err)
	}
	if _, err := s.Get(ctx, "x' OR 1=1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("bad id: %v", err)
	}
	mustVerify(t, s)

	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys := keyring.NewMemory()
	s := openStore(t, filepath.Join(dir, "a.db"), keys)
	appendN(t, s, 0, 3, time.Now())
	name, _ := s.KeyName(context.Background())
	v, err := keys.Get(name)
	if b, _ := hex.DecodeString(v); err != nil || len(b) != 32 || !strings.HasPrefix(name, KeyPrefix) {
		t.Fatalf("key %q after first use: %d bytes, %v", name, len(b), err)
	}
	// Another database gets a key of its own.
	sb := openStore(t, filepath.Join(dir, "other.db"), keys)
	appendN(t, sb, 0, 1, time.Now())
	if nb, _ := sb.KeyName(context.Background()); nb == name {
		t.Errorf("two trails share the key %q", name)
	}

	// The keychain lost the key: nothing is appended, and the error says
	// how to recover.
	lost := keyring.NewMemory()
	s2 := openStore(t, filepath.Join(dir, "a.db"), lost)
	var ke *KeyError
	if err := s2.Append(context.Background(), testRecord(hexID(99), time.Now())); !errors.As(err, &ke) || !strings.Contains(ke.Hint, "move") {
		t.Errorf("append with the key gone: %v", err)
	}
	if names, _ := lost.List(); len(names) != 0 {
		t.Errorf("a new key was created over a signed database: %q", names)
	}

	// Another key: refused, not mistaken for tampering.
	other := keyring.NewMemory()
	other.Set(name, strings.Repeat("ab", 32))
	s3 := openStore(t, filepath.Join(dir, "a.db"), other)
	if _, err := s3.Verify(context.Background()); !errors.As(err, &ke) || !strings.Contains(err.Error(), "not the key") {
		t.Errorf("verify with another key: %v", err)
	}

	// The keychain of a trail kept there is unavailable: the cause and
	// hint come through (a new trail would use a key file: TestKeyFile).
	down := keyring.NewMemory()
	appendN(t, openStore(t, filepath.Join(dir, "b.db"), down), 0, 1, time.Now())
	down.Err = &keyring.UnavailableError{Cause: "no D-Bus session bus", Hint: "start one"}
	s4 := openStore(t, filepath.Join(dir, "b.db"), down)
	err = s4.Append(context.Background(), testRecord(hexID(1), time.Now()))
	if !errors.Is(err, keyring.ErrUnavailable) || !errors.As(err, &ke) || ke.Hint != "start one" {
		t.Errorf("unavailable keychain: %v", err)
	}
}

// tamper opens the database behind the store's back.
func tamper(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestTamper(t *testing.T) {
	t.Parallel()
	// Rows are seq 1..10, ids hexID(0..9).
	for _, tc := range []struct {
		name  string
		stmts []string
		kind  string
		seq   int64
	}{
		{"edit a field", []string{"UPDATE events SET status = 'killed' WHERE seq = 4"}, ProblemChanged, 4},
		{"edit the event json", []string{"UPDATE events SET event = replace(event, '\"exit_code\":0', '\"exit_code\":1') WHERE seq = 5"}, ProblemChanged, 5},
		{"edit the command", []string{"UPDATE events SET command = 'true' WHERE seq = 6"}, ProblemChanged, 6},
		{"edit the output", []string{"UPDATE events SET stdout = X'00' WHERE seq = 2"}, ProblemChanged, 2},
		{"edit the hmac", []string{"UPDATE events SET hmac = X'00' WHERE seq = 7"}, ProblemChanged, 7},
		{"delete a row", []string{"DELETE FROM events WHERE seq = 5"}, ProblemRemoved, 6},
		{"delete a row and renumber", []string{"DELETE FROM events WHERE seq = 5", "UPDATE events SET seq = seq - 1 WHERE seq > 5"}, ProblemRemoved, 5},
		{"delete the first row", []string{"DELETE FROM events WHERE seq = 1"}, ProblemRemoved, 2},
		{"delete the newest rows", []string{"DELETE FROM events WHERE seq > 8"}, ProblemRemoved, 9},
		{"delete the newest rows and the head", []string{"DELETE FROM events WHERE seq > 8", "DELETE FROM chain_head"}, ProblemHead, 0},
		{"move the head back", []string{"DELETE FROM events WHERE seq > 8", "UPDATE chain_head SET seq = 8, hmac = (SELECT hmac FROM events WHERE seq = 8)"}, ProblemHead, 8},
		{"insert a row", []string{
			"UPDATE events SET seq = seq + 100 WHERE seq > 5", "UPDATE events SET seq = seq - 99 WHERE seq > 100",
			"INSERT INTO events SELECT 6, kind, 'f0f0', parent_id, time_ns, agent, surface, decision, status, sandbox_mode, exit_code, duration_ms, 'rm -rf /', reason, sandbox_reason, event, stdout, stderr, prev_hmac, hmac FROM events WHERE seq = 5",
		}, ProblemInserted, 6},
		{"insert a copy at the end", []string{
			"DROP INDEX events_id",
			"INSERT INTO events SELECT 11, kind, id, parent_id, time_ns, agent, surface, decision, status, sandbox_mode, exit_code, duration_ms, command, reason, sandbox_reason, event, stdout, stderr, prev_hmac, hmac FROM events WHERE seq = 3",
		}, ProblemInserted, 11},
		{"insert a forged row at the end", []string{
			"INSERT INTO events SELECT 11, kind, 'f0f0', parent_id, time_ns, agent, surface, decision, status, sandbox_mode, exit_code, duration_ms, 'forged', reason, sandbox_reason, event, stdout, stderr, (SELECT hmac FROM events WHERE seq = 10), hmac FROM events WHERE seq = 3",
		}, ProblemInserted, 11},
		{"swap two rows", []string{"UPDATE events SET seq = -1 WHERE seq = 4", "UPDATE events SET seq = 4 WHERE seq = 5", "UPDATE events SET seq = 5 WHERE seq = -1"}, ProblemReordered, 4},
		{"swap times of two rows", []string{"UPDATE events SET time_ns = time_ns + 10000000000 WHERE seq = 3"}, ProblemChanged, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.db")
			keys := keyring.NewMemory()
			s := openStore(t, path, keys)
			appendN(t, s, 0, 10, time.Now().Add(-time.Hour))
			mustVerify(t, s)
			tamper(t, path, tc.stmts...)
			rep, err := s.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Problem
			if p == nil {
				t.Fatalf("tampering went unnoticed")
			}
			t.Log(p.Detail)
			if p.Kind != tc.kind || p.Seq != tc.seq {
				t.Errorf("got %s at row %d (%s), want %s at row %d", p.Kind, p.Seq, p.Detail, tc.kind, tc.seq)
			}
			if p.Seq > 0 && p.Kind != ProblemHead && !strings.Contains(p.Detail, fmt.Sprintf("row %d ", p.Seq)) {
				t.Errorf("detail does not name the row: %s", p.Detail)
			}
		})
	}
}

func TestRetention(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := openStore(t, path, keys, func(o *Options) {
		o.RetentionEvents, o.RetentionDays, o.PruneEvery, o.Now = 20, 10, 8, clock
	})
	ctx := context.Background()
	// Count: 100 events an hour apart; at most 20 rows stay.
	for i := range 100 {
		if err := s.Append(ctx, testRecord(hexID(i), now.Add(time.Duration(i-100)*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	rep := mustVerify(t, s)
	st, _ := s.Stats(ctx)
	if st.Events+st.Checkpoints > 20+8 || rep.Checkpoints == 0 {
		t.Errorf("after count retention: %+v, %d checkpoints", st, rep.Checkpoints)
	}
	newest, _ := s.List(ctx, Filter{Limit: 1})
	if newest[0].Event.ID != hexID(99) {
		t.Errorf("newest event %s, want %s", newest[0].Event.ID, hexID(99))
	}

	// Age: eleven days later everything is older than ten days.
	mu.Lock()
	now = now.Add(11 * 24 * time.Hour)
	mu.Unlock()
	appendN(t, s, 1000, 2, now)
	if _, err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
	left, _ := s.List(ctx, Filter{Oldest: true})
	if len(left) != 2 || left[0].Event.ID != hexID(1000) {
		t.Errorf("after age retention: %d events, first %v", len(left), left)
	}
	// The chain still catches tampering after pruning.
	tamper(t, path, "DELETE FROM events WHERE seq = (SELECT min(seq) FROM events)")
	if rep, _ := s.Verify(ctx); rep.Problem == nil || rep.Problem.Kind != ProblemRemoved {
		t.Errorf("removing the first row after a checkpoint: %+v", rep.Problem)
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	const workers, each = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker its own Store, as separate services would.
			s, err := Open(context.Background(), Options{Path: path, Keys: keys})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range each {
				if err := s.Append(context.Background(), testRecord(hexID(w*1000+i), time.Now())); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := openStore(t, path, keys)
	checkComplete(t, s, workers*each)
}

// checkComplete verifies the chain and that it holds exactly n distinct
// events.
func checkComplete(t *testing.T, s *Store, n int) {
	t.Helper()
	rep := mustVerify(t, s)
	all, err := s.List(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range all {
		if seen[e.Event.ID] {
			t.Errorf("duplicated %s", e.Event.ID)
		}
		seen[e.Event.ID] = true
	}
	if len(all) != n || rep.Rows != n {
		t.Errorf("%d events (%d rows), want %d", len(all), rep.Rows, n)
	}
}

func childCmd(t *testing.T, path, name, key, tag string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AUDIT_TEST_CHILD="+tag, "AUDIT_TEST_DB="+path, "AUDIT_TEST_KEYNAME="+name,
		"AUDIT_TEST_KEY="+key, "AUDIT_TEST_N="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

func TestTwoProcesses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	s := openStore(t, path, keys)
	appendN(t, s, 0, 1, time.Now())
	name, _ := s.KeyName(context.Background())
	key, _ := keys.Get(name)
	const each = 300
	var cmds []*exec.Cmd
	for _, tag := range []string{"p1", "p2"} {
		c := childCmd(t, path, name, key, tag, each)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	// This process appends at the same time.
	appendN(t, s, 1, each, time.Now())
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	checkComplete(t, s, 1+3*each)
}

func TestKilledMidWrite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	s := openStore(t, path, keys)
	appendN(t, s, 0, 1, time.Now())
	name, _ := s.KeyName(context.Background())
	key, _ := keys.Get(name)
	for round := range 3 {
		c := childCmd(t, path, name, key, fmt.Sprintf("k%d", round), 0)
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		committed := 0
		for sc.Scan() {
			committed, _ = strconv.Atoi(sc.Text())
			if committed >= 100+round*37 {
				break
			}
		}
		c.Process.Signal(syscall.SIGKILL)
		// Drain what it reported before dying: those are committed too.
		for sc.Scan() {
			committed, _ = strconv.Atoi(sc.Text())
		}
		c.Wait()
		all, err := s.List(context.Background(), Filter{Grep: fmt.Sprintf("k%d-", round)})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) < committed || len(all) > committed+1 {
			t.Errorf("round %d: %d events stored, %d reported committed", round, len(all), committed)
		}
		mustVerify(t, s)
	}
	// The database still takes appends.
	appendN(t, s, 5000, 3, time.Now())
	mustVerify(t, s)
}

func TestLedger(t *testing.T) {
	t.Parallel()
	s := openStore(t, filepath.Join(t.TempDir(), "audit.db"), keyring.NewMemory())
	l := s.Ledger()
	t0 := time.Now()
	for _, tc := range []struct {
		key  string
		at   time.Duration
		want bool
	}{
		{"a", 0, true},
		{"a", time.Minute, false},
		{"b", time.Minute, true},
		{"a", 59 * time.Minute, false},
		{"a", 61 * time.Minute, true},
		{"a", 62 * time.Minute, false},
	} {
		got, err := l.Claim(tc.key, t0.Add(tc.at), time.Hour)
		if err != nil || got != tc.want {
			t.Errorf("Claim(%s, +%v) = %v, %v; want %v", tc.key, tc.at, got, err, tc.want)
		}
	}
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), Options{Path: path, Keys: keys})
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		}()
	}
	wg.Wait()
	s := openStore(t, path, keys)
	var v int
	s.r.QueryRow("PRAGMA user_version").Scan(&v)
	if v != SchemaVersion {
		t.Errorf("user_version %d, want %d", v, SchemaVersion)
	}
}

// LoadKey reads an existing trail's key ahead of the first append and
// creates none; a store that only appends never opens a reader
// connection.
func TestLoadKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	keys := keyring.NewMemory()

	// A new trail: nothing is created before the first append.
	s := openStore(t, filepath.Join(dir, "a.db"), keys)
	s.LoadKey(ctx)
	if names, _ := keys.List(); len(names) != 0 {
		t.Fatalf("LoadKey created a key: %q", names)
	}
	if name, _ := s.KeyName(ctx); name != "" {
		t.Fatalf("LoadKey started a trail: %q", name)
	}
	appendN(t, s, 0, 2, time.Now())
	s.Close()

	// An existing trail: its key is read, the appends chain on, and no
	// reader connection was opened for any of it.
	s2 := openStore(t, filepath.Join(dir, "a.db"), keys)
	s2.LoadKey(ctx)
	if s2.key == nil {
		t.Fatal("LoadKey did not read the existing trail's key")
	}
	rec := testRecord(hexID(2), time.Now())
	if err := s2.Started(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := s2.Append(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if n := s2.r.Stats().OpenConnections; n != 0 {
		t.Errorf("an appending store opened %d reader connections, want 0", n)
	}
	if rep, err := s2.Verify(ctx); err != nil || rep.Problem != nil {
		t.Errorf("verify after LoadKey and appends: %v, %v", err, rep.Problem)
	}

	// A keychain that lost the key: LoadKey keeps no error, the append
	// returns its own.
	s3 := openStore(t, filepath.Join(dir, "a.db"), keyring.NewMemory())
	s3.LoadKey(ctx)
	var ke *KeyError
	if err := s3.Append(ctx, testRecord(hexID(3), time.Now())); !errors.As(err, &ke) {
		t.Errorf("append with the key gone after LoadKey: %v, want a *KeyError", err)
	}
}
