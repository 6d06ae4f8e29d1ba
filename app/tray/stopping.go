package tray

import (
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// StillStopping reports whether a status read after the service of was
// said it is stopping shows it still there: it answered (err is nil) and
// is the same process (pid and start). An error, or another service that
// answers on the socket, ends the wait.
func StillStopping(was api.Status, st *api.Status, err error) bool {
	return err == nil && st != nil && st.PID == was.PID && st.Started.Equal(was.Started)
}
