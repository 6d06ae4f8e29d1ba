// Package codex speaks Codex CLI's side of Gatehouse: it decodes the
// PreToolUse hook's input Codex sends for its shell tool, encodes the
// hook's answer (deny with the reason, or allow with the command
// rewritten to Gatehouse's relay), merges the hook into Codex's
// hooks.json, computes the hash Codex trusts a hook by and records it in
// config.toml, and renders the managed hooks of Codex's requirements.toml.
//
// Codex 0.169.0's hook wire format has Claude Code's shape
// (codex-rs/hooks/src/events/pre_tool_use.rs and engine/output_parser.rs
// in openai/codex): the input names tool_name "Bash" for its shell tools
// (exec_command, shell) with tool_input {"command": ...}, the session's
// id, the turn's and the tool call's, and the cwd; the answer is
// hookSpecificOutput.permissionDecision "deny" with
// permissionDecisionReason, or "allow" with updatedInput. Unlike Claude
// Code, an "allow" without updatedInput and an "ask" are refused as
// invalid output and the call runs as asked, so an allowed call that is
// not routed gets no answer at all.
package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
)

// ToolBash is the tool_name Codex gives its shell tools' calls.
const ToolBash = "Bash"

// Agent is the agent name on the record of a call Codex made.
const Agent = "codex"

// EventPreToolUse is the only event this hook handles.
const EventPreToolUse = "PreToolUse"

// maxInput bounds the hook's stdin: a 64 KiB command and Codex's other
// fields fit many times over.
const maxInput = 4 << 20

// Input is the PreToolUse hook's input. ToolInput is kept as raw fields,
// so that a rewrite changes only the command.
type Input struct {
	SessionID      string                     `json:"session_id"`
	TurnID         string                     `json:"turn_id,omitempty"`
	Cwd            string                     `json:"cwd"`
	PermissionMode string                     `json:"permission_mode,omitempty"`
	Model          string                     `json:"model,omitempty"`
	HookEventName  string                     `json:"hook_event_name"`
	ToolName       string                     `json:"tool_name"`
	ToolInput      map[string]json.RawMessage `json:"tool_input"`
	ToolUseID      string                     `json:"tool_use_id,omitempty"`
}

// Decode reads and checks the hook input.
func Decode(r io.Reader) (*Input, error) {
	var in Input
	if err := hookjson.DecodeInput(r, maxInput, &in); err != nil {
		return nil, err
	}
	if in.HookEventName != EventPreToolUse {
		return nil, fmt.Errorf("hook_event_name is %q; this hook handles PreToolUse", in.HookEventName)
	}
	if in.ToolName == "" {
		return nil, errors.New("the hook input has no tool_name")
	}
	return &in, nil
}

// Command returns tool_input.command, the shell command Codex would run.
func (in *Input) Command() (string, error) {
	raw, ok := in.ToolInput["command"]
	if !ok {
		return "", errors.New("tool_input has no command")
	}
	var s string
	if string(raw) == "null" || json.Unmarshal(raw, &s) != nil {
		return "", errors.New("tool_input.command is not a string")
	}
	if s == "" {
		return "", errors.New("tool_input.command is empty")
	}
	return s, nil
}

// CheckCwd reports an input without the working directory the call is
// decided against.
func (in *Input) CheckCwd() error {
	if in.Cwd == "" {
		return errors.New("the hook input has no cwd")
	}
	return nil
}

// Output is the hook's answer.
type Output struct {
	HookSpecificOutput HookOutput `json:"hookSpecificOutput"`
}

// HookOutput is PreToolUse's hookSpecificOutput.
type HookOutput struct {
	HookEventName            string                     `json:"hookEventName"`
	PermissionDecision       string                     `json:"permissionDecision"`
	PermissionDecisionReason string                     `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             map[string]json.RawMessage `json:"updatedInput,omitempty"`
}

// Deny returns an answer that refuses the call; Codex gives the model
// "Command blocked by PreToolUse hook: REASON. Command: CMD". Codex
// refuses a deny without a reason (and runs the call), so an empty
// reason is replaced.
func Deny(reason string) *Output {
	if len(bytes.TrimSpace([]byte(reason))) == 0 {
		reason = "Gatehouse denied this command"
	}
	return &Output{HookOutput{HookEventName: EventPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// Route returns an answer that lets the call run with its command replaced
// by relay; every other field of the tool input is kept.
func Route(in *Input, relay, reason string) *Output {
	up := make(map[string]json.RawMessage, len(in.ToolInput))
	for k, v := range in.ToolInput {
		up[k] = v
	}
	cmd, _ := json.Marshal(relay)
	up["command"] = cmd
	return &Output{HookOutput{HookEventName: EventPreToolUse, PermissionDecision: "allow", PermissionDecisionReason: reason, UpdatedInput: up}}
}

// Encode writes o as one line of JSON.
func (o *Output) Encode(w io.Writer) error { return hookjson.Write(w, o) }
