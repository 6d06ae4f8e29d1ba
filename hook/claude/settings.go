package claude

// This file edits Claude Code's settings.json. Its rules:
//
//   - everything already in the file is kept: other keys, other hooks,
//     key order, values byte for byte (only whitespace is re-indented);
//   - the file must be JSON (Claude Code accepts nothing else); a file that
//     does not parse is left alone and is an error;
//   - Gatehouse's hook is a matcher group (Bash and the file tools, Matcher) in hooks.PreToolUse whose
//     one hook runs '<path>/gatehouse' hook claude …; installing it again
//     changes nothing, and an entry of another gatehouse path is replaced
//     in place;
//   - a SessionEnd group runs the same command, so that the service ends
//     the session's approve-for-session grants;
//   - a PostToolUse group (the tools that return what they read, and MCP
//     tools: OutputMatcher) runs the same command, so that their output
//     reaches the model cleaned of credentials;
//   - a PermissionRequest group (Bash) runs the same command, so that a
//     routed command's relay runs outside Claude Code's sandbox when, and
//     only when, its ticket is live (hook/decide's permission);
//   - uninstalling removes exactly those groups (or that hook, when a user
//     put other hooks in its group), then each event's list and hooks
//     when they are left empty.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
	"github.com/gatehouse-dev/gatehouse/internal/jsonobj"
)

// HookTimeoutSeconds is the hook's timeout in the settings: Claude Code
// waits that long for a decision. A call held for a person's approval
// waits up to policy.approval_timeout_seconds (at most 600), so the hook's
// timeout is above the longest one.
const HookTimeoutSeconds = 630

// HookCommand returns the hook's command line for the gatehouse binary at
// exe; routing, when not empty, is the least routing the hook asks for.
func HookCommand(exe, routing string) string {
	c := ShellQuote(exe) + " hook claude"
	if routing != "" {
		c += " --routing " + routing
	}
	return c
}

// hookCommandRE matches a command HookCommand produced, for any path.
var hookCommandRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^'[^']*' hook claude( --routing [a-z_]+)?$`) })

// IsHookCommand reports whether cmd is Gatehouse's hook command.
func IsHookCommand(cmd string) bool {
	m := hookCommandRE().FindString(cmd)
	if m == "" {
		return false
	}
	path := strings.ReplaceAll(cmd[1:strings.Index(cmd[1:], "'")+1], `'\''`, "'")
	return strings.HasPrefix(filepath.Base(path), "gatehouse")
}

// hookEntry is one hook of a matcher group.
type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command,omitempty"`
	// Server, Tool and Input name an mcp_tool hook's tool and its
	// arguments (mcphook.go).
	Server    string            `json:"server,omitempty"`
	Tool      string            `json:"tool,omitempty"`
	Input     map[string]string `json:"input,omitempty"`
	Timeout   int               `json:"timeout,omitempty"`
	OnFailure string            `json:"onFailure,omitempty"`
	// StatusMessage replaces Claude Code's "running PreToolUse hook" in
	// its spinner while the hook runs.
	StatusMessage string `json:"statusMessage,omitempty"`
}

// matcherGroup is one element of hooks.PreToolUse.
type matcherGroup struct {
	Matcher string      `json:"matcher"`
	Hooks   []hookEntry `json:"hooks"`
}

// HookStatusMessage is what Claude Code's spinner says while the
// PreToolUse hook runs: mostly a moment, but as long as a person takes
// when the call is held for approval. It is short enough for the
// spinner's line on an 80-column terminal (Claude Code shows it as
// "✻ Verb… (MESSAGE… · 33s · ↓ 12 tokens)"); the hook's own output and
// the notification name the approval and where to answer.
const HookStatusMessage = "Gatehouse: deciding, or awaiting your approval"

// HookGroup returns the PreToolUse matcher group that runs command. A
// failing hook blocks the call (onFailure: block): Gatehouse fails closed
// even when the hook cannot start.
func HookGroup(command string) json.RawMessage { return hookGroup(commandEntry(command)) }

func hookGroup(h hookEntry) json.RawMessage {
	h.Timeout, h.OnFailure, h.StatusMessage = HookTimeoutSeconds, "block", HookStatusMessage
	b, _ := json.Marshal(matcherGroup{Matcher: Matcher, Hooks: []hookEntry{h}})
	return b
}

