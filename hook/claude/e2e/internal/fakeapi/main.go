// Command fakeapi is a Messages API on 127.0.0.1 that asks the real
// Claude Code for one Bash call, for the README's newcomer journey
// (.ci/readme-install-test.sh), which runs claude -p against it.
//
//	fakeapi -command CMD -addr FILE -result FILE
//
// It listens on a free port of 127.0.0.1 and writes its base URL
// (http://127.0.0.1:PORT, for ANTHROPIC_BASE_URL) to the -addr file once
// it listens. It answers each request that offers the Bash tool with one
// Bash tool_use of CMD until a tool_result comes back (a request may be
// sent again), and every other request with the text "done", which ends
// the conversation. The first tool_result it receives is
// written to the -result file: "is_error: true" or "is_error: false" on
// the first line, then the result's text as Claude Code sent it. It runs
// until it is signalled.
//
// The Go end-to-end tests of hook/claude/e2e keep a fake API of their own
// (fakeAPI in e2e_test.go), in the test's process; this one is a program,
// for a shell script. Both read requests and stream answers with
// internal/messagesapi.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/hook/claude/e2e/internal/messagesapi"
)

func main() {
	command := flag.String("command", "", "the Bash command to ask for")
	addrFile := flag.String("addr", "", "the file to write the base URL to")
	resultFile := flag.String("result", "", "the file to write the first tool_result to")
	flag.Parse()
	if *command == "" || *addrFile == "" || *resultFile == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: fakeapi -command CMD -addr FILE -result FILE")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	api := &fakeAPI{command: *command, resultFile: *resultFile}
	go func() {
		if err := http.Serve(l, api); err != nil {
			fail(err)
		}
	}()
	if err := writeFile(*addrFile, "http://"+l.Addr().String()+"\n"); err != nil {
		fail(err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fakeapi:", err)
	os.Exit(1)
}

// writeFile writes s to path whole: a reader sees nothing or all of it.
func writeFile(path, s string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// fakeAPI asks for one Bash call and records its tool_result.
type fakeAPI struct {
	command    string
	resultFile string

	mu   sync.Mutex
	done bool // the tool_result was recorded
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, turn := messagesapi.Read(w, r)
	if !turn {
		return
	}
	f.mu.Lock()
	for _, b := range req.ToolResults() {
		if !f.done {
			f.done = true
			if err := writeFile(f.resultFile, fmt.Sprintf("is_error: %t\n%s\n", b.IsError, b.Content)); err != nil {
				fmt.Fprintln(os.Stderr, "fakeapi:", err)
			}
		}
	}
	ask := req.Offers("Bash") && !f.done // asked again until answered: a request may be retried
	f.mu.Unlock()

	if !ask {
		messagesapi.Answer(w, "msg_journey_done", req.Model, nil)
		return
	}
	messagesapi.Answer(w, "msg_journey_bash", req.Model, &messagesapi.ToolUse{ID: "toolu_journey", Name: "Bash",
		Input: map[string]any{"command": f.command, "description": "the README journey's routed call"}})
}
