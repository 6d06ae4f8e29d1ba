package workflow

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// BenchmarkGoBuildCached measures a cached `go build ./...` of the small
// module through plain bash and through gatehouse exec, after one warm-up
// build on each side, and logs the medians of the iterations of the last
// round of each and their ratio:
//
//	go test -run '^$' -bench GoBuildCached -benchtime 20x ./app/cli/workflow/
func BenchmarkGoBuildCached(b *testing.B) {
	sandboxtest.RequireBwrap(b)
	path := sessionPath()
	if _, ok := lookPath("go", path); !ok {
		b.Skip("go is not on PATH")
	}
	const script = "export GOTOOLCHAIN=local GOFLAGS= GOPROXY=off\ngo build ./..."
	bash, gh := newSides(b, path)
	medians := map[string]time.Duration{}
	for _, sd := range []*side{bash, gh} {
		dir := filepath.Join(sd.copyProject(b, "go"), "app")
		if r := sd.run(b, dir, script); r.code != 0 {
			b.Fatalf("%s: warm-up build: exit %d\n%s", sd.name, r.code, r.stderr)
		}
		b.Run(sd.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if r := sd.run(b, dir, script); r.code != 0 {
					b.Fatalf("exit %d\n%s", r.code, r.stderr)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			m := times[len(times)/2]
			medians[sd.name] = m
			b.ReportMetric(float64(m)/1e6, "median-ms")
			if base := medians["bash"]; sd.name == "exec" && base > 0 {
				b.ReportMetric(float64(m)/float64(base), "exec/bash")
			}
		})
	}
	if m, n := medians["bash"], medians["exec"]; m > 0 && n > 0 {
		b.Logf("cached go build ./...: bash median %.1f ms, exec median %.1f ms, exec/bash %.2f",
			float64(m)/1e6, float64(n)/1e6, float64(n)/float64(m))
	}
}
