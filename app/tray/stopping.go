package tray

import (
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// stoppingPoll is how often the status is read from a service that said
// it is stopping: its live stream may stay open while it winds down (the
// service's shutdown waits for open connections), so the stream does not
// say when it is gone.
const stoppingPoll = 250 * time.Millisecond

// StillStopping reports whether a status read after the service of was
// said it is stopping shows it still there: it answered (err is nil) and
// is the same process (pid and start). An error, or another service that
// answers on the socket, ends the wait.
func StillStopping(was api.Status, st *api.Status, err error) bool {
	return err == nil && st != nil && st.PID == was.PID && st.Started.Equal(was.Started)
}
