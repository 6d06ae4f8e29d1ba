package gemini

// This file edits Gemini CLI's settings.json (~/.gemini/settings.json, and
// the system settings IT pushes). Its rules, as for Claude Code's:
//
//   - everything already in the file is kept: other keys, other hooks,
//     key order, values byte for byte (only whitespace is re-indented);
//   - the file must be JSON: Gemini also reads comments in it, which this
//     merge cannot keep, so a file that does not parse is left alone and
//     is an error;
//   - Gatehouse's hook is a matcher group (run_shell_command) in
//     hooks.BeforeTool whose one hook, named "gatehouse", runs
//     HookCommand; installing it again changes nothing, and an entry of
//     another gatehouse path is replaced in place;
//   - uninstalling removes exactly that group (or that hook, when a user
//     put other hooks in its group), then BeforeTool and hooks when they
//     are left empty.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
	"github.com/gatehouse-dev/gatehouse/internal/jsonobj"
)

// HookName is the hook's name in the settings: Gemini shows it, and
// hooksConfig.disabled names hooks by it.
const HookName = "gatehouse"

// HookTimeoutMS is the hook's timeout in the settings, in milliseconds.
// Gemini lets the call run when a hook times out, so the hook gives its
// own answer first: a call held for a person's approval waits up to
// policy.approval_timeout_seconds (at most 600 s), the hook's own deadline
// is 625 s (hook/decide), and this is above both.
const HookTimeoutMS = 640_000

// failClosed is the shell around the hook's program. Gemini runs the
// command with bash -c; it blocks the call when the hook answers deny, or
// exits with status 2 or more and writes something, but runs it when the
// hook exits 1, exits without a word, or is killed (a bare command, bash
// execs it and dies with it: Gemini reads no status at all). Measured with
// Gemini CLI 0.61.0 (hook/gemini/e2e). Around the program, any failure
// becomes status 2 with a line that says so, which Gemini shows the model
// as the reason.
const failClosed = ` || { s=$?; [ "$s" -eq 2 ] || echo "Gatehouse: the hook failed (exit status $s), so the command did not run; ask the user to run gatehouse doctor" >&2; exit 2; }`

// HookCommand returns the hook's command line for the gatehouse program
// at exe, inside the shell that turns its failures into a block.
func HookCommand(exe string) string {
	return shellQuote(exe) + " hook gemini" + failClosed
}

// hookProgram returns the program of a command HookCommand produced (or of
// the same command without the shell around it); ok is false for any
// other command, or a program whose name does not start "gatehouse".
func hookProgram(cmd string) (exe string, ok bool) {
	if !strings.HasPrefix(cmd, "'") {
		return "", false
	}
	var b strings.Builder
	i := 1
	for {
		j := strings.IndexByte(cmd[i:], '\'')
		if j < 0 {
			return "", false
		}
		b.WriteString(cmd[i : i+j])
		i += j + 1
		if strings.HasPrefix(cmd[i:], `\''`) {
			b.WriteByte('\'')
			i += 3
			continue
		}
		break
	}
	rest := cmd[i:]
	if rest != " hook gemini" && rest != " hook gemini"+failClosed {
		return "", false
	}
	exe = b.String()
	return exe, strings.HasPrefix(filepath.Base(exe), "gatehouse")
}

// IsHookCommand reports whether cmd is Gatehouse's hook command.
func IsHookCommand(cmd string) bool {
	_, ok := hookProgram(cmd)
	return ok
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hookEntry is one hook of a matcher group.
type hookEntry struct {
	Name    string `json:"name,omitempty"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

type matcherGroup struct {
	Matcher string      `json:"matcher"`
	Hooks   []hookEntry `json:"hooks"`
}

// HookGroup returns the BeforeTool matcher group that runs command.
func HookGroup(command string) json.RawMessage {
	return hookjson.Marshal(matcherGroup{Matcher: ToolShell, Hooks: []hookEntry{{
		Name: HookName, Type: "command", Command: command, Timeout: HookTimeoutMS,
	}}})
}

// MergeHook returns settings with the hook that runs command installed,
// and whether anything changed. settings may be empty (no file).
func MergeHook(settings []byte, command string) ([]byte, bool, error) {
	root, err := jsonobj.Parse(settings)
	if err != nil {
		return nil, false, err
	}
	hooks, err := root.Object("hooks")
	if err != nil {
		return nil, false, err
	}
	groups, err := hooks.Array(EventBeforeTool, "hooks."+EventBeforeTool)
	if err != nil {
		return nil, false, err
	}
	want := HookGroup(command)
	found := false
	for i, g := range groups {
		cmds := hookjson.Commands(g)
		if len(cmds) != 1 || !IsHookCommand(cmds[0]) {
			continue
		}
		switch {
		case found:
			groups[i] = nil // a duplicate: keep one
		case !jsonobj.Equal(g, want):
			groups[i] = want
		}
		found = true
	}
	if !found {
		groups = append(groups, want)
	}
	hooks.Set(EventBeforeTool, jsonobj.Array(groups))
	root.Set("hooks", hooks.Encode())
	out := root.Indent()
	return out, len(settings) == 0 || !jsonobj.Equal(out, settings), nil
}

// RemoveHook returns settings without Gatehouse's hook, and whether
// anything changed.
func RemoveHook(settings []byte) ([]byte, bool, error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		return settings, false, nil
	}
	root, err := jsonobj.Parse(settings)
	if err != nil {
		return nil, false, err
	}
	raw, ok := root.Get("hooks")
	if !ok {
		return settings, false, nil
	}
	hooks, err := jsonobj.Parse(raw)
	if err != nil {
		return nil, false, fmt.Errorf("hooks: %w", err)
	}
	groups, err := hooks.Array(EventBeforeTool, "hooks."+EventBeforeTool)
	if err != nil {
		return nil, false, err
	}
	kept, dropped := hookjson.Drop(groups, IsHookCommand)
	if !dropped {
		return settings, false, nil
	}
	hooks.SetOrDel(EventBeforeTool, jsonobj.Array(kept))
	root.SetOrDel("hooks", hooks.Encode())
	return root.Indent(), true, nil
}