// commandEntry is the command hook that runs command.
func commandEntry(command string) hookEntry { return hookEntry{Type: "command", Command: command} }

// SessionEndGroup returns the SessionEnd group that runs command: the
// service then ends the session's approve-for-session grants.
func SessionEndGroup(command string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Hooks []hookEntry `json:"hooks"`
	}{[]hookEntry{{Type: "command", Command: command, Timeout: SessionEndTimeoutSeconds}}})
	return b
}

// SessionEndTimeoutSeconds bounds the SessionEnd hook: it only tells the
// service.
const SessionEndTimeoutSeconds = 10

// PostToolUseTimeoutSeconds bounds the PostToolUse hook: the service
// redacts one output, and nothing waits for a person.
const PostToolUseTimeoutSeconds = 60

// PostToolUseGroup returns the PostToolUse matcher group that runs
// command on the output of OutputMatcher's tools. A failing hook blocks
// (onFailure: block), as the PreToolUse one does; the hook itself
// withholds an output the service could not clean.
func PostToolUseGroup(command string) json.RawMessage { return postToolUseGroup(commandEntry(command)) }

func postToolUseGroup(h hookEntry) json.RawMessage {
	h.Timeout, h.OnFailure = PostToolUseTimeoutSeconds, "block"
	b, _ := json.Marshal(matcherGroup{Matcher: OutputMatcher, Hooks: []hookEntry{h}})
	return b
}

// PermissionRequestTimeoutSeconds bounds the PermissionRequest hook: the
// service looks a ticket up, and nothing waits for a person.
const PermissionRequestTimeoutSeconds = 30

// PermissionRequestGroup returns the PermissionRequest matcher group that
// runs command for Bash: it answers Claude Code's "run outside of the
// sandbox?" for a live relay, in the person's place. A hook that fails
// or answers nothing leaves the question to the person (in claude -p, a
// denial): no onFailure is set, and none is needed, since failing never
// lets anything out.
func PermissionRequestGroup(command string) json.RawMessage {
	return permissionRequestGroup(commandEntry(command))
}

func permissionRequestGroup(h hookEntry) json.RawMessage {
	h.Timeout = PermissionRequestTimeoutSeconds
	b, _ := json.Marshal(matcherGroup{Matcher: ToolBash, Hooks: []hookEntry{h}})
	return b
}

// hookEvents are the events Gatehouse's hook is installed for, with the
// group each gets.
var hookEvents = []struct {
	name  string
	group func(command string) json.RawMessage
}{
	{"PreToolUse", HookGroup},
	{"PostToolUse", PostToolUseGroup},
	{EventPermissionRequest, PermissionRequestGroup},
	{"SessionEnd", SessionEndGroup},
}

// MergeHook returns settings with the hook that runs command installed,
// and whether anything changed. settings may be empty (no file).
func MergeHook(settings []byte, command string) ([]byte, bool, error) {
	root, err := jsonobj.ParseJSONOnly(settings)
	if err != nil {
		return nil, false, err
	}
	hooks, err := root.Object("hooks")
	if err != nil {
		return nil, false, err
	}
	for _, ev := range hookEvents {
		groups, err := hooks.Array(ev.name, "hooks."+ev.name)
		if err != nil {
			return nil, false, err
		}
		want := ev.group(command)
		found := false
		for i, g := range groups {
			cmds := hookjson.Commands(g)
			if len(cmds) != 1 || !IsHookCommand(cmds[0]) {
				continue
			}
			if found || !jsonobj.Equal(g, want) {
				if found {
					groups[i] = nil // a duplicate: keep one
				} else {
					groups[i] = want
				}
			}
			found = true
		}
		if !found {
			groups = append(groups, want)
		}
		hooks.Set(ev.name, jsonobj.Array(groups))
	}
	root.Set("hooks", hooks.Encode())
	out := root.Indent()
	return out, !jsonobj.Equal(out, settings) || len(settings) == 0, nil
}

