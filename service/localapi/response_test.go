package localapi

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// readAll reads raw as a response to method and returns its status and
// whole body.
func readAll(raw, method string) (*response, string, error) {
	r, err := readResponse(bufio.NewReader(strings.NewReader(raw)), method)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(r.Body)
	return r, string(b), err
}

// Responses as the service's HTTP server frames them, and as HTTP/1.1
// allows them to be framed: the status and the body come out whole, and
// the same as net/http reads them.
func TestReadResponse(t *testing.T) {
	for _, tc := range []struct {
		name, raw, method string
		code              int
		status, body      string
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}", methodPost, 200, "200 OK", `{"ok":true}`},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n", methodPost, 200, "200 OK", "hello, world"},
		{"chunked, upper-case size and header", "HTTP/1.1 200 OK\r\nTRANSFER-ENCODING: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", methodGet, 200, "200 OK", "0123456789"},
		{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", methodGet, 200, "200 OK", "hi"},
		{"no framing: to the end", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it", methodGet, 200, "200 OK", "all of it"},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", methodPost, 204, "204 No Content", ""},
		{"error status", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 21\r\n\r\n{\"error\":\"reloading\"}", methodGet, 503, "503 Service Unavailable", `{"error":"reloading"}`},
		{"status without text", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", methodGet, 200, "200", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, body, err := readAll(tc.raw, tc.method)
			if err != nil || r.StatusCode != tc.code || r.Status != tc.status || body != tc.body {
				t.Fatalf("got %+v %q %v; want %d %q %q", r, body, err, tc.code, tc.status, tc.body)
			}
			hr, err := http.ReadResponse(bufio.NewReader(strings.NewReader(tc.raw)), &http.Request{Method: tc.method})
			if err != nil {
				t.Fatal(err)
			}
			hb, err := io.ReadAll(hr.Body)
			if err != nil || string(hb) != body || hr.StatusCode != r.StatusCode {
				t.Fatalf("net/http reads %d %q (%v); this reader %d %q", hr.StatusCode, hb, err, r.StatusCode, body)
			}
		})
	}
}

// What is not a response, or a body cut short, is an error, never a
// shorter body taken for the whole.
func TestReadResponseRefuses(t *testing.T) {
	long := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 5000) + "\r\n\r\n"
	many := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X: 1\r\n", maxHeaders+1) + "\r\n"
	for _, tc := range []struct {
		name, raw string
		want      error // nil: any error
	}{
		{"nothing", "", io.EOF},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", errMalformed},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", errMalformed},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", errMalformed},
		{"status run together", "HTTP/1.1 2000 OK\r\n\r\n", errMalformed},
		{"head cut short", "HTTP/1.1 200 OK\r\nContent-Len", io.ErrUnexpectedEOF},
		{"header without colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", errMalformed},
		{"line too long", long, errMalformed},
		{"too many headers", many, errMalformed},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", errMalformed},
		{"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", errMalformed},
		{"other transfer encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", errMalformed},
		{"body short of its length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", io.ErrUnexpectedEOF},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", errMalformed},
		{"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n", errMalformed},
		{"chunk cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nhello", io.ErrUnexpectedEOF},
		{"no last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", io.ErrUnexpectedEOF},
		{"trailer cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n", io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, body, err := readAll(tc.raw, methodGet)
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got body %q, error %v; want %v", body, err, tc.want)
			}
		})
	}
}

// Whatever the bytes, a response this reader takes whole has the status
// and the body net/http finds in them, when net/http takes them whole too.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\n\r\nrest",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := readResponse(bufio.NewReader(bytes.NewReader(raw)), methodPost)
		if err != nil {
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: methodPost})
		if err != nil {
			return
		}
		hb, err := io.ReadAll(hr.Body)
		if err != nil {
			return
		}
		if hr.StatusCode != r.StatusCode || !bytes.Equal(hb, body) {
			t.Fatalf("%q: net/http reads %d %q, this reader %d %q", raw, hr.StatusCode, hb, r.StatusCode, body)
		}
	})
}
