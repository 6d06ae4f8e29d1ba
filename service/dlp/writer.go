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
	if len(w.buf) == 0 {
		// Nothing is held back: p is scanned where it is, and only what
		// is held back of it is copied.
		w.flush(p, false)
	} else {
		w.buf = append(w.buf, p...)
		w.flush(w.buf, false)
	}
	return len(p), nil
}

// Close passes on everything held back. It is safe to call more than
// once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.flush(w.buf, true)
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

// flush passes on what is decided of buf, which is w.buf or, when nothing
// was held back, the bytes just written, and keeps the rest in w.buf.
func (w *Writer) flush(buf []byte, final bool) {
	spans, hold := w.t.scan(buf, w.prev, final, w.spans[:0])
	spans = merge(spans)
	limit := w.t.cut(spans, hold)
	w.spans = spans[:0]
	if limit == 0 {
		w.keep(buf, 0)
		return
	}
	out := buf[:limit]
	if len(spans) > 0 && spans[0].start < limit {
		var n int
		out, n = w.t.render(w.out[:0], buf, spans, limit)
		w.count += n
		if cap(out) > 1<<20 {
			w.out = nil // do not keep a huge scratch buffer around
		} else {
			w.out = out
		}
	}
	if w.err == nil && len(out) > 0 {
		_, w.err = w.w.Write(out)
	}
	w.prev = buf[limit-1]
	w.keep(buf, limit)
}

// keep makes buf[limit:] what is held back.
func (w *Writer) keep(buf []byte, limit int) {
	if len(w.buf) > 0 && &buf[0] == &w.buf[0] {
		// Reuse the buffer.
		w.buf = w.buf[:copy(w.buf, buf[limit:])]
		return
	}
	w.buf = append(w.buf[:0], buf[limit:]...)
}
