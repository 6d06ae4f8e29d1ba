package gemini

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// beforeTool is the BeforeTool input Gemini CLI 0.61.0 writes to the
// hook's stdin for a shell call (@google/gemini-cli 0.61.0 from npm,
// packages/core/src/hooks/hookEventHandler.ts createBaseInput and
// fireBeforeToolEvent: session_id, transcript_path, cwd,
// hook_event_name, timestamp, tool_name, tool_input as the model gave it).
const beforeTool = `{"session_id":"6f1c0a52-3a0e-4a8b-9d7e-0c2b3f4e5a61","transcript_path":"/home/u/.gemini/tmp/p/chats/session.json","cwd":"/home/u/proj","hook_event_name":"BeforeTool","timestamp":"2026-12-06T23:40:00.000Z","tool_name":"run_shell_command","tool_input":{"command":"ls -la","description":"List the files","dir_path":"sub"}}`

func TestDecodeShell(t *testing.T) {
	in, err := Decode(strings.NewReader(beforeTool))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := in.Shell()
	if err != nil {
		t.Fatal(err)
	}
	if sh.Command != "ls -la" || sh.Dir != "/home/u/proj/sub" || in.SessionID != "6f1c0a52-3a0e-4a8b-9d7e-0c2b3f4e5a61" {
		t.Errorf("decoded %+v, session %q", sh, in.SessionID)
	}
	for name, bad := range map[string]string{
		"other event": strings.Replace(beforeTool, `"BeforeTool"`, `"AfterTool"`, 1),
		"not JSON":    beforeTool[:40],
	} {
		if _, err := Decode(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	for name, ti := range map[string]string{
		"no command":      `{"description":"x"}`,
		"null command":    `{"command":null}`,
		"empty command":   `{"command":""}`,
		"number dir_path": `{"command":"ls","dir_path":3}`,
	} {
		in := &Input{Cwd: "/w", ToolName: ToolShell}
		json.Unmarshal([]byte(ti), &in.ToolInput)
		if _, err := in.Shell(); err == nil {
			t.Errorf("%s: read", name)
		}
	}
	in = &Input{Cwd: "relative", ToolInput: map[string]json.RawMessage{"command": []byte(`"ls"`)}}
	if _, err := in.Shell(); err == nil {
		t.Error("a relative cwd was read")
	}
}

// The answers have the shape Gemini CLI 0.61.0 reads (packages/core/src/
// hooks/types.ts: DefaultHookOutput.isBlockingDecision, getEffectiveReason,
// BeforeToolHookOutput.getModifiedToolInput).
func TestAnswers(t *testing.T) {
	for _, c := range []struct {
		out    *Output
		want   string
		blocks bool
	}{
		{Deny("Gatehouse denied this command (analysis): <x>"), `{"decision":"deny","reason":"Gatehouse denied this command (analysis): <x>"}`, true},
		{Allow(), `{"decision":"allow"}`, false},
		{Route(`'/usr/bin/gatehouse-hook' relay t.1`), `{"decision":"allow","hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"'/usr/bin/gatehouse-hook' relay t.1"}}}`, false},
	} {
		var b bytes.Buffer
		if err := c.out.Encode(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(b.String()); got != c.want || c.out.Blocks() != c.blocks {
			t.Errorf("got %s (blocks %v), want %s (blocks %v)", got, c.out.Blocks(), c.want, c.blocks)
		}
	}
}
