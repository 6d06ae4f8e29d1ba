// Package gemini speaks Gemini CLI's side of Gatehouse: it decodes the
// BeforeTool hook's input for the shell tool (run_shell_command), encodes
// the hook's answer (deny with the reason, allow, or allow with the
// command rewritten to Gatehouse's relay), merges the hook into Gemini
// CLI's settings.json, renders the system settings IT pushes, and reports
// the hook's drift for doctor.
//
// The wire format is Gemini CLI 0.61.0's (google-gemini/gemini-cli,
// packages/core/src/hooks: hookEventHandler.ts createBaseInput and
// fireBeforeToolEvent, hookRunner.ts executeCommandHook, types.ts
// BeforeToolHookOutput; packages/core/src/core/coreToolHookTriggers.ts
// executeToolWithHooks): the input has session_id, transcript_path, cwd,
// hook_event_name "BeforeTool", timestamp, tool_name and tool_input (the
// shell tool's: command, description, dir_path, is_background); the
// answer is a JSON object on stdout whose decision "deny" (or "block")
// with reason blocks the call ("Tool execution blocked: <reason>") and
// whose hookSpecificOutput.tool_input is merged into the tool's input
// (Gemini then appends a note that a hook modified it).
package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
)

// ToolShell is the shell tool Gatehouse decides and routes.
const ToolShell = "run_shell_command"

// Agent is the agent name on the record of a call Gemini CLI made.
const Agent = "gemini-cli"

// EventBeforeTool is the only event this hook handles.
const EventBeforeTool = "BeforeTool"

// ExitBlock is the exit status with which Gemini CLI blocks a call: the
// hook exits with it whenever it denies. Gemini reads the JSON answer on
// stdout whatever the status; a hook that exits 1, exits without an
// answer or is killed only warns, and the call runs (settings.go's
// failClosed).
const ExitBlock = 2

// maxInput bounds the hook's stdin: a 64 KiB command and Gemini's other
// fields fit many times over.
const maxInput = 4 << 20

// Input is the BeforeTool hook's input. ToolInput is kept as raw fields.
type Input struct {
	SessionID      string                     `json:"session_id"`
	TranscriptPath string                     `json:"transcript_path,omitempty"`
	Cwd            string                     `json:"cwd"`
	HookEventName  string                     `json:"hook_event_name"`
	Timestamp      string                     `json:"timestamp,omitempty"`
	ToolName       string                     `json:"tool_name"`
	ToolInput      map[string]json.RawMessage `json:"tool_input"`
}

// Decode reads and checks the hook input.
func Decode(r io.Reader) (*Input, error) {
	var in Input
	if err := hookjson.DecodeInput(r, maxInput, &in); err != nil {
		return nil, err
	}
	if in.HookEventName != EventBeforeTool {
		return nil, fmt.Errorf("hook_event_name is %q; this hook handles BeforeTool", in.HookEventName)
	}
	if in.ToolName == "" {
		return nil, errors.New("the hook input has no tool_name")
	}
	return &in, nil
}

// Shell is the part of a run_shell_command tool_input Gatehouse reads.
type Shell struct {
	Command string
	// Dir is the directory the command runs in: the tool's dir_path
	// resolved against the input's cwd (Gemini resolves it against its
	// target directory, which is the cwd it passes), or the cwd.
	Dir string
}

// Shell decodes the shell tool's fields of the input.
func (in *Input) Shell() (*Shell, error) {
	if in.Cwd == "" || !filepath.IsAbs(in.Cwd) {
		return nil, fmt.Errorf("the hook input's cwd %q is not an absolute path", in.Cwd)
	}
	cmd, err := in.stringField("command", true)
	if err != nil {
		return nil, err
	}
	if cmd == "" {
		return nil, errors.New("tool_input.command is empty")
	}
	dir, err := in.stringField("dir_path", false)
	if err != nil {
		return nil, err
	}
	s := &Shell{Command: cmd, Dir: in.Cwd}
	if dir != "" {
		if filepath.IsAbs(dir) {
			s.Dir = filepath.Clean(dir)
		} else {
			s.Dir = filepath.Join(in.Cwd, dir)
		}
	}
	return s, nil
}

func (in *Input) stringField(k string, required bool) (string, error) {
	raw, ok := in.ToolInput[k]
	if !ok || string(raw) == "null" && !required {
		if required {
			return "", fmt.Errorf("tool_input has no %s", k)
		}
		return "", nil
	}
	var s string
	if string(raw) == "null" || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("tool_input.%s is not a string", k)
	}
	return s, nil
}

// Output is the hook's answer.
type Output struct {
	Decision           string      `json:"decision"`
	Reason             string      `json:"reason,omitempty"`
	HookSpecificOutput *HookOutput `json:"hookSpecificOutput,omitempty"`
}

// HookOutput is BeforeTool's hookSpecificOutput: ToolInput is merged into
// the tool's input, key by key.
type HookOutput struct {
	HookEventName string            `json:"hookEventName"`
	ToolInput     map[string]string `json:"tool_input"`
}

// Deny returns an answer that blocks the call; Gemini shows the model
// "Tool execution blocked: <reason>".
func Deny(reason string) *Output { return &Output{Decision: "deny", Reason: reason} }

// Allow returns an answer that lets the call run as the model asked.
func Allow() *Output { return &Output{Decision: "allow"} }

// Route returns an answer that lets the call run with its command
// replaced by relay; the tool's other fields (description, dir_path,
// is_background) are kept.
func Route(relay string) *Output {
	return &Output{Decision: "allow", HookSpecificOutput: &HookOutput{
		HookEventName: EventBeforeTool, ToolInput: map[string]string{"command": relay},
	}}
}

// Blocks reports whether o blocks the call: the hook then exits with
// ExitBlock.
func (o *Output) Blocks() bool { return o.Decision == "deny" }

// Encode writes o as one line of JSON.
func (o *Output) Encode(w io.Writer) error { return hookjson.Write(w, o) }
