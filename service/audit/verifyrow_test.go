package audit

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

func TestVerifyRow(t *testing.T) {
	t.Parallel()
	// Rows are seq 1..10.
	for _, tc := range []struct {
		name  string
		stmts []string
		bad   []int64 // the rows whose verdict is not OK
	}{
		{"intact", nil, nil},
		{"edit a field", []string{"UPDATE events SET status = 'killed' WHERE seq = 4"}, []int64{4}},
		{"edit the output", []string{"UPDATE events SET stdout = X'00' WHERE seq = 2"}, []int64{2}},
		{"delete a row", []string{"DELETE FROM events WHERE seq = 5"}, []int64{4, 6}},
		{"delete the first row", []string{"DELETE FROM events WHERE seq = 1"}, []int64{2}},
		{"delete the newest rows", []string{"DELETE FROM events WHERE seq > 8"}, []int64{8}},
		{"swap two rows", []string{"UPDATE events SET seq = -1 WHERE seq = 4", "UPDATE events SET seq = 4 WHERE seq = 5", "UPDATE events SET seq = 5 WHERE seq = -1"}, []int64{3, 4, 5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.db")
			s := openStore(t, path, keyring.NewMemory())
			appendN(t, s, 0, 10, time.Now().Add(-time.Hour))
			tamper(t, path, tc.stmts...)
			for seq := int64(1); seq <= 10; seq++ {
				v, err := s.VerifyRow(context.Background(), seq)
				if err != nil {
					continue // removed
				}
				want := true
				for _, b := range tc.bad {
					if b == seq {
						want = false
					}
				}
				if v.OK != want {
					t.Errorf("row %d: OK %v (%s), want %v", seq, v.OK, v.Detail, want)
				}
				if !strings.Contains(v.Detail, "row ") {
					t.Errorf("row %d: detail %q names no row", seq, v.Detail)
				}
			}
		})
	}
}

func TestVerifyRowAfterRetention(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	s := openStore(t, path, keyring.NewMemory(), func(o *Options) { o.RetentionEvents = 5 })
	appendN(t, s, 0, 10, time.Now().Add(-time.Hour))
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	es, err := s.List(context.Background(), Filter{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		v, err := s.VerifyRow(context.Background(), e.Seq)
		if err != nil || !v.OK {
			t.Errorf("row %d after retention: %+v %v", e.Seq, v, err)
		}
	}
}

func TestKeysetPages(t *testing.T) {
	t.Parallel()
	s := openStore(t, filepath.Join(t.TempDir(), "audit.db"), keyring.NewMemory())
	start := time.Now().Add(-time.Hour)
	// Pairs of events share a time: the cursor orders them by seq.
	for i := range 25 {
		r := testRecord(hexID(i), start.Add(time.Duration(i/2)*time.Second))
		if i%5 == 0 {
			r.Event.Surface = api.SurfaceMCP
		}
		if i == 7 {
			r.Event.Approval = &api.ApprovalRecord{ID: "a1", Answer: api.AnswerOnce, By: api.ByDashboard}
		}
		if err := s.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var seen []string
	f := Filter{Limit: 4}
	for {
		page, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			seen = append(seen, e.Event.ID)
		}
		f.Before = page[len(page)-1].Cursor()
		c, err := ParseCursor(f.Before.String())
		if err != nil || c != f.Before {
			t.Fatalf("cursor %q read back as %v, %v", f.Before, c, err)
		}
	}
	if len(seen) != 25 {
		t.Fatalf("pages held %d events, want 25", len(seen))
	}
	for i, id := range seen {
		if want := hexID(24 - i); id != want {
			t.Fatalf("event %d of the pages is %s, want %s", i, id, want)
		}
	}
	newer, err := s.List(ctx, Filter{After: Cursor{start.Add(10 * time.Second).UnixNano(), 21}})
	if err != nil {
		t.Fatal(err)
	}
	if len(newer) != 4 || newer[0].Event.ID != hexID(24) || newer[3].Event.ID != hexID(21) {
		t.Errorf("after the cursor: %d events, want the 4 newest", len(newer))
	}
	mcp, _ := s.List(ctx, Filter{Surface: api.SurfaceMCP})
	if len(mcp) != 5 {
		t.Errorf("surface mcp: %d events, want 5", len(mcp))
	}
	answered, _ := s.List(ctx, Filter{Answered: true})
	if len(answered) != 1 || answered[0].Event.ID != hexID(7) {
		t.Errorf("answered: %d events, want the one with an approval", len(answered))
	}
	for _, bad := range []string{"x", "1", "1.0", "a.b"} {
		if _, err := ParseCursor(bad); err == nil {
			t.Errorf("ParseCursor(%q) took it", bad)
		}
	}
}
