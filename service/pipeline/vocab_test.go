package pipeline

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The event's statuses are the backends' (api cannot import sandbox).
func TestStatusNames(t *testing.T) {
	for _, c := range []struct {
		api     string
		sandbox sandbox.Status
	}{
		{api.StatusCompleted, sandbox.StatusCompleted},
		{api.StatusTimedOut, sandbox.StatusTimedOut},
		{api.StatusKilled, sandbox.StatusKilled},
		{api.StatusFailedToStart, sandbox.StatusFailedToStart},
		{api.StatusNeverRan, sandbox.StatusNeverRan},
	} {
		if c.api != string(c.sandbox) {
			t.Errorf("api says %q, sandbox %q", c.api, c.sandbox)
		}
	}
}
