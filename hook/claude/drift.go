package claude

// This file compares Claude Code's settings on a machine with what
// Gatehouse's managed settings require (RenderManaged), for gatehouse
// doctor. It reads the files as Claude Code does (checked against Claude
// Code 2.1.332 and its documentation):
//
//   - the managed settings are managed-settings.json, then each *.json of
//     managed-settings.d in name order (hidden files skipped), merged:
//     objects merged key by key, arrays joined without duplicates, a later
//     scalar winning;
//   - a managed value wins over the user's; a key the managed settings do
//     not set is the user's to decide;
//   - hooks from the managed settings run unless they set disableAllHooks;
//     the user's run too, unless the managed settings set
//     allowManagedHooksOnly or the user's set disableAllHooks (which then
//     turns off only the non-managed ones);
//   - a PreToolUse matcher that is empty or "*" matches every tool; any
//     other is a pattern over the whole tool name ("Bash|Read").
//
// Project settings (.claude/settings.json in a repository) depend on the
// directory Claude Code starts in and are not read: allowManagedHooksOnly
// is what keeps their hooks out.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// A SettingsFile is one settings file and its bytes; Data is nil when the
// file does not exist.
type SettingsFile struct {
	Path string
	Data []byte
}

// DriftOptions are the settings Drift compares.
type DriftOptions struct {
	// Managed are the managed settings files in the order Claude Code
	// merges them: managed-settings.json, then managed-settings.d/*.json.
	// Files that do not exist are left out.
	Managed []SettingsFile
	// ManagedPath is where the managed settings belong, for the messages.
	ManagedPath string
	// User is the user's settings.json.
	User SettingsFile
	// Executable reports whether path is an executable file: the hook's
	// program must be one.
	Executable func(path string) bool
}

// A Finding is one way Claude Code's settings drifted from Gatehouse's
// policy, with the remedy.
type Finding struct {
	// Code is hook_missing, hook_broken, hook_duplicate, output_hook_missing,
	// managed_hooks_only_off,
	// claude_sandbox_off, claude_sandbox_escape, relay_sandboxed,
	// user_shadows_managed or settings_unreadable.
	Code   string `json:"code"`
	File   string `json:"file,omitempty"`
	Detail string `json:"detail"`
	Remedy string `json:"remedy"`
}

const (
	remedyManaged = "sudo gatehouse managed-settings --install (it writes Gatehouse's managed settings for every user)"
	remedyHook    = "gatehouse install (for this user), or " + remedyManaged
)

// RemedyManaged is the remedy of the findings only IT's managed settings
// fix (ForEveryUser).
const RemedyManaged = remedyManaged

// ForEveryUser reports whether f is hardening that Gatehouse's managed
// settings would add for every user of the machine (managed hooks only,
// Claude Code's own sandbox on and without its escape hatch), rather than
// a fault of this user's setup: doctor keeps it apart, as advice.
func (f Finding) ForEveryUser() bool {
	switch f.Code {
	case "managed_hooks_only_off", "claude_sandbox_off", "claude_sandbox_escape":
		return true
	}
	return false
}

