package egress

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// tunnel copies bytes both ways between client and upstream until both
// directions end, passing on half-closes. pending are bytes already read
// from the client that belong to upstream. The connection ends when no
// byte moved either way for the idle timeout, or at the lifetime limit
// (counted from start).
//
// A watchdog ends the tunnel when it went idle or reached its lifetime;
// the copies record their progress for it.
func (p *Proxy) tunnel(client, upstream net.Conn, pending []byte, start time.Time) {
	defer p.removeConn(upstream)
	defer upstream.Close()
	end := start.Add(p.opts.MaxLifetime)
	var last atomic.Int64 // unix nanoseconds of the last progress
	last.Store(time.Now().UnixNano())
	abort := func() {
		client.Close()
		upstream.Close()
	}
	tuneLoopback(client)
	tuneLoopback(upstream)
	seen := p.newSeen()
	seen.scan(pending)
	if len(pending) > 0 {
		upstream.SetWriteDeadline(time.Now().Add(p.opts.IdleTimeout))
		if _, err := upstream.Write(pending); err != nil {
			return
		}
		upstream.SetWriteDeadline(time.Time{})
	}
	tick := p.opts.IdleTimeout / 4
	tick = min(max(tick, 100*time.Millisecond), 30*time.Second)

	done := make(chan struct{})
	go func() {
		// The watchdog: idle and lifetime limits, and the case where both
		// directions are stuck writing to peers that do not read.
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				if !now.Before(end) || now.Sub(time.Unix(0, last.Load())) >= p.opts.IdleTimeout {
					abort()
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pipe(upstream, client, &last, abort, seen)
	}()
	pipe(client, upstream, &last, abort, nil)
	wg.Wait()
	close(done)
}

// bufSize is the copy buffer of one direction of a tunnel. Between two
// loopback TCP sockets, reading up to this much at a time moves bytes
// faster than splice(2) through a 1 MiB pipe does, and faster than
// buffers of 128 KiB or 1 MiB (measured on a 2-CPU machine): spliced pages
// cost the reader at the far end more than the two copies save here.
const bufSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// pipe copies src to dst. At end of file it half-closes dst; on any other
// failure it aborts both directions. It blocks in reads and writes without
// deadlines: the watchdog's abort closes both connections, which ends
// them.
func pipe(dst, src net.Conn, last *atomic.Int64, abort func(), seen *seenPlaceholders) {
	if copyBuffered(dst, src, last, seen) == nil {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			return
		}
	}
	abort()
}

// copyBuffered copies src to dst through a buffer until src ends (nil) or
// a read or write fails, and records each read's progress in last. seen,
// when not nil, looks for placeholders in what it copies.
func copyBuffered(dst, src net.Conn, last *atomic.Int64, seen *seenPlaceholders) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	for {
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			seen.scan(buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
