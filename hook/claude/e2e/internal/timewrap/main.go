// Command timewrap times the hook and the relay inside the real Claude
// Code, for the session benchmark of hook/claude/e2e (its breakdown
// sessions only: timewrap's own start is on the call's path there).
//
//	timewrap hook LOG CMD ARGS...
//
// runs the hook CMD ARGS with timewrap's stdin, appends "hook START END"
// (Unix nanoseconds, around the child process) to LOG, and writes the
// hook's answer to stdout, the relay command of a routed answer prefixed
// with "timewrap relay", so that the relay is timed too.
//
//	timewrap relay CMD ARGS...
//
// runs the relay CMD ARGS and then writes "timewrap-relay START END" to
// stderr, which reaches the model in the tool_result.
//
//	timewrap permission CMD ARGS...
//
// runs the PermissionRequest hook CMD ARGS on timewrap's stdin with a relay
// command "timewrap hook" prefixed given back its own form, so that the
// hook recognises the relay it wrote, and passes its answer on. All three
// exit with the child's status.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fail("usage: timewrap hook LOG CMD ARGS... | timewrap relay CMD ARGS... | timewrap permission CMD ARGS...")
	}
	switch os.Args[1] {
	case "hook":
		if len(os.Args) < 4 {
			fail("usage: timewrap hook LOG CMD ARGS...")
		}
		hook(os.Args[2], os.Args[3:])
	case "relay":
		relay(os.Args[2:])
	case "permission":
		permission(os.Args[2:])
	default:
		fail("unknown mode %q", os.Args[1])
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "timewrap: "+format+"\n", a...)
	os.Exit(2)
}

// run runs argv with stdin and stderr passed through, stdout to out, and
// returns its exit status and the times around it.
func run(argv []string, out *os.File, buf *bytes.Buffer) (code int, start, end time.Time) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	if buf != nil {
		cmd.Stdout = buf
	} else {
		cmd.Stdout = out
	}
	start = time.Now()
	err := cmd.Run()
	end = time.Now()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), start, end
	case err != nil:
		fail("%v", err)
	}
	return 0, start, end
}

func hook(log string, argv []string) {
	var buf bytes.Buffer
	code, start, end := run(argv, nil, &buf)
	if f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		fmt.Fprintf(f, "hook %d %d\n", start.UnixNano(), end.UnixNano())
		f.Close()
	}
	out := buf.Bytes()
	var ans map[string]any
	if json.Unmarshal(out, &ans) == nil {
		if hso, ok := ans["hookSpecificOutput"].(map[string]any); ok {
			if in, ok := hso["updatedInput"].(map[string]any); ok {
				if c, ok := in["command"].(string); ok {
					in["command"] = relayPrefix() + c
					var enc bytes.Buffer
					e := json.NewEncoder(&enc)
					e.SetEscapeHTML(false)
					e.Encode(ans)
					out = enc.Bytes()
				}
			}
		}
	}
	os.Stdout.Write(out)
	os.Exit(code)
}

func relay(argv []string) {
	code, start, end := run(argv, os.Stdout, nil)
	fmt.Fprintf(os.Stderr, "timewrap-relay %d %d\n", start.UnixNano(), end.UnixNano())
	os.Exit(code)
}

// relayPrefix is what "timewrap hook" puts before a relay command.
func relayPrefix() string {
	self, err := os.Executable()
	if err != nil {
		fail("%v", err)
	}
	return "'" + strings.ReplaceAll(self, "'", `'\''`) + "' relay "
}

func permission(argv []string) {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("%v", err)
	}
	var m map[string]any
	if json.Unmarshal(in, &m) == nil {
		if ti, ok := m["tool_input"].(map[string]any); ok {
			if c, ok := ti["command"].(string); ok && strings.HasPrefix(c, relayPrefix()) {
				ti["command"] = strings.TrimPrefix(c, relayPrefix())
				in, _ = json.Marshal(m)
			}
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		fail("%v", err)
	}
}
