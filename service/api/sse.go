package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteEvent writes n as one server-sent event: its type in the event
// line, its JSON in one data line (JSON holds no raw newline).
func WriteEvent(w io.Writer, n StreamNotice) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", n.Type, b)
	return err
}

// ReadEvents reads server-sent events from r, calling fn with each
// notice, until r ends (nil) or holds something that is not one (an
// error). Comment lines (keep-alives) are skipped.
func ReadEvents(r io.Reader, fn func(StreamNotice)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() == 0 {
				continue
			}
			var n StreamNotice
			if err := json.Unmarshal([]byte(data.String()), &n); err != nil {
				return fmt.Errorf("a stream event is not a notice: %w", err)
			}
			data.Reset()
			fn(n)
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "event:"), strings.HasPrefix(line, "id:"), strings.HasPrefix(line, "retry:"):
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		default:
			return fmt.Errorf("a stream line is not a server-sent event field: %q", line)
		}
	}
	return sc.Err()
}
