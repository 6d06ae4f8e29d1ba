package api

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// A frame stream carries one execution's output as it arrives, then how it
// ended. It is the body of the execute and redeem answers and what the
// service writes into a relay's FIFO. Each frame is a type byte, a 4-byte
// big-endian length and that many bytes of payload:
//
//	'1' stdout bytes    '2' stderr bytes    'E' End (JSON), always last
const (
	FrameStdout byte = '1'
	FrameStderr byte = '2'
	FrameEnd    byte = 'E'
)

// MaxFramePayload bounds one frame; longer output is split.
const MaxFramePayload = 1 << 20

// Kinds of StreamError.
const (
	ErrDenied        = "denied"          // the pipeline refused it; nothing ran
	ErrArgument      = "argument"        // a bad argument; nothing ran
	ErrTicketUnknown = "ticket_unknown"  // no such ticket (forged, truncated, from another service)
	ErrTicketUsed    = "ticket_used"     // redeemed before
	ErrTicketExpired = "ticket_expired"  // not redeemed in time; recorded never_ran
	ErrFailedToStart = "failed_to_start" // the sandbox could not start it
	ErrInternal      = "internal"
)

// End is the last frame of a stream.
type End struct {
	// Exit is the status the caller's process ends with: the command's own
	// exit code, 124 on timeout, 126 when it could not start (denied, bad
	// argument, bad ticket), 137 when it was killed.
	Exit   int     `json:"exit"`
	Result *Result `json:"result,omitempty"`
	Event  *Event  `json:"event,omitempty"`
	// Error says why nothing ran, or why it failed to start.
	Error *StreamError `json:"error,omitempty"`
	// Warning is a user-safe account of what went wrong without stopping
	// the command: it ran, but is not (fully) on the audit record.
	Warning string `json:"warning,omitempty"`
}

// StreamError is a user-safe account of why a call did not run.
type StreamError struct {
	Kind      string `json:"kind"`
	BlockedBy string `json:"blocked_by,omitempty"`
	Arg       string `json:"arg,omitempty"`
	Message   string `json:"message"`
	// Hint is the remedy of a denial, when the stage that denied has one.
	Hint string `json:"hint,omitempty"`
}

func (e *StreamError) Error() string { return e.Message }

// Process exit statuses of a governed call.
const (
	ExitTimeout   = 124
	ExitCannotRun = 126
	ExitKilled    = 137
)

// InternalEnd is the end of a call Gatehouse itself failed: nothing of the
// command's own, ExitCannotRun.
func InternalEnd(err error) *End {
	return &End{Exit: ExitCannotRun, Error: &StreamError{Kind: ErrInternal, Message: err.Error()}}
}

// A FrameWriter writes a frame stream. Its Stdout and Stderr writers may be
// used from different goroutines; End must come last.
type FrameWriter struct {
	mu    sync.Mutex
	w     io.Writer
	flush func()
	err   error
}

// NewFrameWriter returns a FrameWriter on w; flush, when not nil, is called
// after each frame.
func NewFrameWriter(w io.Writer, flush func()) *FrameWriter {
	return &FrameWriter{w: w, flush: flush}
}

// Stdout returns a writer that sends stdout frames.
func (f *FrameWriter) Stdout() io.Writer { return frameStream{f, FrameStdout} }

// Stderr returns a writer that sends stderr frames.
func (f *FrameWriter) Stderr() io.Writer { return frameStream{f, FrameStderr} }

// End writes the last frame.
func (f *FrameWriter) End(e *End) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return f.frame(FrameEnd, b)
}

// Err returns the first write error, if any.
func (f *FrameWriter) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *FrameWriter) frame(typ byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for first := true; first || len(p) > 0; first = false {
		n := min(len(p), MaxFramePayload)
		buf := make([]byte, 5+n)
		buf[0] = typ
		binary.BigEndian.PutUint32(buf[1:5], uint32(n))
		copy(buf[5:], p[:n])
		p = p[n:]
		if f.err != nil {
			return f.err
		}
		if _, err := f.w.Write(buf); err != nil {
			f.err = err
			return err
		}
		if f.flush != nil {
			f.flush()
		}
	}
	return nil
}

type frameStream struct {
	f   *FrameWriter
	typ byte
}

func (s frameStream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := s.f.frame(s.typ, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ErrNoEnd is returned by ReadStream when the stream stopped before its
// End frame: the service went away mid-call.
var ErrNoEnd = errors.New("the stream ended before the result")

// ReadStream copies stdout and stderr frames from r to stdout and stderr
// as they arrive and returns the End frame.
func ReadStream(r io.Reader, stdout, stderr io.Writer) (*End, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [5]byte
	buf := make([]byte, 64<<10)
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, ErrNoEnd
			}
			return nil, err
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if n > MaxFramePayload {
			return nil, fmt.Errorf("frame of %d bytes is too large", n)
		}
		if int(n) > len(buf) {
			buf = make([]byte, n)
		}
		p := buf[:n]
		if _, err := io.ReadFull(br, p); err != nil {
			return nil, ErrNoEnd
		}
		switch hdr[0] {
		case FrameStdout:
			stdout.Write(p)
		case FrameStderr:
			stderr.Write(p)
		case FrameEnd:
			var e End
			if err := json.Unmarshal(p, &e); err != nil {
				return nil, fmt.Errorf("decoding the result: %w", err)
			}
			return &e, nil
		default:
			return nil, fmt.Errorf("unknown frame type %q", hdr[0])
		}
	}
}
