// Package messagesapi is the part of Anthropic's Messages API that the fake
// APIs Claude Code is run against share: reading a request's offered tools
// and tool_results, and streaming an answer that is one tool call or the
// text "done". The end-to-end tests (fakeAPI in hook/claude/e2e) and the
// README journey's program (internal/fakeapi) both answer with it.
package messagesapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
)

// Request is what a fake API reads of a Messages request.
type Request struct {
	Model    string `json:"model"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// ToolResult is one tool_result block of a request.
type ToolResult struct {
	ToolUseID string
	Content   string // the text, flattened
	IsError   bool
}

// Read reads a request to r. It answers, itself, every request that is
// not a conversation turn (count_tokens and the like) and returns false
// for those.
func Read(w http.ResponseWriter, r *http.Request) (Request, bool) {
	var req Request
	body, _ := io.ReadAll(r.Body)
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 10}`)
		return req, false
	}
	json.Unmarshal(body, &req)
	return req, true
}

// Offers reports whether the request offers the tool name.
func (req Request) Offers(name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// ToolResults returns the tool_results of every message, not only the
// last: Claude Code may end the request with a reminder of its own after
// them.
func (req Request) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, Content: e2etest.Text(b.Content), IsError: b.IsError})
			}
		}
	}
	return out
}

// ToolUse is a tool call an answer asks for.
type ToolUse struct {
	ID    string
	Name  string
	Input map[string]any
}

// Answer streams an assistant message: the tool call use, or, when use is
// nil, the text "done", which ends the conversation. The message id must
// be one of the answer's own: Claude Code merges assistant messages that
// share one.
func Answer(w http.ResponseWriter, id, model string, use *ToolUse) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	ev := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		fl.Flush()
	}
	ev("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
	}})
	if use != nil {
		in, _ := json.Marshal(use.Input)
		ev("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": use.ID, "name": use.Name, "input": map[string]any{}}})
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
