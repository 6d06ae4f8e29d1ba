package sandbox

import (
	"bytes"
	"sync"
)

// A HeadBuffer keeps the first Max bytes written to it and drops the rest:
// what a runner keeps of a process's diagnostics (bwrap's stderr, a
// wrapper that failed to start) to explain a failure. It is safe for
// concurrent use.
type HeadBuffer struct {
	Max int

	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps what fits under Max and reports p written whole.
func (h *HeadBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.Max - h.b.Len(); room > 0 {
		h.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// String returns what was kept.
func (h *HeadBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b.String()
}
