package hookjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// Drop takes our command hooks out of their groups, drops a group left
// empty, and keeps every other group and hook byte for byte.
func TestDrop(t *testing.T) {
	ours := func(c string) bool { return strings.HasPrefix(c, "gatehouse ") }
	groups := []json.RawMessage{
		json.RawMessage(`{"matcher":"Bash","hooks":[{"type":"command","command":"gatehouse hook"}]}`),
		json.RawMessage(`{"matcher": "Bash", "hooks": [{"type":"command","command":"gatehouse hook"}, {"type": "command", "command": "mine"}]}`),
		json.RawMessage(`{"matcher": "*", "hooks": [{"type": "mcp_tool", "command": "gatehouse hook"}]}`),
		json.RawMessage(`not json`),
	}
	kept, dropped := Drop(groups, ours)
	var got []string
	for _, g := range kept {
		got = append(got, string(g))
	}
	want := []string{
		`{"matcher":"Bash","hooks":[{"type": "command", "command": "mine"}]}`,
		string(groups[2]), string(groups[3]),
	}
	if !dropped || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Drop = %v, %q", dropped, got)
	}
	if kept, dropped := Drop(groups[2:], ours); dropped || len(kept) != 2 {
		t.Errorf("Drop of nothing ours = %v, %q", dropped, kept)
	}
	if c := Commands(groups[1]); len(c) != 2 || c[0] != "gatehouse hook" || c[1] != "mine" {
		t.Errorf("Commands = %q", c)
	}
	if c := Commands(groups[3]); c != nil {
		t.Errorf("Commands of no group = %q", c)
	}
}

// DecodeInput reads at most max bytes of JSON, and says which of the
// three ways an input it cannot take fails.
func TestDecodeInput(t *testing.T) {
	var v struct {
		Cwd string `json:"cwd"`
	}
	if err := DecodeInput(strings.NewReader(`{"cwd":"/w"}`), 12, &v); err != nil || v.Cwd != "/w" {
		t.Errorf("DecodeInput = %v, %+v", err, v)
	}
	for in, want := range map[string]string{
		`{"cwd":"/ws"}`: "the hook input is larger than 12 bytes",
		`{"cwd":`:       "the hook input is not valid JSON: unexpected end of JSON input",
	} {
		if err := DecodeInput(strings.NewReader(in), 12, &v); err == nil || err.Error() != want {
			t.Errorf("DecodeInput(%s) = %v, want %s", in, err, want)
		}
	}
}

// Marshal and Write keep a command's >&2 as it is written; Write ends the
// line, Marshal does not.
func TestMarshalWrite(t *testing.T) {
	v := map[string]string{"command": "x 2>&1 <in"}
	if got := string(Marshal(v)); got != `{"command":"x 2>&1 <in"}` {
		t.Errorf("Marshal = %s", got)
	}
	var b strings.Builder
	if err := Write(&b, v); err != nil || b.String() != "{\"command\":\"x 2>&1 <in\"}\n" {
		t.Errorf("Write = %v, %q", err, b.String())
	}
}
