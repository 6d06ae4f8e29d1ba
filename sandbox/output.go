package sandbox

import (
	"fmt"
	"io"
	"sync"
)

// Streams are where a command's output goes as it arrives.
type Streams struct {
	Stdout, Stderr io.Writer
}

// A CapWriter passes on at most Max bytes (all when Max is 0) and counts the
// rest. It is safe for concurrent use.
type CapWriter struct {
	W   io.Writer
	Max int64

	mu        sync.Mutex
	n         int64
	discarded int64
	err       error
}

// Write never fails: a broken downstream writer stops delivery but the
// command's output is still drained, so the command is not blocked.
func (c *CapWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := len(p)
	if c.Max > 0 && c.n+int64(len(p)) > c.Max {
		keep := c.Max - c.n
		c.discarded += int64(len(p)) - keep
		p = p[:keep]
	}
	if len(p) > 0 {
		c.n += int64(len(p))
		if c.err == nil && c.W != nil {
			_, c.err = c.W.Write(p)
		}
	}
	return total, nil
}

// Stats returns the bytes delivered and discarded so far.
func (c *CapWriter) Stats() StreamStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return StreamStats{Bytes: c.n, Discarded: c.discarded}
}

// Finish writes the truncation marker when output was discarded.
func (c *CapWriter) Finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discarded > 0 && c.err == nil && c.W != nil {
		fmt.Fprintf(c.W, "\n%s\n", TruncationMarker(c.Max, c.discarded))
	}
}

// TruncationMarker is the line that ends a capped stream.
func TruncationMarker(max, discarded int64) string {
	return fmt.Sprintf("[gatehouse: output truncated at %d bytes; %d bytes discarded]", max, discarded)
}
