package tray

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// After the service said it is stopping, the tray shows it stopping while
// that service still answers, and down as soon as it no longer does or
// another service answers in its place (the stream, held open by the
// stopping service, does not say so).
func TestStillStopping(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	was := api.Status{PID: 41, Started: start}
	for _, c := range []struct {
		name string
		st   *api.Status
		err  error
		want bool
	}{
		{"the same service answers", &api.Status{PID: 41, Started: start}, nil, true},
		{"it no longer answers", nil, errors.New("connect: no such file or directory"), false},
		{"another service answers (a new pid)", &api.Status{PID: 42, Started: start.Add(time.Second)}, nil, false},
		{"another service answers (the same pid, started again)", &api.Status{PID: 41, Started: start.Add(time.Minute)}, nil, false},
	} {
		if got := StillStopping(was, c.st, c.err); got != c.want {
			t.Errorf("%s: StillStopping = %v, want %v", c.name, got, c.want)
		}
	}
}
