package tray_test

import "context"

// windDown closes the fake's socket but keeps its open connections, the
// live stream among them, as the service's shutdown does while it waits
// for them (up to 15 s).
func (f *fakeService) windDown() {
	f.mu.Lock()
	srv := f.srv
	f.mu.Unlock()
	go srv.Shutdown(context.Background())
}
