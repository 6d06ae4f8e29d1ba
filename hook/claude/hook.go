// Package claude speaks Claude Code's side of Gatehouse: it decodes the
// PreToolUse hook's input, encodes the hook's decision (deny, allow, or
// allow with the command rewritten to Gatehouse's relay), decodes the
// PostToolUse hook's input and encodes its cleaned tool output, answers
// the PermissionRequest that lets a live relay out of Claude Code's
// sandbox, merges the hooks into a user's settings.json and renders the
// managed-settings.json IT pushes.
package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// ToolBash is the tool Gatehouse decides and routes.
const ToolBash = "Bash"

// FileTools are Claude Code's tools that touch files from its own process,
// outside every sandbox: Gatehouse decides which paths they may touch
// (files.go).
var FileTools = []string{"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep"}

// Matcher is the hooks' matcher: Bash and the file tools.
var Matcher = ToolBash + "|" + strings.Join(FileTools, "|")

// OutputTools are the tools whose output the PostToolUse hook has cleaned
// (api.ToolOutputRequest): the file tools that read, Bash (whose output
// Gatehouse did not clean when it ran in Claude Code's sandbox rather than
// Gatehouse's) and every MCP tool.
var OutputTools = []string{"Read", "Grep", "Glob", ToolBash, "BashOutput"}

// OutputMatcher is the PostToolUse hook's matcher: OutputTools and MCP
// tools (mcp__<server>__<tool>).
var OutputMatcher = strings.Join(OutputTools, "|") + "|mcp__.*"

// maxInput bounds the hook's stdin: a 64 KiB command and Claude Code's
// other fields fit many times over, and so does the largest tool output
// the service cleans.
const maxInput = api.MaxToolOutput + 1<<20

// Input is the PreToolUse hook's input. ToolInput is kept as raw fields,
// so that a rewrite changes only what it means to.
type Input struct {
	SessionID      string                     `json:"session_id"`
	TranscriptPath string                     `json:"transcript_path,omitempty"`
	Cwd            string                     `json:"cwd"`
	PermissionMode string                     `json:"permission_mode,omitempty"`
	HookEventName  string                     `json:"hook_event_name"`
	ToolName       string                     `json:"tool_name"`
	ToolInput      map[string]json.RawMessage `json:"tool_input"`
	ToolUseID      string                     `json:"tool_use_id,omitempty"`
	// ToolResponse is the tool's output, in a PostToolUse input: any JSON
	// value (Read's is an object whose file.content is the text read).
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
}

// The hook events besides PreToolUse: a session that ends, a tool that
// returned, and a permission Claude Code would ask the person for (the
// relay's, to run outside its sandbox).
const (
	EventSessionEnd        = "SessionEnd"
	EventPostToolUse       = "PostToolUse"
	EventPermissionRequest = "PermissionRequest"
)

// Decode reads and checks the hook input: a PreToolUse call, a tool's
// output (PostToolUse), or the end of a session (SessionEnd, which has no
// tool).
func Decode(r io.Reader) (*Input, error) {
	var in Input
	if err := hookjson.DecodeInput(r, maxInput, &in); err != nil {
		return nil, err
	}
	if in.HookEventName == EventSessionEnd {
		return &in, nil
	}
	switch in.HookEventName {
	case "", "PreToolUse", EventPostToolUse, EventPermissionRequest:
	default:
		return nil, fmt.Errorf("hook_event_name is %q; this hook handles PreToolUse, PostToolUse, PermissionRequest and SessionEnd", in.HookEventName)
	}
	if in.ToolName == "" {
		return nil, errors.New("the hook input has no tool_name")
	}
	return &in, nil
}

// Bash is the part of a Bash tool_input Gatehouse reads.
type Bash struct {
	Command string
	// TimeoutMS is the model's timeout, 0 when it set none.
	TimeoutMS  int64
	Background bool
}

// Bash decodes the Bash fields of the tool input.
func (in *Input) Bash() (*Bash, error) {
	var b Bash
	cmd, err := in.stringField("command", true)
	if err != nil {
		return nil, err
	}
	b.Command = cmd
	if raw, ok := in.ToolInput["timeout"]; ok && string(raw) != "null" {
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil || f < 0 {
			return nil, errors.New("tool_input.timeout is not a number of milliseconds")
		}
		b.TimeoutMS = int64(f)
	}
	if raw, ok := in.ToolInput["run_in_background"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &b.Background); err != nil {
			return nil, errors.New("tool_input.run_in_background is not a boolean")
		}
	}
	return &b, nil
}

