package dlp

import (
	"io"
	"sync"
)

// A Writer redacts what is written to it and passes the rest on to W as
// soon as it is decided. Close flushes what is held back; it does not
// close W. A Writer is safe for concurrent use, though a stream normally
// has a single writer.
type Writer struct {
	t *table
	w io.Writer

	mu     sync.Mutex
	buf    []byte // written, not yet passed on
	out    []byte // scratch for what is passed on
	spans  []span
	prev   byte // the last byte passed on
	count  int
	err    error
	closed bool
}

// Writer returns a Writer that passes redacted output on to w.
func (r *Redactor) Writer(w io.Writer) *Writer {
	return &Writer{t: r.t, w: w}
}

// Write never fails because of w: once w fails, output is still consumed
// (and counted) but no longer passed on, so the command writing is never
// blocked. It fails only after Close.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, io.ErrClosedPipe
	}
	w.buf = append(w.buf, p...)
	w.flush(false)
	return len(p), nil
}

// Close passes on everything held back. It is safe to call more than
// once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.flush(true)
		w.closed = true
		w.buf = nil
	}
	return w.err
}

// Count returns the number of redactions so far.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count
}

func (w *Writer) flush(final bool) {
	spans, hold := w.t.scan(w.buf, w.prev, final, w.spans[:0])
	spans = merge(spans)
	limit := w.t.cut(spans, hold)
	if limit == 0 {
		w.spans = spans[:0]
		return
	}
	out, n := w.t.render(w.out[:0], w.buf, spans, limit)
	w.count += n
	if w.err == nil && len(out) > 0 {
		_, w.err = w.w.Write(out)
	}
	w.prev = w.buf[limit-1]
	// Keep what is held back, reusing the buffer.
	rest := copy(w.buf, w.buf[limit:])
	w.buf = w.buf[:rest]
	if cap(out) > 1<<20 {
		out = nil // do not keep a huge scratch buffer around
	}
	w.out = out
	w.spans = spans[:0]
}
