//go:build linux || darwin

package pipeline

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// BenchmarkDecide is the service's decision of a routed Bash call: the
// request checks, workspace roots, analysis and policy (no audit write).
func BenchmarkDecide(b *testing.B) {
	f := newFixture(b, b.TempDir(), nil)
	req := api.ExecRequest{Command: "git status --short && go test ./... 2>&1 | tail -20", Agent: "claude-code", Surface: api.SurfaceAgentHook, Cwd: f.ws}
	for b.Loop() {
		if _, err := f.ex.decide(context.Background(), req, newEvent(&req, "bash"), &decideRun{}); err != nil {
			b.Fatal(err)
		}
	}
}