// CheckCwd reports an input without the working directory the call is
// decided against.
func (in *Input) CheckCwd() error {
	if in.Cwd == "" {
		return errors.New("the hook input has no cwd")
	}
	return nil
}

// stringField returns tool_input's string member k: "" when it is absent
// and not required; an error when it is absent and required, or is not a
// string (null included).
func (in *Input) stringField(k string, required bool) (string, error) {
	raw, ok := in.ToolInput[k]
	if !ok {
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

// Claude Code's own Bash timeouts when the model sets none (its
// BASH_DEFAULT_TIMEOUT_MS changes the first).
const (
	DefaultTimeoutMS    = 120_000
	BackgroundTimeoutMS = 1_800_000
)

// timeoutMarginMS is how much sooner than Claude Code Gatehouse times a
// command out.
const timeoutMarginMS = 2000

// TimeoutSeconds returns the timeout Gatehouse gives the command: two
// seconds short of the one Claude Code enforces on the relay (the model's,
// or Claude Code's default; defaultMS, when positive, is
// BASH_DEFAULT_TIMEOUT_MS), so that Gatehouse's timeout fires first and the
// relay reports it with exit status 124 even on a loaded machine, where the
// teardown and the record take longer than a second. At least 1 s.
func (b *Bash) TimeoutSeconds(defaultMS int64) int {
	ms := b.TimeoutMS
	if ms == 0 {
		switch {
		case b.Background:
			ms = BackgroundTimeoutMS
		case defaultMS > 0:
			ms = defaultMS
		default:
			ms = DefaultTimeoutMS
		}
	}
	return int(max(1, (ms-timeoutMarginMS)/1000))
}

// Output is the hook's answer.
type Output struct {
	HookSpecificOutput HookOutput `json:"hookSpecificOutput"`
}

// HookOutput is PreToolUse's hookSpecificOutput (a permission decision,
// and the input rewritten), PostToolUse's (the tool's output replaced) or
// PermissionRequest's (Decision).
type HookOutput struct {
	HookEventName            string                     `json:"hookEventName"`
	PermissionDecision       string                     `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string                     `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             map[string]json.RawMessage `json:"updatedInput,omitempty"`
	// UpdatedToolOutput replaces the tool's output before the model sees
	// it (Claude Code 2.1.121 and later); it has the shape of the
	// tool_response it replaces.
	UpdatedToolOutput json.RawMessage `json:"updatedToolOutput,omitempty"`
	// Decision answers a PermissionRequest in the person's place.
	Decision *PermissionDecision `json:"decision,omitempty"`
}

// PermissionDecision is a PermissionRequest hook's answer: Behavior
// "allow" or "deny", with Message (deny only) telling the model why. An
// allow here never carries updatedInput: the command allowed is exactly
// the one Claude Code asked about.
type PermissionDecision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// PermissionAllow answers a PermissionRequest with allow: Claude Code runs
// the call as asked, without asking the person.
func PermissionAllow() *Output {
	return &Output{HookOutput{HookEventName: EventPermissionRequest, Decision: &PermissionDecision{Behavior: "allow"}}}
}

// PermissionDeny answers a PermissionRequest with deny; Claude Code shows
// message to the model.
func PermissionDeny(message string) *Output {
	return &Output{HookOutput{HookEventName: EventPermissionRequest, Decision: &PermissionDecision{Behavior: "deny", Message: message}}}
}

// ReplaceOutput returns a PostToolUse answer that gives the model out
// instead of the tool's own output.
func ReplaceOutput(out json.RawMessage) *Output {
	return &Output{HookOutput{HookEventName: EventPostToolUse, UpdatedToolOutput: out}}
}

// withholdMin is the shortest string Withhold replaces: a shorter one can
// hold no credential (service/dlp's MinSecretLen; a test keeps them
// equal) and is the tool's own vocabulary ("text", "file").
const withholdMin = 8

// Withhold returns a PostToolUse answer that keeps the tool's output from
// the model because it could not be cleaned: every string of it at least
// withholdMin long becomes a note that says why, so that the output keeps
// its shape (Claude Code shows the tool's output by its fields). An output
// that is not JSON becomes the note itself.
func Withhold(in *Input, why string) *Output {
	note := fmt.Sprintf("[Gatehouse withheld this output of %s: it could not be checked for credentials (%s). Ask the user to run `gatehouse doctor`.]", in.ToolName, why)
	out, _, err := api.MapStrings(in.ToolResponse, func(s string) (string, int) {
		if len(s) < withholdMin {
			return s, 0
		}
		return note, 1
	})
	if err != nil {
		out, _ = json.Marshal(note)
	}
	return ReplaceOutput(out)
}

// Deny returns an answer that refuses the tool call; Claude Code shows
// reason to the model.
func Deny(reason string) *Output {
	return &Output{HookOutput{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// Allow returns an answer that lets the call run as the model asked,
// except that dangerouslyDisableSandbox, when the input has it, is set to
// false: the command stays inside Claude Code's sandbox.
func Allow(in *Input, reason string) *Output {
	d := HookOutput{HookEventName: "PreToolUse", PermissionDecision: "allow", PermissionDecisionReason: reason}
	if _, ok := in.ToolInput[disableSandbox]; ok {
		d.UpdatedInput = make(map[string]json.RawMessage, len(in.ToolInput))
		for k, v := range in.ToolInput {
			d.UpdatedInput[k] = v
		}
		d.UpdatedInput[disableSandbox] = json.RawMessage("false")
	}
	return &Output{d}
}

// disableSandbox is the Bash input that would run the command outside
// Claude Code's sandbox.
const disableSandbox = "dangerouslyDisableSandbox"

// Route returns an answer that lets the call run with its command replaced
// by relay (RelayCommand): every other field of the tool input is kept,
// except dangerouslyDisableSandbox, which is set to true. The command runs
// inside Gatehouse's sandbox; the relay asks to run outside Claude Code's,
// which Claude Code grants only through a person or Gatehouse's
// PermissionRequest hook (which allows exactly a live relay: decide's
// Permission). Without either, the relay runs inside Claude Code's
// sandbox or not at all.
func Route(in *Input, relay, reason string) *Output {
	up := make(map[string]json.RawMessage, len(in.ToolInput)+1)
	for k, v := range in.ToolInput {
		up[k] = v
	}
	cmd, _ := json.Marshal(relay)
	up["command"] = cmd
	up[disableSandbox] = json.RawMessage("true")
	return &Output{HookOutput{HookEventName: "PreToolUse", PermissionDecision: "allow", PermissionDecisionReason: reason, UpdatedInput: up}}
}

// RelayCommand returns the command that redeems ticket: the gatehouse
// binary at exe (single-quoted for the shell) running "relay TICKET".
func RelayCommand(exe, ticket string) string {
	return ShellQuote(exe) + " relay " + ticket
}

// relayCommandRE matches a command RelayCommand produced.
var relayCommandRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^'((?:[^']|'\\'')*)' relay [A-Za-z0-9._-]+$`)
})

// IsRelayCommand reports whether cmd is exactly a relay of a ticket, as
// the hook rewrites a routed command (whose output Gatehouse has cleaned
// already), run by a gatehouse binary.
func IsRelayCommand(cmd string) bool {
	_, _, ok := ParseRelayCommand(cmd)
	return ok
}

// ParseRelayCommand returns the program and the ticket of cmd when it is
// exactly what RelayCommand writes, run by a gatehouse binary (a program
// whose name starts "gatehouse"); ok is false otherwise. The ticket has
// only the characters of a ticket, but is not checked further.
func ParseRelayCommand(cmd string) (exe, ticket string, ok bool) {
	m := relayCommandRE().FindStringSubmatch(cmd)
	if m == nil {
		return "", "", false
	}
	exe = strings.ReplaceAll(m[1], `'\''`, "'")
	if !strings.HasPrefix(filepath.Base(exe), "gatehouse") {
		return "", "", false
	}
	return exe, cmd[strings.LastIndexByte(cmd, ' ')+1:], true
}

// ShellQuote quotes s for bash and sh.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Encode writes o as one line of JSON.
func (o *Output) Encode(w io.Writer) error { return hookjson.Write(w, o) }

// ParseMS parses BASH_DEFAULT_TIMEOUT_MS; 0 when unset or invalid.
func ParseMS(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
