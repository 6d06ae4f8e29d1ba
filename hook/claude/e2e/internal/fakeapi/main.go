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
// for a shell script.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
	body, _ := io.ReadAll(r.Body)
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 10}`)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	offersBash := false
	for _, t := range req.Tools {
		offersBash = offersBash || t.Name == "Bash"
	}

	f.mu.Lock()
	// Every message, not only the last: Claude Code may end the request
	// with a reminder of its own after the tool_result.
	for _, m := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			IsError bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" && !f.done {
				f.done = true
				if err := writeFile(f.resultFile, fmt.Sprintf("is_error: %t\n%s\n", b.IsError, resultText(b.Content))); err != nil {
					fmt.Fprintln(os.Stderr, "fakeapi:", err)
				}
			}
		}
	}
	ask := offersBash && !f.done // asked again until answered: a request may be retried
	f.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	ev := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		fl.Flush()
	}
	// A message id of its own for each answer: Claude Code merges
	// assistant messages that share one.
	id := "msg_journey_done"
	if ask {
		id = "msg_journey_bash"
	}
	ev("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
	}})
	if ask {
		in, _ := json.Marshal(map[string]any{"command": f.command, "description": "the README journey's routed call"})
		ev("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": "toolu_journey", "name": "Bash", "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{
			"type": "input_json_delta", "partial_json": string(in)}})
		ev("content_block_stop", map[string]any{"index": 0})
		ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}})
	} else {
		ev("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": "done"}})
		ev("content_block_stop", map[string]any{"index": 0})
		ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}})
	}
	ev("message_stop", map[string]any{})
}

// resultText flattens a tool_result's content (a string or text blocks).
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		b.WriteString(x.Text)
	}
	return b.String()
}
