package api

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// PathToolOutput cleans the output of an agent's own tool
// (ToolOutputRequest).
const PathToolOutput = "/v1/tool-output"

// MaxToolOutput bounds the JSON of one tool output the service cleans:
// Claude Code's Read returns at most a few hundred KiB, an MCP result
// about 25 000 tokens.
const MaxToolOutput = 16 << 20

// ActionToolOutput is the action type of the event that records an agent
// tool's output Gatehouse redacted before the model saw it.
const ActionToolOutput = "tool:output"

// ToolOutputRequest asks the service to clean what one of an agent's own
// tools returned (Claude Code's Read or Grep, an MCP tool's result: tools
// that run outside every sandbox) before the model sees it: the same
// credential redaction and DLP patterns as a command's output.
type ToolOutputRequest struct {
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Output is the tool's output as the agent gave it: any JSON value.
	Output    json.RawMessage `json:"output"`
	Cwd       string          `json:"cwd,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	Surface   string          `json:"surface,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
}

// ToolOutputResponse is the cleaned output. Output is set only when
// something was redacted: the request's output with every string in it
// redacted, the rest of the value as it was. EventID names the record of
// that redaction.
type ToolOutputResponse struct {
	Output     json.RawMessage `json:"output,omitempty"`
	Redactions int             `json:"redactions"`
	EventID    string          `json:"event_id,omitempty"`
	// Warning says the redaction is not on the record.
	Warning string `json:"warning,omitempty"`
}

// MapStrings returns the JSON value raw with f applied to every string in
// it (object keys aside), and the number f reported for each summed.
// Numbers keep their text; objects keep their keys (in Go's sorted order).
func MapStrings(raw json.RawMessage, f func(string) (string, int)) (json.RawMessage, int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, 0, fmt.Errorf("the tool output is not JSON: %v", err)
	}
	if dec.More() {
		return nil, 0, fmt.Errorf("the tool output is not one JSON value")
	}
	n := 0
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			s, m := f(x)
			n += m
			return s
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	v = walk(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, 0, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), n, nil
}