// Drift returns how the settings in o drifted from Gatehouse's policy; none
// when Claude Code runs Gatehouse's hook for Bash, with only managed hooks,
// inside its own sandbox, with a way out for the relay alone.
//
// sandbox.allowUnsandboxedCommands means two things. With Gatehouse's
// PermissionRequest hook in force for Bash it must be true (as it is
// unset): the hook lets a live relay out of Claude Code's sandbox and
// nothing else, and false keeps the relay inside, paying for Claude
// Code's sandbox on every routed call (relay_sandboxed). Without that
// hook it must be false: true would let the model ask to run any command
// outside the sandbox (claude_sandbox_escape).
func Drift(o DriftOptions) []Finding {
	var out []Finding
	add := func(code, file, remedy, format string, a ...any) {
		out = append(out, Finding{Code: code, File: file, Detail: fmt.Sprintf(format, a...), Remedy: remedy})
	}
	managed := map[string]any{}
	for _, f := range o.Managed {
		m, err := settingsObject(f.Data)
		if err != nil {
			add("settings_unreadable", f.Path, "fix the file or replace it: "+remedyManaged,
				"%s cannot be read as Claude Code's settings (%v): Claude Code runs no hooks while a managed source is unreadable", f.Path, err)
			continue
		}
		mergeSettings(managed, m)
	}
	haveManaged := len(o.Managed) > 0
	var user map[string]any
	if o.User.Data != nil {
		var err error
		if user, err = settingsObject(o.User.Data); err != nil {
			add("settings_unreadable", o.User.Path, "fix the file (Claude Code reads it as JSON), then gatehouse install",
				"%s cannot be read as Claude Code's settings (%v)", o.User.Path, err)
			user = nil
		}
	}
	managedWhere := "the managed settings (" + o.ManagedPath + ")"
	if !haveManaged {
		managedWhere = "the managed settings (none at " + o.ManagedPath + ")"
	}

	// The hook.
	allOff := managed["disableAllHooks"] == true
	onlyManaged := managed["allowManagedHooksOnly"] == true || user["disableAllHooks"] == true
	mHook, mCovers := findHook(managed)
	uHook, uCovers := findHook(user)
	// The hook that runs for Bash: the managed one, else the user's when
	// user hooks run; failing both, the one found, to say what is wrong.
	hook, file := mHook, o.ManagedPath
	if (hook == "" || !mCovers) && !onlyManaged && uHook != "" && (uCovers || hook == "") {
		hook, file = uHook, o.User.Path
	}
	hookInForce := false
	switch {
	case allOff:
		add("hook_missing", o.ManagedPath, "remove disableAllHooks from the managed settings; "+remedyManaged,
			"the managed settings turn every hook off (disableAllHooks): Claude Code's Bash calls do not reach Gatehouse")
	case hook == "" && uHook != "":
		why := "the managed settings allow managed hooks only (allowManagedHooksOnly)"
		if managed["allowManagedHooksOnly"] != true {
			why = "the user settings set disableAllHooks, which leaves managed hooks only"
		}
		add("hook_missing", o.User.Path, remedyManaged,
			"Gatehouse's hook in %s does not run: %s, and theirs have none", o.User.Path, why)
	case hook == "":
		add("hook_missing", "", remedyHook,
			"Gatehouse's hook is in neither %s nor %s: Claude Code's Bash calls do not reach Gatehouse", managedWhere, o.User.Path)
	case (file == o.ManagedPath && !mCovers) || (file == o.User.Path && !uCovers):
		add("hook_missing", file, remedyHook,
			"Gatehouse's hook in %s is not matched to Bash: Claude Code's Bash calls do not reach it", file)
	default:
		hookInForce = true
		// An mcp_tool hook names no program (hookProgram ""): its server
		// is Claude Code's MCP configuration's.
		if exe := hookProgram(hook); exe != "" && o.Executable != nil && !o.Executable(exe) {
			add("hook_broken", file, "install Gatehouse there again, then "+remedyHook,
				"the hook in %s runs %s, which is not an executable file: Claude Code blocks every call it is for", file, exe)
		}
		// The output of the tools that read reaches the model cleaned
		// only through the PostToolUse hook.
		if !outputHook(managed) && (onlyManaged || !outputHook(user)) {
			add("output_hook_missing", file, remedyHook,
				"Gatehouse's PostToolUse hook is not in %s: what Read, Grep and MCP tools return reaches the model without credential redaction", file)
		}
		// Claude Code runs each distinct command once: two different
		// commands of Gatehouse's hook decide every call twice.
		if !allOff && !onlyManaged && mHook != "" && uHook != "" && mHook != uHook && mCovers && uCovers {
			add("hook_duplicate", o.User.Path, "gatehouse uninstall --keep-service (the managed settings carry the hook), or "+remedyManaged,
				"Gatehouse's hook runs twice for every Bash call, as %s from the managed settings and as %s from %s: each call is decided twice, and one of its two tickets is never redeemed", mHook, uHook, o.User.Path)
		}
	}

	// Managed hooks only.
	if managed["allowManagedHooksOnly"] != true {
		add("managed_hooks_only_off", o.ManagedPath, remedyManaged,
			"%s do not turn allowManagedHooksOnly on: the user's and every project's .claude/settings.json may add hooks, which run outside every sandbox and beside Gatehouse's", managedWhere)
	}

	// Claude Code's own sandbox: the managed value wins, else the user's.
	sandbox := func(key string) (any, string) {
		if v, ok := lookup(managed, "sandbox", key); ok {
			return v, o.ManagedPath
		}
		if v, ok := lookup(user, "sandbox", key); ok {
			return v, o.User.Path
		}
		return nil, ""
	}
	if v, where := sandbox("enabled"); v != true {
		if where == "" {
			add("claude_sandbox_off", "", remedyManaged, "Claude Code's own sandbox is off: sandbox.enabled is set in neither %s nor %s", managedWhere, o.User.Path)
		} else {
			add("claude_sandbox_off", where, remedyManaged, "Claude Code's own sandbox is off: sandbox.enabled is %s in %s", jsonText(v), where)
		}
	}
	relayOut := !allOff && (permissionHook(managed) || !onlyManaged && permissionHook(user))
	if v, where := sandbox("allowUnsandboxedCommands"); relayOut && v == false {
		remedy := remedyManaged
		if where == o.User.Path {
			remedy = "remove sandbox.allowUnsandboxedCommands from " + o.User.Path
		}
		add("relay_sandboxed", where, remedy,
			"sandbox.allowUnsandboxedCommands is false in %s: Gatehouse's PermissionRequest hook cannot let a routed command's relay out of Claude Code's sandbox, so every routed call pays for that sandbox's start as well as Gatehouse's", where)
	} else if on, _ := sandbox("enabled"); !relayOut && v == false && hookInForce && on == true {
		add("relay_sandboxed", file, remedyHook,
			"Gatehouse's PermissionRequest hook is not in %s (settings written before it existed): a routed command's relay runs inside Claude Code's sandbox, so every routed call pays for that sandbox's start as well as Gatehouse's", file)
	} else if !relayOut && v != false {
		if where == "" {
			add("claude_sandbox_escape", "", remedyManaged, "Claude Code may run a command outside its sandbox: sandbox.allowUnsandboxedCommands is set in neither %s nor %s, and it defaults to true", managedWhere, o.User.Path)
		} else {
			add("claude_sandbox_escape", where, remedyManaged, "Claude Code may run a command outside its sandbox: sandbox.allowUnsandboxedCommands is %s in %s", jsonText(v), where)
		}
	}

	// The user's file deciding what the managed settings leave open.
	if haveManaged && user != nil {
		for _, s := range []struct {
			key  string
			want any
		}{{"enabled", true}, {"allowUnsandboxedCommands", relayOut}, {"failIfUnavailable", true}} {
			if _, pinned := lookup(managed, "sandbox", s.key); pinned {
				continue
			}
			if v, ok := lookup(user, "sandbox", s.key); ok && !reflect.DeepEqual(v, s.want) {
				add("user_shadows_managed", o.User.Path, "remove sandbox."+s.key+" from "+o.User.Path+", and "+remedyManaged,
					"%s sets sandbox.%s to %s, which the managed settings leave open: the user's value is in force", o.User.Path, s.key, jsonText(v))
			}
		}
		if managed["allowManagedHooksOnly"] != true && !allOff {
			if cmds := otherBashHooks(user); len(cmds) > 0 {
				add("user_shadows_managed", o.User.Path, "remove them from "+o.User.Path+", and "+remedyManaged,
					"%s adds PreToolUse hooks for Bash (%s) and the managed settings do not set allowManagedHooksOnly: they run beside Gatehouse's and may change the command it routes", o.User.Path, strings.Join(cmds, ", "))
			}
		}
	}
	return out
}

