package dashboard

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkPages serves the list's first page (the newest 50 of 100,000
// events) and a card (with the chain's verdict on its row), over HTTP,
// from a real audit trail. It reports the median of the iterations
// (ms-median); the target is 20 ms each.
//
//	go test -run '^$' -bench Pages -benchtime 200x ./service/dashboard
func BenchmarkPages(b *testing.B) {
	f := newBenchFixture(b, 100_000)
	c := f.client()
	f.login(c)
	for _, bc := range []struct{ name, path string }{
		{"list-newest-50", "/executions"},
		{"list-filtered", "/executions?status=completed&agent=claude-code&surface=agent_hook&mode=bubblewrap"},
		{"card", fmt.Sprintf("/executions/%032x", 50_000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			for range b.N {
				t0 := time.Now()
				resp, err := c.Get(f.base + bc.path)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n < 1000 {
					b.Fatalf("%s: %s, %d bytes", bc.path, resp.Status, n)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
		})
	}
}

// newBenchFixture is newFixture with n events appended through the
// store, one transaction each, as the executor appends them.
func newBenchFixture(b *testing.B, n int) *fixture {
	f := newFixture(b, 0)
	start := time.Now().Add(-time.Duration(n) * time.Second)
	for i := range n {
		appendEvent(b, f.trail, fmt.Sprintf("%032x", i+1), start.Add(time.Duration(i)*time.Second),
			fmt.Sprintf("go test ./pkg/%d/... && echo done %d", i%97, i), []byte(fmt.Sprintf("ok  \tpkg/%d\t0.%03ds\n", i%97, i%1000)))
	}
	return f
}
