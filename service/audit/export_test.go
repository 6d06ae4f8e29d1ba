package audit

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

func TestExportCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "audit.db"), keyring.NewMemory())
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	appendN(t, s, 0, 3, start)
	// A started row between events is not an event.
	if err := s.Started(ctx, startedRecord(hexID(100))); err != nil {
		t.Fatal(err)
	}
	// An event whose time is older than the rows before it still comes
	// after them: the export follows the order of appending.
	appendN(t, s, 3, 2, start.Add(-time.Hour))

	if c, err := s.ExportCursor(ctx, "otlp"); err != nil || c != 0 {
		t.Fatalf("new cursor: %d, %v; want 0", c, err)
	}
	got, err := s.EventsAfter(ctx, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Event.ID != hexID(0) || got[2].Event.ID != hexID(2) {
		t.Fatalf("first batch: %v", ids(got))
	}
	if err := s.SetExportCursor(ctx, "otlp", 0, got[2].Seq); err != nil {
		t.Fatal(err)
	}
	rest, err := s.EventsAfter(ctx, got[2].Seq, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 2 || rest[0].Event.ID != hexID(3) || rest[1].Event.ID != hexID(4) {
		t.Fatalf("second batch: %v, want the two events after the started row", ids(rest))
	}
	if rest[0].Command == "" || rest[0].Stdout != nil {
		t.Errorf("entries carry the command and no output; got command %q, stdout %q", rest[0].Command, rest[0].Stdout)
	}
	if n, err := s.Backlog(ctx, got[2].Seq); err != nil || n != 2 {
		t.Errorf("backlog %d, %v; want 2", n, err)
	}

	// Only forward, and only from where the caller saw it.
	if err := s.SetExportCursor(ctx, "otlp", 0, 9); !errors.Is(err, ErrCursorMoved) {
		t.Errorf("stale from: %v, want ErrCursorMoved", err)
	}
	if err := s.SetExportCursor(ctx, "otlp", got[2].Seq, 1); err == nil {
		t.Error("moving back was accepted")
	}
	// Cursors are per export and survive reopening.
	if c, _ := s.ExportCursor(ctx, "other"); c != 0 {
		t.Errorf("another export's cursor is %d", c)
	}
	s.Close()
	s = openStore(t, s.Path(), s.opts.Keys)
	if c, err := s.ExportCursor(ctx, "otlp"); err != nil || c != got[2].Seq {
		t.Errorf("after reopening: %d, %v; want %d", c, err, got[2].Seq)
	}
	// The cursor is outside the chain.
	mustVerify(t, s)
}

func ids(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Event.ID)
	}
	return out
}

// A store written before export cursors existed (schema 1) is brought up
// to date when opened: its rows stay, the chain verifies, the cursor
// starts at the beginning.
func TestMigrateToExportCursors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	s := openStore(t, path, keys)
	appendN(t, s, 0, 5, time.Now())
	s.Close()
	// Make it a schema-1 store, as an older gatehouse left it.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE export_cursors; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s = openStore(t, path, keys)
	var v int
	s.r.QueryRow("PRAGMA user_version").Scan(&v)
	if v != SchemaVersion || SchemaVersion != 2 {
		t.Fatalf("user_version %d, SchemaVersion %d; want 2", v, SchemaVersion)
	}
	if c, err := s.ExportCursor(ctx, "otlp"); err != nil || c != 0 {
		t.Fatalf("cursor %d, %v", c, err)
	}
	got, err := s.EventsAfter(ctx, 0, 100)
	if err != nil || len(got) != 5 {
		t.Fatalf("%d events, %v; want 5", len(got), err)
	}
	if err := s.SetExportCursor(ctx, "otlp", 0, got[4].Seq); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
}

// Retention may remove rows an export has not read; Pruned counts them.
func TestPrunedBeforeExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "audit.db"), keyring.NewMemory(), func(o *Options) {
		o.RetentionEvents = 100
		o.PruneEvery = 1 << 30
	})
	appendN(t, s, 0, 150, time.Now())
	if _, err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	// Rows 1–51 went (the checkpoint is among the 100 kept).
	for _, tc := range []struct{ cursor, want int64 }{{0, 51}, {20, 31}, {51, 0}, {120, 0}} {
		if n, err := s.Pruned(ctx, tc.cursor); err != nil || n != tc.want {
			t.Errorf("Pruned(%d) = %d, %v; want %d", tc.cursor, n, err, tc.want)
		}
	}
}
