package cursor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Recorded beforeShellExecution inputs. Sources: Cursor's hooks reference
// (https://cursor.com/docs/hooks, quoted in beep-effect/beep-effect#1162
// and shunkakinoki/dotfiles#2721: exit status 2 blocks as a deny does,
// other failures let the command run unless failClosed is set), and the
// field lists of Cupcake's Cursor harness reference
// (https://cupcake.eqtylab.io/reference/harnesses/cursor: common fields
// conversation_id, generation_id, workspace_roots, hook_event_name, and
// model, cursor_version, user_email in 2.x; command and cwd for this
// event; the answer's permission, user_message, agent_message).
var recorded = map[string]string{
	"cursor 1.7": `{"hook_event_name": "beforeShellExecution", "conversation_id": "conv-123", "generation_id": "gen-456",
		"workspace_roots": ["/path/to/project"], "command": "npm install express", "cwd": "/path/to/project"}`,
	"cursor 2.x": `{"conversation_id": "c0ffee00-0000-4000-8000-000000000001", "generation_id": "c0ffee00-0000-4000-8000-000000000002",
		"model": "claude-4-sonnet", "hook_event_name": "beforeShellExecution", "cursor_version": "2.1.46",
		"workspace_roots": ["/path/to/project"], "user_email": "user@example.com", "command": "git status", "cwd": ""}`,
}

// Every shell command Cursor's built-in tool would run is denied, with a
// message that sends the model to the gatehouse MCP server's
// shell__execute, in both spellings Cursor has read; the command never
// runs and the status is 0 (the answer is read from stdout).
func TestHookDeniesAndSteers(t *testing.T) {
	for name, payload := range recorded {
		var out, errb bytes.Buffer
		if st := Hook(strings.NewReader(payload), &out, &errb); st != 0 {
			t.Fatalf("%s: status %d, stderr %q", name, st, errb.String())
		}
		var a map[string]string
		if err := json.Unmarshal(out.Bytes(), &a); err != nil {
			t.Fatalf("%s: answer %q: %v", name, out.String(), err)
		}
		if a["permission"] != "deny" {
			t.Errorf("%s: permission %q", name, a["permission"])
		}
		for _, k := range []string{"agent_message", "agentMessage"} {
			if !strings.Contains(a[k], "shell__execute tool of the gatehouse MCP server") {
				t.Errorf("%s: %s %q", name, k, a[k])
			}
		}
		for _, k := range []string{"user_message", "userMessage"} {
			if !strings.Contains(a[k], "Gatehouse denied") {
				t.Errorf("%s: %s %q", name, k, a[k])
			}
		}
	}
	var out bytes.Buffer
	Hook(strings.NewReader(recorded["cursor 1.7"]), &out, &bytes.Buffer{})
	if !strings.Contains(out.String(), `with cwd \"/path/to/project\"`) {
		t.Errorf("the cwd is not passed on: %s", out.String())
	}
}

// An input the hook cannot read is denied too (fail closed); an input of
// another event gets no answer; an answer that cannot be written is
// status 2, which Cursor takes as a block.
func TestHookFailsClosed(t *testing.T) {
	var out, errb bytes.Buffer
	if st := Hook(strings.NewReader("{not json"), &out, &errb); st != 0 || !strings.Contains(out.String(), `"permission":"deny"`) || !strings.Contains(errb.String(), "not valid JSON") {
		t.Errorf("malformed: %d %q %q", st, out.String(), errb.String())
	}
	out.Reset()
	if st := Hook(strings.NewReader(`{"hook_event_name": "beforeReadFile", "file_path": "/x"}`), &out, &errb); st != 0 || out.Len() != 0 {
		t.Errorf("another event: %d %q", st, out.String())
	}
	errb.Reset()
	if st := Hook(strings.NewReader(recorded["cursor 1.7"]), failWriter{}, &errb); st != ExitBlock || !strings.Contains(errb.String(), "shell__execute") {
		t.Errorf("unwritable: %d %q", st, errb.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }
