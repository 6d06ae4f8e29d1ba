package pipeline

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// An execution ended as it starts (its client gone, the service stopping)
// is recorded killed: the signal to init waits for the plan, which init
// reads first.
func TestKilledAsItStarts(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	for i := 0; i < 5; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o, err := f.ex.Execute(ctx, api.ExecRequest{Command: "sleep 30", Agent: "cli", Surface: api.SurfaceCLI}, sandbox.Streams{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Event.Status != "killed" {
			t.Fatalf("run %d: status %q (%s), want killed", i, o.Event.Status, o.Event.Reason)
		}
	}
}