// settingsObject decodes a settings file; an empty file is an empty object.
func settingsObject(b []byte) (map[string]any, error) {
	m := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return m, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the object")
	}
	return m, nil
}

// mergeSettings merges src over dst as Claude Code merges a drop-in over
// the managed settings.
func mergeSettings(dst, src map[string]any) {
	for k, v := range src {
		switch sv := v.(type) {
		case map[string]any:
			if dv, ok := dst[k].(map[string]any); ok {
				mergeSettings(dv, sv)
				continue
			}
		case []any:
			if dv, ok := dst[k].([]any); ok {
				for _, e := range sv {
					if !containsEqual(dv, e) {
						dv = append(dv, e)
					}
				}
				dst[k] = dv
				continue
			}
		}
		dst[k] = v
	}
}

func containsEqual(a []any, e any) bool {
	for _, x := range a {
		if reflect.DeepEqual(x, e) {
			return true
		}
	}
	return false
}

// lookup returns the value at the path of keys in m.
func lookup(m map[string]any, keys ...string) (any, bool) {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = o[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// commandHooks calls f with the command of each command hook of m's
// groups for event (PreToolUse, PostToolUse), or mcpHookRef for an
// mcp_tool hook, and its group's matcher.
func commandHooks(m map[string]any, event string, f func(command, matcher string)) {
	groups, _ := lookup(m, "hooks", event)
	gs, _ := groups.([]any)
	for _, g := range gs {
		gm, _ := g.(map[string]any)
		matcher, _ := gm["matcher"].(string)
		hs, _ := gm["hooks"].([]any)
		for _, h := range hs {
			hm, _ := h.(map[string]any)
			if cmd, ok := hm["command"].(string); ok && hm["type"] == "command" {
				f(cmd, matcher)
			}
			server, _ := hm["server"].(string)
			tool, _ := hm["tool"].(string)
			if hm["type"] == "mcp_tool" {
				f(mcpHookRef(server, tool), matcher)
			}
		}
	}
}

// mcpHookRef stands for an mcp_tool hook where commandHooks names a
// hook by its command: Gatehouse's is isOurHook's.
func mcpHookRef(server, tool string) string { return "mcp_tool " + server + "/" + tool }

// isOurHook reports whether a hook commandHooks named is Gatehouse's: its
// command, or its MCP server's hook tool.
func isOurHook(cmd string) bool {
	return IsHookCommand(cmd) || cmd == mcpHookRef(MCPServerName, MCPHookTool)
}

// preToolUseHooks calls f with the command of each command hook of m's
// PreToolUse groups, and whether its group's matcher takes Bash.
func preToolUseHooks(m map[string]any, f func(command string, bash bool)) {
	commandHooks(m, "PreToolUse", func(cmd, matcher string) { f(cmd, matchesTool(matcher, ToolBash)) })
}

// findHook returns Gatehouse's hook command in m, and whether its group
// is matched to Bash (a group that is, when there are several).
func findHook(m map[string]any) (command string, bash bool) {
	preToolUseHooks(m, func(cmd string, b bool) {
		if isOurHook(cmd) && (command == "" || (b && !bash)) {
			command, bash = cmd, b
		}
	})
	return command, bash
}

// outputHook reports whether m runs Gatehouse's hook on what Read
// returns (a PostToolUse group matched to Read).
func outputHook(m map[string]any) (found bool) {
	commandHooks(m, "PostToolUse", func(cmd, matcher string) {
		found = found || isOurHook(cmd) && matchesTool(matcher, "Read")
	})
	return found
}

// permissionHook reports whether m runs Gatehouse's hook on Claude Code's
// permission requests for Bash (a PermissionRequest group matched to
// Bash).
func permissionHook(m map[string]any) (found bool) {
	commandHooks(m, EventPermissionRequest, func(cmd, matcher string) {
		found = found || isOurHook(cmd) && matchesTool(matcher, ToolBash)
	})
	return found
}

// otherBashHooks are the commands of the hooks in m, not Gatehouse's,
// that run for Bash.
func otherBashHooks(m map[string]any) []string {
	var out []string
	preToolUseHooks(m, func(cmd string, b bool) {
		if b && !isOurHook(cmd) {
			out = append(out, fmt.Sprintf("%q", cmd))
		}
	})
	return out
}

// matchesTool reports whether a hook matcher takes tool.
func matchesTool(matcher, tool string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	if err != nil {
		return matcher == tool
	}
	return re.MatchString(tool)
}

// hookProgram is the program a hook command HookCommand made runs (a
// path IsHookCommand accepts holds no quote).
func hookProgram(command string) string {
	if !strings.HasPrefix(command, "'") {
		return ""
	}
	end := strings.IndexByte(command[1:], '\'')
	if end < 0 {
		return ""
	}
	return command[1 : 1+end]
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
