package decide

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/dlp"
	"github.com/gatehouse-dev/gatehouse/service/tickets"
)

// A tool's output the service cannot clean (here: no service) is withheld
// from the model, never passed on; a routed command's output (the relay's,
// cleaned as it ran) is passed without asking.
func TestToolOutputFailsClosed(t *testing.T) {
	dir := t.TempDir()
	env := func(in string) Env {
		return Env{Stdin: strings.NewReader(in), Getenv: func(k string) string {
			switch k {
			case "HOME":
				return dir
			case "XDG_RUNTIME_DIR":
				return filepath.Join(dir, "run")
			}
			return ""
		}}
	}
	post := func(tool string, input, response any) string {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "session_id": "s", "cwd": dir,
			"tool_name": tool, "tool_input": input, "tool_response": response})
		return string(b)
	}
	read := map[string]any{"type": "text", "file": map[string]any{"filePath": "/w/f", "content": "token=SECRET-VALUE-1234\n", "numLines": 1}}
	out := Claude(context.Background(), env(post("Read", map[string]any{"file_path": "/w/f"}, read)), "")
	if out == nil {
		t.Fatal("the output of a Read passed with no service to clean it")
	}
	got := string(out.HookSpecificOutput.UpdatedToolOutput)
	if out.HookSpecificOutput.HookEventName != "PostToolUse" || strings.Contains(got, "SECRET-VALUE") || !strings.Contains(got, "withheld") || !strings.Contains(got, `"numLines":1`) {
		t.Errorf("answer %+v", out.HookSpecificOutput)
	}
	relay := map[string]any{"command": claude.RelayCommand("/usr/bin/gatehouse-hook", tickets.New()), "description": "x"}
	if out := Claude(context.Background(), env(post("Bash", relay, map[string]any{"stdout": "x", "stderr": ""})), ""); out != nil {
		t.Errorf("a routed command's output was not passed: %+v", out.HookSpecificOutput)
	}
	framework := map[string]any{"command": "cat .env", "description": "x"}
	if out := Claude(context.Background(), env(post("Bash", framework, map[string]any{"stdout": "TOKEN=abcdefgh12345", "stderr": ""})), ""); out == nil {
		t.Error("the output of a command Gatehouse did not run passed unchecked")
	}
}

// Withhold leaves a string alone only where it is too short to be a
// credential.
func TestWithholdMinIsDLPs(t *testing.T) {
	b, _ := json.Marshal(strings.Repeat("x", dlp.MinSecretLen))
	in := &claude.Input{ToolName: "Read", ToolResponse: b}
	if got := string(claude.Withhold(in, "x").HookSpecificOutput.UpdatedToolOutput); got == string(b) {
		t.Errorf("a %d-byte string (service/dlp's MinSecretLen) was not withheld", dlp.MinSecretLen)
	}
	b, _ = json.Marshal(strings.Repeat("x", dlp.MinSecretLen-1))
	in.ToolResponse = b
	if got := string(claude.Withhold(in, "x").HookSpecificOutput.UpdatedToolOutput); got != string(b) {
		t.Errorf("a string shorter than service/dlp's MinSecretLen was withheld: %s", got)
	}
}