// RemoveHook returns settings without Gatehouse's hook, and whether
// anything changed.
func RemoveHook(settings []byte) ([]byte, bool, error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		return settings, false, nil
	}
	root, err := jsonobj.ParseJSONOnly(settings)
	if err != nil {
		return nil, false, err
	}
	raw, ok := root.Get("hooks")
	if !ok {
		return settings, false, nil
	}
	hooks, err := jsonobj.ParseJSONOnly(raw)
	if err != nil {
		return nil, false, fmt.Errorf("hooks: %w", err)
	}
	changed := false
	for _, ev := range hookEvents {
		graw, ok := hooks.Get(ev.name)
		if !ok {
			continue
		}
		var groups []json.RawMessage
		if err := json.Unmarshal(graw, &groups); err != nil {
			return nil, false, fmt.Errorf("hooks.%s is not a list", ev.name)
		}
		kept, dropped := hookjson.Drop(groups, IsHookCommand)
		if !dropped {
			continue
		}
		changed = true
		hooks.SetOrDel(ev.name, jsonobj.Array(kept))
	}
	if !changed {
		return settings, false, nil
	}
	root.SetOrDel("hooks", hooks.Encode())
	return root.Indent(), true, nil
}

// HasHook reports whether settings hold Gatehouse's hook, and its command.
func HasHook(settings []byte) (string, bool) {
	var s struct {
		Hooks struct {
			PreToolUse []matcherGroup `json:"PreToolUse"`
		} `json:"hooks"`
	}
	if json.Unmarshal(settings, &s) != nil {
		return "", false
	}
	for _, g := range s.Hooks.PreToolUse {
		for _, h := range g.Hooks {
			if IsHookCommand(h.Command) {
				return h.Command, true
			}
		}
	}
	return "", false
}

// ManagedOptions configure RenderManaged.
type ManagedOptions struct {
	// Exe is the absolute path of the gatehouse binary.
	Exe string
	// Routing is the least routing the hook asks the service for.
	Routing string
	// HookKind is how Claude Code calls the hook (HookKinds): "command"
	// (or "") starts it for each event; "mcp_tool" calls a tool of the
	// Gatehouse MCP server Claude Code runs (MCPConfig), with no process
	// a call.
	HookKind string
	// Home is the home directory the paths below are written relative to
	// ("~/…"), so that one file serves every user.
	Home string
	// DenyPaths are the absolute paths no file tool may read or change:
	// the deny-read set and Gatehouse's own directories.
	DenyPaths []string
	// Readable are paths that must stay readable inside Claude Code's
	// sandbox, which takes the Read rules as its own deny-read set: the
	// relay's FIFO directory. A DenyPaths entry holding one gets Edit rules
	// only; its secret files are then listed in DenyPaths one by one.
	Readable []string
	// DenyGlobs are absolute patterns ("*" within one path element) of
	// directories no file tool may read or change, whoever the user: the
	// credential directories, which are per user and outside home
	// (/run/user/*/gatehouse-cred). Each must match only directories that
	// live as long as a login (globRules says why).
	DenyGlobs []string
}

