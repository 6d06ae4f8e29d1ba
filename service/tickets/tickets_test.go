package tickets

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTicketForm(t *testing.T) {
	t.Parallel()
	a, b := New(), New()
	if a == b || !Valid(a) || len(a) != encodedLen {
		t.Fatalf("tickets %q %q", a, b)
	}
	for _, bad := range []string{"", a[:len(a)-1], a + "x", "x" + a[1:], strings.Replace(a, a[len(Prefix):len(Prefix)+1], "+", 1), Prefix} {
		if Valid(bad) {
			t.Errorf("Valid(%q)", bad)
		}
	}
	if Name(a) == Name(b) || len(Name(a)) != 32 || strings.Contains(Name(a), a[len(Prefix):]) {
		t.Errorf("names %q %q", Name(a), Name(b))
	}
}

func TestRedeemOnce(t *testing.T) {
	t.Parallel()
	s := NewStore[int](nil)
	tk, _, _, err := s.Issue(7, time.Minute, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Concurrent redeems: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, used := 0, 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.Redeem(tk)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && v == 7:
				wins++
			case errors.Is(err, ErrUsed):
				used++
			default:
				t.Errorf("redeem: %v %v", v, err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || used != 15 {
		t.Errorf("wins %d used %d", wins, used)
	}
	if s.Pending() != 0 {
		t.Error("pending after redeem")
	}
}

func TestForgedAndTruncated(t *testing.T) {
	t.Parallel()
	s := NewStore[int](nil)
	tk, _, _, _ := s.Issue(1, time.Minute, 0, nil)
	if _, err := s.Redeem(tk[:len(tk)-3]); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := s.Redeem(New()); !errors.Is(err, ErrUnknown) {
		t.Errorf("forged: %v", err)
	}
	if _, err := s.Redeem(tk); err != nil {
		t.Errorf("the real one after forgeries: %v", err)
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	got := make(chan int, 1)
	s := NewStore(func(name string, v int) { got <- v })
	tk, name, exp, _ := s.Issue(42, 50*time.Millisecond, 0, nil)
	if name != Name(tk) || time.Until(exp) > time.Second {
		t.Errorf("name %q exp %v", name, exp)
	}
	select {
	case v := <-got:
		if v != 42 {
			t.Errorf("expired %d", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no expiry")
	}
	if _, err := s.Redeem(tk); !errors.Is(err, ErrExpired) {
		t.Errorf("redeem after expiry: %v", err)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	s := NewStore[int](func(string, int) { t.Error("expired after close") })
	tk, name, _, _ := s.Issue(5, 20*time.Millisecond, 0, nil)
	left := s.Close()
	if len(left) != 1 || left[name] != 5 {
		t.Errorf("Close returned %v", left)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := s.Redeem(tk); err == nil {
		t.Error("redeemed after close")
	}
	if _, _, _, err := s.Issue(1, time.Minute, 0, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("issue after close: %v", err)
	}
}

func TestIssueLimit(t *testing.T) {
	t.Parallel()
	s := NewStore[int](nil)
	a, _, _, err := s.Issue(1, time.Minute, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Issue(2, time.Minute, 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Issue(3, time.Minute, 2, nil); !errors.Is(err, ErrFull) {
		t.Fatalf("third of two: %v", err)
	}
	// A failed prepare issues nothing.
	s.Redeem(a)
	prepErr := errors.New("no fifo")
	if _, _, _, err := s.Issue(4, time.Minute, 2, func(string) error { return prepErr }); !errors.Is(err, prepErr) {
		t.Fatalf("prepare's error: %v", err)
	}
	if s.Pending() != 1 {
		t.Errorf("pending %d, want 1", s.Pending())
	}
	if _, _, _, err := s.Issue(5, time.Minute, 2, nil); err != nil {
		t.Errorf("after a redeem: %v", err)
	}
}

// Peek reads a pending ticket without redeeming it, and says what Redeem
// would of any other: malformed, unknown, used, expired.
func TestPeek(t *testing.T) {
	t.Parallel()
	expired := make(chan struct{})
	s := NewStore(func(string, int) { close(expired) })
	tk, _, _, _ := s.Issue(9, time.Minute, 0, nil)
	for range 2 {
		if v, err := s.Peek(tk); v != 9 || err != nil {
			t.Fatalf("peek of a pending ticket: %v %v", v, err)
		}
	}
	if s.Pending() != 1 {
		t.Errorf("pending %d after peeks, want 1", s.Pending())
	}
	if _, err := s.Peek(tk[:len(tk)-1]); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := s.Peek(New()); !errors.Is(err, ErrUnknown) {
		t.Errorf("forged: %v", err)
	}
	if v, err := s.Redeem(tk); v != 9 || err != nil {
		t.Fatalf("redeem after peeks: %v %v", v, err)
	}
	if _, err := s.Peek(tk); !errors.Is(err, ErrUsed) {
		t.Errorf("peek of a used ticket: %v", err)
	}
	short, _, _, _ := s.Issue(3, time.Millisecond, 0, nil)
	<-expired
	if _, err := s.Peek(short); !errors.Is(err, ErrExpired) {
		t.Errorf("peek of an expired ticket: %v", err)
	}
	live, _, _, _ := s.Issue(4, time.Minute, 0, nil)
	s.Close()
	if _, err := s.Peek(live); err == nil {
		t.Error("peek after close found a live ticket")
	}
}
