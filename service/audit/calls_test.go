package audit

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A routed call is one entry when calls are listed: its execution, which
// carries the decision's approval; the decision is still its own record,
// read by Get, Children and an unjoined list.
func TestCallsJoinRoutedPair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "audit.db"), keyring.NewMemory())
	start := time.Now().Add(-time.Hour)
	appendN(t, s, 1, 1, start)
	approval := &api.ApprovalRecord{ID: "ap-1", Answer: "once", By: "tray"}
	dec := testRecord(hexID(2), start.Add(2*time.Second))
	dec.Event.Status, dec.Event.ExitCode, dec.Event.Routed, dec.Event.Approval = "", nil, true, approval
	exe := testRecord(hexID(3), start.Add(3*time.Second))
	exe.Event.ParentID, exe.Event.Routed, exe.Event.Approval = hexID(2), true, approval
	// A routed decision whose execution is not on the record yet stays a row.
	waiting := testRecord(hexID(4), start.Add(4*time.Second))
	waiting.Event.Status, waiting.Event.ExitCode, waiting.Event.Routed = "", nil, true
	for _, r := range []Record{dec, exe, waiting} {
		if err := s.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(f Filter) []string {
		t.Helper()
		es, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Event.ID)
		}
		return out
	}
	if got, want := ids(Filter{Calls: true}), []string{hexID(4), hexID(3), hexID(1)}; !slices.Equal(got, want) {
		t.Errorf("calls: %v, want %v", got, want)
	}
	if got, want := ids(Filter{Calls: true, Answered: true}), []string{hexID(3)}; !slices.Equal(got, want) {
		t.Errorf("answered calls: %v, want %v", got, want)
	}
	// Pages of one: the decision is skipped by the cursor too.
	first, _ := s.List(ctx, Filter{Calls: true, Limit: 2})
	if got, want := ids(Filter{Calls: true, Before: first[1].Cursor()}), []string{hexID(1)}; !slices.Equal(got, want) {
		t.Errorf("next page: %v, want %v", got, want)
	}
	if got := ids(Filter{}); len(got) != 4 {
		t.Errorf("records: %v, want all four", got)
	}
	if _, err := s.Get(ctx, hexID(2)); err != nil {
		t.Errorf("the decision is not its own record: %v", err)
	}
	mustVerify(t, s)
}