// DenyRules returns Claude Code permission rules refusing its file tools
// every path in paths: Read rules (which Claude Code applies to Glob and
// Grep too) and Edit rules (Write, Edit, MultiEdit, NotebookEdit), each for
// the path itself and everything under it. A path under home is written
// "~/…"; any other absolute one "//…", the rule syntax's root.
//
// A path holding one of readable gets no Read rule: Claude Code's sandbox
// would hide what is under it from the commands it runs.
func DenyRules(home string, paths, readable []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		p = filepath.ToSlash(filepath.Clean(p))
		tools := []string{"Read", "Edit"}
		for _, r := range readable {
			if r = filepath.ToSlash(filepath.Clean(r)); r == p || strings.HasPrefix(r, strings.TrimSuffix(p, "/")+"/") {
				tools = []string{"Edit"}
			}
		}
		h := filepath.ToSlash(filepath.Clean(home))
		var spec string
		switch {
		case home != "" && strings.HasPrefix(p, strings.TrimSuffix(h, "/")+"/"):
			spec = "~/" + strings.TrimPrefix(p, strings.TrimSuffix(h, "/")+"/")
		case strings.HasPrefix(p, "/"):
			spec = "/" + p
		default:
			continue
		}
		for _, tool := range tools {
			for _, r := range []string{tool + "(" + spec + ")", tool + "(" + strings.TrimSuffix(spec, "/") + "/**)"} {
				if !seen[r] {
					seen[r] = true
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// GlobDenyRules returns Claude Code permission rules refusing its file
// tools each directory an absolute pattern in globs matches: a Read and
// an Edit rule for the directory, which covers what is under it (checked
// with Claude Code 2.1.332: "File is in a directory that is denied").
//
// No "/**" rule is added, and no pattern may reach a place whose entries
// come and go: Claude Code expands its Read rules' globs into the paths
// that exist when its sandbox starts and has bubblewrap mount over each,
// and a path gone by then fails the start ("bwrap: Can't mkdir parents for
// /proc/2615/syscall", measured with rules on /proc/*/…). That is also
// why the processes' directories in /proc get no rule here: a rule on
// /proc/self makes Claude Code refuse every Bash command that names
// /proc/self or /dev/stdin, and its Read refuses process files on its own;
// the hook refuses them (service/fileaccess.go).
func GlobDenyRules(globs []string) []string {
	var out []string
	for _, g := range globs {
		if !strings.HasPrefix(g, "/") {
			continue
		}
		g = strings.TrimSuffix(g, "/")
		out = append(out, "Read(/"+g+")", "Edit(/"+g+")")
	}
	return out
}

// RenderManaged returns the managed-settings.json IT pushes: Claude Code's
// own sandbox on, with no start without it and no bypass-permissions mode,
// Gatehouse's hooks (PreToolUse, PostToolUse, PermissionRequest,
// SessionEnd), no hooks but managed ones, and permission rules keeping the
// file tools out of o.DenyPaths and o.DenyGlobs (a second wall behind the
// hook's own refusal). It allows no unix socket: the relay needs none.
//
// Unsandboxed commands are allowed (allowUnsandboxedCommands), so that a
// routed command's relay can run outside Claude Code's sandbox — the
// command itself runs in Gatehouse's. Claude Code asks before it runs any
// command outside its sandbox; Gatehouse's PermissionRequest hook answers
// yes for a live relay only, and leaves everything else to the person.
func RenderManaged(o ManagedOptions) []byte {
	cmd := HookCommand(o.Exe, o.Routing)
	v := struct {
		Sandbox struct {
			Enabled                  bool `json:"enabled"`
			AllowUnsandboxedCommands bool `json:"allowUnsandboxedCommands"`
			FailIfUnavailable        bool `json:"failIfUnavailable"`
		} `json:"sandbox"`
		Permissions struct {
			Deny                         []string `json:"deny"`
			DisableBypassPermissionsMode string   `json:"disableBypassPermissionsMode"`
		} `json:"permissions"`
		Hooks struct {
			PreToolUse        []json.RawMessage `json:"PreToolUse"`
			PostToolUse       []json.RawMessage `json:"PostToolUse"`
			PermissionRequest []json.RawMessage `json:"PermissionRequest"`
			SessionEnd        []json.RawMessage `json:"SessionEnd"`
		} `json:"hooks"`
		AllowManagedHooksOnly bool `json:"allowManagedHooksOnly"`
	}{}
	v.Sandbox.Enabled, v.Sandbox.AllowUnsandboxedCommands, v.Sandbox.FailIfUnavailable = true, true, true
	v.Permissions.Deny = append(DenyRules(o.Home, o.DenyPaths, o.Readable), GlobDenyRules(o.DenyGlobs)...)
	if v.Permissions.Deny == nil {
		v.Permissions.Deny = []string{}
	}
	v.Permissions.DisableBypassPermissionsMode = "disable"
	h := commandEntry(cmd)
	if o.HookKind == "mcp_tool" {
		h = mcpHookEntry(o.Routing)
		// The tool is Claude Code's to call, not the model's.
		v.Permissions.Deny = append(v.Permissions.Deny, MCPHookPermission)
	}
	v.Hooks.PreToolUse = []json.RawMessage{hookGroup(h)}
	v.Hooks.PostToolUse = []json.RawMessage{postToolUseGroup(h)}
	v.Hooks.PermissionRequest = []json.RawMessage{permissionRequestGroup(h)}
	// A session's end is told by the command hook, whatever the kind: it
	// comes once a session, as the MCP server may be stopping.
	v.Hooks.SessionEnd = []json.RawMessage{SessionEndGroup(cmd)}
	v.AllowManagedHooksOnly = true
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}

// ManagedPath returns where Claude Code reads managed settings on goos.
// It also reads drop-in files from managed-settings.d beside it.
func ManagedPath(goos string) string {
	switch goos {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}
