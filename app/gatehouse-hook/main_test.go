package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Without a service the hook fails closed, the relay explains, and bad
// arguments are usage errors, as in the gatehouse binary.
func TestNoService(t *testing.T) {
	home := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "XDG_RUNTIME_DIR":
			return home
		}
		return ""
	}
	call := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, getenv)
		return code, out.String(), errb.String()
	}
	bash := `{"session_id":"s1","cwd":"` + home + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"true"}}`
	// A relay asking to leave Claude Code's sandbox, no service to vouch
	// for its ticket: no answer, the person decides.
	perm := `{"session_id":"s1","cwd":"` + home + `","hook_event_name":"PermissionRequest","tool_name":"Bash",` +
		`"tool_input":{"command":"'/usr/bin/gatehouse-hook' relay ght1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","dangerouslyDisableSandbox":true}}`
	for _, tc := range []struct {
		stdin      string
		args       []string
		code       int
		out, errix string
	}{
		{bash, []string{"hook", "claude"}, 0, `"permissionDecision":"deny"`, ""},
		{bash, []string{"hook", "claude", "--routing", "framework"}, 0, "not reachable", ""},
		{perm, []string{"hook", "claude"}, 0, "", ""},
		{`{"session_id":"s1","cwd":"/","tool_name":"WebFetch","tool_input":{}}`, []string{"hook", "claude"}, 0, "", ""},
		{"", []string{"hook", "claude", "--routing", "nope"}, 2, "", "want governed_shell or framework"},
		// Codex: denied with the reason when the service is not there, or
		// the input cannot be read; no answer for a tool not the shell.
		{strings.Replace(bash, `"s1"`, `"s1","turn_id":"t1","tool_use_id":"c1"`, 1), []string{"hook", "codex"}, 0, `"permissionDecision":"deny","permissionDecisionReason":"Gatehouse did not run this command: the Gatehouse service is not reachable`, ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/","tool_input":{"command":7}}`, []string{"hook", "codex"}, 0, `"permissionDecision":"deny"`, ""},
		{`{"session_id":"s1","cwd":"/","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"}}`, []string{"hook", "codex"}, 0, "", ""},
		// Gemini CLI: denied with status 2 and the reason, which Gemini
		// shows the model; no answer for a tool not the shell.
		{`{"session_id":"s1","cwd":"` + home + `","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"true","description":"x"}}`, []string{"hook", "gemini"}, 2, `"decision":"deny","reason":"Gatehouse did not run this command: the Gatehouse service is not reachable`, ""},
		{`{"session_id":"s1","cwd":"/","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"x"}}`, []string{"hook", "gemini"}, 0, "", ""},
		// Cursor: every shell command denied, service or not, and the
		// model sent to the gatehouse MCP server's shell__execute.
		{`{"hook_event_name":"beforeShellExecution","conversation_id":"c1","generation_id":"g1","command":"true","cwd":"/"}`, []string{"hook", "cursor"}, 0, `"permission":"deny"`, ""},
		{"", []string{"relay"}, 2, "", "usage: gatehouse relay TICKET"},
		{"", []string{"relay", "ght1.short"}, 126, "", "malformed"},
		{"", []string{"relay", "ght1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, 126, "", "not running here"},
		{"", []string{"exec", "true"}, 2, "", "want 'hook claude"},
	} {
		code, out, errs := call(tc.stdin, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.errix) || (tc.out == "" && out != "") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q", tc.args, code, out, errs, tc.code, tc.out, tc.errix)
		}
	}
}
