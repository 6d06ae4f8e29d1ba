// Package hookjson holds the JSON the agents' hooks share: the input an
// agent writes on the hook's stdin, and the matcher groups that Claude
// Code and Gemini CLI keep under their settings' hooks ({"matcher": …,
// "hooks": [{"type": "command", "command": …}, …]}). It links the standard
// library and jsonobj alone, as the small hook client does.
package hookjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/internal/jsonobj"
)

// DecodeInput reads the hook's input from r, at most max bytes of JSON,
// into v.
func DecodeInput(r io.Reader, max int, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return fmt.Errorf("reading the hook input: %w", err)
	}
	if len(b) > max {
		return fmt.Errorf("the hook input is larger than %d bytes", max)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("the hook input is not valid JSON: %v", err)
	}
	return nil
}

// Marshal encodes v compact, with <, > and & as they are: a command's
// >&2 stays legible in a settings file. v is a type of ours that always
// encodes.
func Marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Write writes v to w as one line of JSON, with <, > and & as they are,
// in a single write: a hook's answer.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// entry is what a group's hook is matched by.
type entry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// Commands lists the commands of group g's hooks, in order; nil when g is
// not a matcher group.
func Commands(g json.RawMessage) []string {
	var mg struct {
		Hooks []entry `json:"hooks"`
	}
	if json.Unmarshal(g, &mg) != nil {
		return nil
	}
	var out []string
	for _, h := range mg.Hooks {
		out = append(out, h.Command)
	}
	return out
}

// Drop removes from groups every command hook whose command ours
// accepts; a group left with no hook goes, and every other group is kept
// as it was written. It reports whether anything was removed.
func Drop(groups []json.RawMessage, ours func(command string) bool) ([]json.RawMessage, bool) {
	dropped := false
	var kept []json.RawMessage
	for _, g := range groups {
		ng, removed := dropFrom(g, ours)
		dropped = dropped || removed
		if ng != nil {
			kept = append(kept, ng)
		}
	}
	return kept, dropped
}

// dropFrom removes our hooks from one group; it returns nil when nothing
// of the group is left.
func dropFrom(g json.RawMessage, ours func(string) bool) (json.RawMessage, bool) {
	obj, err := jsonobj.ParseJSONOnly(g)
	if err != nil {
		return g, false
	}
	hs, err := obj.Array("hooks", "hooks")
	if err != nil {
		return g, false
	}
	var kept []json.RawMessage
	for _, h := range hs {
		var e entry
		if json.Unmarshal(h, &e) == nil && e.Type == "command" && ours(e.Command) {
			continue
		}
		kept = append(kept, h)
	}
	if len(kept) == len(hs) {
		return g, false
	}
	if len(kept) == 0 {
		return nil, true
	}
	obj.Set("hooks", jsonobj.Array(kept))
	return obj.Encode(), true
}
