package sandbox

import (
	"io"
	"os"
	"sync"
	"time"
)

// pumpBufSize is the read size for command output: large reads keep the
// per-byte cost of the copy low when a command writes a lot. It matches
// the pipe's size (pump_linux.go), so one read can drain a full pipe:
// 1 GiB delivered went from 603 to 676 MiB/s against 256 KiB reads
// (medians of 5, 2-core machine).
const pumpBufSize = 1 << 20

// pumpFirstBufSize is the first read size. Most commands write little:
// two 1 MiB buffers for every execution were half of what an in-process
// gatehouse exec -- true allocated, enough to start a garbage collection
// in a process that lives 30 ms. A read that fills the buffer moves the
// pump to pumpBufSize (pumpBuf).
const pumpFirstBufSize = 64 << 10

// pumpBuf returns the buffer for the next read after a read of n bytes
// into buf: a full read means a fast writer, which gets the large one.
func pumpBuf(buf []byte, n int) []byte {
	if n == len(buf) && len(buf) < pumpBufSize {
		return make([]byte, pumpBufSize)
	}
	return buf
}

// A Pump copies what a command writes to one end of a pipe into a writer.
// The command gets W, a real file, so its output reaches the pipe with no
// copying goroutine in between.
type Pump struct {
	// W is the write end for the command; the caller closes it once the
	// command has started.
	W *os.File

	r    *os.File
	done chan struct{}
	once sync.Once
}

// GrowPipe raises the buffer of f to 1 MiB when f is a pipe (Linux); it does
// nothing otherwise. Large pipe buffers let a fast writer and its reader
// block each other less often.
func GrowPipe(f *os.File) { growPipe(f) }

// NewPump starts copying from a new pipe into dst until end of file.
func NewPump(dst io.Writer) (*Pump, error) {
	r, w, err := blockingPipe()
	if err != nil {
		return nil, err
	}
	growPipe(w)
	p := &Pump{W: w, r: r, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, pumpFirstBufSize)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				dst.Write(buf[:n])
			}
			if err != nil {
				return
			}
			buf = pumpBuf(buf, n)
		}
	}()
	return p, nil
}

// Wait waits until every writer has closed the pipe, or at most grace
// after it is called, then closes the read end. A process that escaped the
// execution and still holds the pipe then gets EPIPE.
func (p *Pump) Wait(grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
	p.Close()
	<-p.done
}

// Close closes both ends; it is safe to call more than once.
func (p *Pump) Close() {
	p.once.Do(func() {
		p.W.Close()
		p.r.Close()
	})
}
