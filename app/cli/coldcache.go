package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/app/cli/execface"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

// coldQuiet is how long a command may be silent, in a cold tool cache,
// before the terminal is told why it may take a while.
const coldQuiet = 10 * time.Second

// A silence watches a command's output and, once it has been quiet for
// quiet, says why on the terminal: the command's tool cache is cold, so
// its builds fetch and compile everything this first time. It says so
// once.
type silence struct {
	mu    sync.Mutex
	last  time.Time
	said  bool
	term  io.Writer
	line  string
	quiet time.Duration
	now   func() time.Time
}

// coldCacheWatch returns the silence for a call of agent's when stderr is
// a terminal and the agent's tool cache below root is cold; nil
// otherwise (a pipe, a file, or a cache with something in it).
func coldCacheWatch(stderr io.Writer, root, agent, home string) *silence {
	if root == "" || !isTerminal(stderr) {
		return nil
	}
	c := toolcache.For(root, agent)
	if !c.Cold() {
		return nil
	}
	return newSilence(stderr, fmt.Sprintf("gatehouse: still running; %s's tool cache (%s) is empty, so a build or install fetches and compiles everything this once; later ones reuse it", agent, fspath.Tilde(c.Dir, home)), coldQuiet, time.Now)
}

func newSilence(w io.Writer, line string, quiet time.Duration, now func() time.Time) *silence {
	return &silence{term: w, line: line, quiet: quiet, now: now, last: now()}
}

// writer returns w, noting each write as output.
func (s *silence) writer(w io.Writer) io.Writer {
	return silenceWriter{s, w}
}

type silenceWriter struct {
	s *silence
	w io.Writer
}

func (w silenceWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.last = w.s.now()
	return w.w.Write(p)
}

// check says the line when the output has been quiet long enough; it
// reports whether it has been said.
func (s *silence) check() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.said && s.now().Sub(s.last) >= s.quiet {
		s.said = true
		fmt.Fprintln(s.term, s.line)
	}
	return s.said
}

// watch checks at each tick until the line is said or stop is closed.
func (s *silence) watch(tick <-chan time.Time, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-tick:
			if s.check() {
				return
			}
		}
	}
}

// isTerminal reports whether v is a terminal.
func isTerminal(v any) bool { return execface.IsTerminal(v) }
