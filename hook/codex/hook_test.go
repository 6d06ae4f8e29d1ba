package codex

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// payload is the PreToolUse input Codex 0.169.0 gave a hook for its
// exec_command tool in codex exec (hook/codex/e2e), paths shortened; its
// shape is PreToolUseCommandInput (codex-rs/hooks/src/events/pre_tool_use.rs,
// command_input_json, in openai/codex at
// 0082977cebb9fbd524046914dbc4305e5b8e0b95).
const payload = `{"session_id":"01a24d9e-5853-7ab2-96f9-dc5534cef78a","turn_id":"01a24d9e-58d6-7911-8c0a-5e64490f4149",` +
	`"transcript_path":"/home/u/.codex/sessions/2026/12/06/rollout-2026-12-06T23-09-12-01a24d9e-5853-7ab2-96f9-dc5534cef78a.jsonl",` +
	`"cwd":"/home/u/proj","hook_event_name":"PreToolUse","model":"gpt-e2e","permission_mode":"bypassPermissions",` +
	`"tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"call_e2e0"}`

func TestDecode(t *testing.T) {
	in, err := Decode(strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := in.Command()
	if err != nil || cmd != "ls -la" || in.Cwd != "/home/u/proj" || in.SessionID != "01a24d9e-5853-7ab2-96f9-dc5534cef78a" || in.ToolUseID != "call_e2e0" || in.CheckCwd() != nil {
		t.Errorf("decoded %+v, command %q, %v", in, cmd, err)
	}
	for _, bad := range []string{`{`, `{"hook_event_name":"PostToolUse","tool_name":"Bash"}`, `{"hook_event_name":"PreToolUse"}`} {
		if _, err := Decode(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: decoded", bad)
		}
	}
	for _, ti := range []string{`{}`, `{"command":null}`, `{"command":""}`, `{"command":["ls"]}`} {
		in, _ := Decode(strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":` + ti + `}`))
		if _, err := in.Command(); err == nil {
			t.Errorf("tool_input %s: a command", ti)
		}
	}
}

// The answers are what Codex's output parser takes as a block with the
// reason and as an allow with the input rewritten
// (codex-rs/hooks/src/engine/output_parser.rs parse_pre_tool_use): a deny
// carries a non-empty reason, a rewrite an updatedInput with every other
// field kept.
func TestAnswers(t *testing.T) {
	in, _ := Decode(strings.NewReader(strings.Replace(payload, `{"command":"ls -la"}`, `{"command":"ls -la","workdir":"/w"}`, 1)))
	var b bytes.Buffer
	Route(in, "'/usr/bin/gatehouse-hook' relay ght1.X", "routed").Encode(&b)
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"routed","updatedInput":{"command":"'/usr/bin/gatehouse-hook' relay ght1.X","workdir":"/w"}}}` + "\n"
	if b.String() != want {
		t.Errorf("route:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	Deny(" ").Encode(&b)
	var d Output
	if json.Unmarshal(b.Bytes(), &d) != nil || d.HookSpecificOutput.PermissionDecision != "deny" || strings.TrimSpace(d.HookSpecificOutput.PermissionDecisionReason) == "" || d.HookSpecificOutput.UpdatedInput != nil {
		t.Errorf("deny: %s", b.String())
	}
}
