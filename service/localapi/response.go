package localapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The request methods the client sends.
const (
	methodGet  = "GET"
	methodPost = "POST"
)

// A response is the service's HTTP/1.1 answer to one call: the status and
// the body, framed as the service sent it (a length, chunks, or the rest of
// the connection).
type response struct {
	StatusCode int
	Status     string // "200 OK", as the status line says it
	Body       io.ReadCloser
}

// maxHeaders bounds the header lines of a response; each line is bounded
// by the reader's buffer (4 KiB).
const maxHeaders = 64

var errMalformed = errors.New("malformed response from the Gatehouse service")

// readResponse reads the status line and headers of the response to a
// request of method from br, and returns it with its body to read.
func readResponse(br *bufio.Reader, method string) (*response, error) {
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	proto, status, ok := strings.Cut(line, " ")
	// The service speaks HTTP/1.1 (whose framing this reads) to a request
	// of HTTP/1.1.
	if !ok || proto != "HTTP/1.1" || len(status) < 3 {
		return nil, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	code, err := strconv.Atoi(status[:3])
	if err != nil || code < 100 || len(status) > 3 && status[3] != ' ' {
		return nil, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	r := &response{StatusCode: code, Status: status}
	length, chunked := int64(-1), false
	for i := 0; ; i++ {
		h, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if h == "" {
			break
		}
		if i == maxHeaders {
			return nil, fmt.Errorf("%w: more than %d header lines", errMalformed, maxHeaders)
		}
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("%w: header line %q", errMalformed, h)
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-length":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 || length >= 0 && n != length {
				return nil, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
			length = n
		case "transfer-encoding":
			if !strings.EqualFold(value, "chunked") {
				return nil, fmt.Errorf("%w: Transfer-Encoding %q", errMalformed, value)
			}
			chunked = true
		}
	}
	switch {
	case method == "HEAD" || code == 204 || code == 304 || code < 200:
		r.Body = io.NopCloser(strings.NewReader(""))
	case chunked:
		r.Body = io.NopCloser(&chunkedReader{r: br})
	case length >= 0:
		r.Body = io.NopCloser(&lengthReader{r: br, n: length})
	default:
		// No framing: the body is the rest of the connection.
		r.Body = io.NopCloser(br)
	}
	return r, nil
}

// readLine reads one line of the response's head or chunk framing, without
// its CRLF. A line longer than br's buffer is an error.
func readLine(br *bufio.Reader) (string, error) {
	b, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return "", fmt.Errorf("%w: a line longer than %d bytes", errMalformed, br.Size())
	}
	if err == io.EOF && len(b) > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// lengthReader reads a body of n bytes; a connection that ends before them
// is io.ErrUnexpectedEOF.
type lengthReader struct {
	r *bufio.Reader
	n int64
}

func (l *lengthReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return k, err
}

// chunkedReader reads a body in HTTP/1.1's chunked framing: each chunk's
// size in hex (extensions after ';' ignored), its bytes, CRLF; a chunk of
// size 0, then trailer lines to an empty one, ends it.
type chunkedReader struct {
	r    *bufio.Reader
	n    int64 // left of the current chunk
	done bool
	err  error
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.n == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if c.done {
			return 0, io.EOF
		}
		c.err = c.next()
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	switch {
	case err == io.EOF:
		c.err = io.ErrUnexpectedEOF
	case err != nil:
		c.err = err
	case c.n == 0:
		// The chunk's CRLF.
		if l, err := readLine(c.r); err != nil || l != "" {
			c.err = fmt.Errorf("%w: no CRLF after a chunk", errMalformed)
		}
	}
	if k > 0 {
		return k, nil
	}
	return 0, c.err
}

// next reads the size line of the next chunk, and the trailer after the
// last.
func (c *chunkedReader) next() error {
	line, err := readLine(c.r)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	size, _, _ := strings.Cut(line, ";")
	n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%w: chunk size %q", errMalformed, line)
	}
	if n > 0 {
		c.n = n
		return nil
	}
	for i := 0; ; i++ {
		l, err := readLine(c.r)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		if l == "" {
			break
		}
		if i == maxHeaders {
			return fmt.Errorf("%w: more than %d trailer lines", errMalformed, maxHeaders)
		}
	}
	c.done = true
	return nil
}
