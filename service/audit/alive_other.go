//go:build !unix

package audit

// processAlive cannot tell here; it answers alive, so that Reconcile
// never closes an execution another process may still be running.
func processAlive(pid int) bool { return pid > 0 }
