package audit

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

// BenchmarkAppend is the sustained insert rate with the chain: one
// transaction per event, as the executor appends.
func BenchmarkAppend(b *testing.B) {
	s := openStore(b, filepath.Join(b.TempDir(), "audit.db"), keyring.NewMemory())
	ctx := context.Background()
	t0 := time.Now()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Append(ctx, testRecord(hexID(i), t0.Add(time.Duration(i)*time.Millisecond))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkListNewest50 is `audit list` (and `audit verify`) over
// 100,000 events.
func BenchmarkListNewest50(b *testing.B) {
	s := openStore(b, filepath.Join(b.TempDir(), "audit.db"), keyring.NewMemory())
	fill(b, s, 100_000)
	ctx := context.Background()
	b.Run("verify", func(b *testing.B) {
		for range b.N {
			if rep, err := s.Verify(ctx); err != nil || rep.Problem != nil {
				b.Fatal(err, rep.Problem)
			}
		}
	})
	for _, bc := range []struct {
		name string
		f    Filter
	}{
		{"all", Filter{Limit: 50}},
		{"status", Filter{Limit: 50, Status: "timed_out"}},
		{"grep", Filter{Limit: 50, Grep: "needle"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				if _, err := s.List(ctx, bc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fill appends n events in batches of one transaction each (the chain is
// the same as n single appends).
func fill(b *testing.B, s *Store, n int) {
	ctx := context.Background()
	key, err := s.loadKey(ctx, true)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now().Add(-time.Duration(n) * time.Second)
	for i := 0; i < n; {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 1000 && i < n; j, i = j+1, i+1 {
			rec := testRecord(hexID(i), t0.Add(time.Duration(i)*time.Second))
			if i%1000 == 7 {
				rec.Event.Status = "timed_out"
			}
			if i%5000 == 3 {
				rec.Command = "grep needle haystack"
			}
			r := recordRow(rec)
			if _, err := s.insert(ctx, tx, key, r); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecTrail is what one in-process gatehouse exec does with the
// trail: open it, record the start, append the event, close it.
func BenchmarkExecTrail(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.db")
	keys := keyring.NewMemory()
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: path, Keys: keys})
	if err != nil {
		b.Fatal(err)
	}
	appendN(b, s, 0, 100, time.Now())
	s.Close()
	b.ResetTimer()
	for i := range b.N {
		s, err := Open(ctx, Options{Path: path, Keys: keys})
		if err != nil {
			b.Fatal(err)
		}
		rec := testRecord(hexID(1000+i), time.Now())
		if err := s.Started(ctx, rec); err != nil {
			b.Fatal(err)
		}
		if err := s.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
