package socket

import (
	"log/slog"
	"net"
	"sync"
)

// Limit returns a listener that holds at most n connections from l open
// at once: Accept waits, leaving the next connection in l's backlog,
// until one of them closes. The first wait of a run at the limit is
// logged.
func Limit(l net.Listener, n int, logger *slog.Logger) net.Listener {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}), logger: logger, n: n}
}

type limitListener struct {
	net.Listener
	slots  chan struct{}
	done   chan struct{}
	close  sync.Once
	logger *slog.Logger
	n      int
	warned bool // only Accept's goroutine uses it
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
		l.warned = false
	default:
		if !l.warned {
			l.warned = true
			l.logger.Warn("connection limit reached; new connections wait until one closes", "max", l.n)
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
