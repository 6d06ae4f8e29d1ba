package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A command silent for the quiet time in a cold cache gets one line on
// the terminal, once; one whose output keeps coming gets none.
func TestSilenceSaysOnce(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	var term bytes.Buffer
	s := newSilence(&term, "gatehouse: still running", 10*time.Second, now)
	out := s.writer(&bytes.Buffer{})

	for range 5 {
		clock = clock.Add(5 * time.Second)
		out.Write([]byte("progress\n"))
		if s.check() {
			t.Fatalf("said while output came: %q", term.String())
		}
	}
	clock = clock.Add(9 * time.Second)
	if s.check() {
		t.Fatal("said before the quiet time")
	}
	clock = clock.Add(time.Second)
	if !s.check() {
		t.Fatal("not said after the quiet time")
	}
	clock = clock.Add(time.Minute)
	s.check()
	if got := strings.Count(term.String(), "still running"); got != 1 {
		t.Errorf("said %d times: %q", got, term.String())
	}

	// watch stops at the line, or when told to.
	tick := make(chan time.Time)
	stop := make(chan struct{})
	done := make(chan struct{})
	s2 := newSilence(&term, "again", 10*time.Second, now)
	go func() { s2.watch(tick, stop); close(done) }()
	tick <- clock
	close(stop)
	<-done
	if strings.Contains(term.String(), "again") {
		t.Error("said with no quiet time passed")
	}
}

// Output into a pipe or a file never gets the line.
func TestColdCacheWatchTerminalOnly(t *testing.T) {
	if s := coldCacheWatch(&bytes.Buffer{}, t.TempDir(), "cli", ""); s != nil {
		t.Error("a buffer is not a terminal")
	}
}
