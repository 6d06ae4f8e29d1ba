package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A session's id and agent come from the agent: printed each on its one
// line, escaped, they cannot draw a line that looks like a listening
// port or a forward, nor send the terminal a control.
func TestPrintSessionNetworkEscapes(t *testing.T) {
	var out strings.Builder
	now := time.Now()
	printSessionNetwork(&out, api.SessionNetwork{Agent: "claude-code\x1b]0;x\a", SessionID: "s1\n  forward:   22 → http://127.0.0.1:22/",
		Since: now, LastUsed: now, Running: 1, Listening: []api.ListeningPort{{Port: 8000, Addr: "127.0.0.1"}}})
	got := out.String()
	if strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("a raw control reached the terminal: %q", got)
	}
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `session s1\n  forward:   22`) || lines[1] != "  listening: 8000 on 127.0.0.1" {
		t.Errorf("lines %q", lines)
	}
}

// SESSION PORT parse before anything is asked: a bad one is a usage error
// (exit 2) naming the argument.
func TestPortRequestArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "ports open: missing SESSION"},
		{[]string{""}, "ports open: missing SESSION"},
		{[]string{"s1"}, "ports open: missing PORT"},
		{[]string{"s1", "8000", "x"}, `ports open: unexpected argument "x"`},
		{[]string{"s1", "http"}, `ports open: PORT: "http" is not a port number from 1 to 65535`},
		{[]string{"s1", "0"}, `PORT: "0" is not a port number`},
		{[]string{"s1", "65536"}, `PORT: "65536" is not a port number`},
		{[]string{"s1", "+80"}, `PORT: "+80" is not a port number`},
		{[]string{"s1", "-1"}, `PORT: "-1" is not a port number`},
	} {
		_, err := portRequest("ports open", tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || report(&strings.Builder{}, err) != ExitUsage {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	req, err := portRequest("ports open", []string{"ab12", "8000"})
	if err != nil || req != (api.PortRequest{SessionID: "ab12", Port: 8000, By: api.ByCLI}) {
		t.Errorf("ab12 8000: %+v, %v", req, err)
	}
}
