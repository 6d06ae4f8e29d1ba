package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
	"github.com/gatehouse-dev/gatehouse/internal/jsonobj"
)

// Matcher is the hook's matcher: a regular expression Codex matches
// against tool_name, here its shell tools'.
const Matcher = "^Bash$"

// HookTimeoutSeconds is the hook's timeout in Codex: above the longest a
// call held for a person's approval waits (decide's 620 s), as Claude
// Code's is. Codex runs the call when the hook times out.
const HookTimeoutSeconds = 630

// HookStatusMessage is what Codex shows while the hook runs: mostly a
// moment, but as long as a person takes when the call is held.
const HookStatusMessage = "Gatehouse: deciding, or awaiting your approval"

// HooksFile is Codex's hooks file in its home ($CODEX_HOME, by default
// ~/.codex), and ConfigFile its configuration, where a hook's trust is.
const (
	HooksFile  = "hooks.json"
	ConfigFile = "config.toml"
)

// HookCommand returns the hook's command line for the gatehouse binary (or
// gatehouse-hook) at exe. Codex runs it with sh -c, and runs the call when
// the hook exits with a status other than 0 and 2; so the line turns any
// other status — the program missing (127), killed by a signal, failing —
// into status 2 with a reason on stderr, which Codex takes as a block.
func HookCommand(exe string) string {
	return "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' hook codex" + failClosed
}

// failClosed is the end of the hook's command line that blocks the call
// when the hook did not answer.
const failClosed = ` || { echo "Gatehouse's hook failed (exit status $?), so the command did not run; ask the user to run 'gatehouse doctor'" >&2; exit 2; }`

// hookCommandRE matches a command HookCommand produced, for any path.
var hookCommandRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^'((?:[^']|'\\'')*)' hook codex$`) })

// IsHookCommand reports whether cmd is Gatehouse's Codex hook command
// (with or without its fail-closed end).
func IsHookCommand(cmd string) bool {
	m := hookCommandRE().FindStringSubmatch(strings.TrimSuffix(cmd, failClosed))
	if m == nil {
		return false
	}
	return strings.HasPrefix(filepath.Base(strings.ReplaceAll(m[1], `'\''`, "'")), "gatehouse")
}

// handler is one hook of a matcher group, as hooks.json spells it.
type handler struct {
	Type          string `json:"type"`
	Command       string `json:"command"`
	Timeout       int    `json:"timeout,omitempty"`
	StatusMessage string `json:"statusMessage,omitempty"`
}

type group struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []handler `json:"hooks"`
}

// Group returns the PreToolUse matcher group that runs command.
func Group(command string) json.RawMessage {
	return hookjson.Marshal(group{Matcher: Matcher, Hooks: []handler{{
		Type: "command", Command: command, Timeout: HookTimeoutSeconds, StatusMessage: HookStatusMessage,
	}}})
}

// MergeHook returns the hooks file with the hook that runs command
// installed, whether anything changed, and the position of Gatehouse's
// group among the PreToolUse groups (Codex's trust key names it). hooks
// may be empty (no file). Every other key and hook is kept, in order; a
// new group goes last, so that no other hook's position, and so its trust,
// moves.
func MergeHook(hooks []byte, command string) (out []byte, changed bool, index int, err error) {
	root, err := jsonobj.ParseJSONOnly(hooks)
	if err != nil {
		return nil, false, 0, err
	}
	events, err := root.Object("hooks")
	if err != nil {
		return nil, false, 0, err
	}
	groups, err := events.Array(EventPreToolUse, "hooks."+EventPreToolUse)
	if err != nil {
		return nil, false, 0, err
	}
	want := Group(command)
	index = -1
	for i, g := range groups {
		if !isOurs(g) {
			continue
		}
		if index >= 0 {
			groups[i] = nil // a duplicate: keep one
			continue
		}
		groups[i], index = want, i
	}
	if index < 0 {
		groups, index = append(groups, want), len(groups)
	}
	events.Set(EventPreToolUse, jsonobj.Array(groups))
	root.Set("hooks", events.Encode())
	out = root.Indent()
	return out, len(hooks) == 0 || !jsonobj.Equal(out, hooks), index, nil
}

// RemoveHook returns the hooks file without Gatehouse's group, whether
// anything changed, and the position the group had (-1 when none).
func RemoveHook(hooks []byte) (out []byte, changed bool, index int, err error) {
	index = -1
	if len(bytes.TrimSpace(hooks)) == 0 {
		return hooks, false, index, nil
	}
	root, err := jsonobj.ParseJSONOnly(hooks)
	if err != nil {
		return nil, false, index, err
	}
	raw, ok := root.Get("hooks")
	if !ok {
		return hooks, false, index, nil
	}
	events, err := jsonobj.ParseJSONOnly(raw)
	if err != nil {
		return nil, false, index, fmt.Errorf("hooks: %w", err)
	}
	groups, err := events.Array(EventPreToolUse, "hooks."+EventPreToolUse)
	if err != nil {
		return nil, false, index, err
	}
	var kept []json.RawMessage
	for i, g := range groups {
		if isOurs(g) {
			if index < 0 {
				index = i
			}
			continue
		}
		kept = append(kept, g)
	}
	if index < 0 {
		return hooks, false, index, nil
	}
	events.SetOrDel(EventPreToolUse, jsonobj.Array(kept))
	root.Set("hooks", events.Encode())
	return root.Indent(), true, index, nil
}

// Installed describes Gatehouse's hook in a hooks file.
type Installed struct {
	// Index is the group's position among the PreToolUse groups.
	Index   int
	Command string
	// Current is whether the group is exactly what Group writes for its
	// command.
	Current bool
	// Others counts the other PreToolUse groups whose matcher may select
	// Bash: their rewrites run beside Gatehouse's, and the last one to
	// finish wins.
	Others int
}

// FindHook returns Gatehouse's group in a hooks file; ok is false when
// there is none (or the file is not a hooks file).
func FindHook(hooks []byte) (Installed, bool) {
	var f struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(hooks, &f) != nil {
		return Installed{}, false
	}
	in, found := Installed{Index: -1}, false
	for i, g := range f.Hooks[EventPreToolUse] {
		var gr group
		if json.Unmarshal(g, &gr) != nil {
			continue
		}
		if !found && isOurs(g) {
			in.Index, in.Command, found = i, gr.Hooks[0].Command, true
			in.Current = jsonobj.Equal(g, Group(in.Command))
			continue
		}
		if gr.Matcher == "" || gr.Matcher == "*" || regexpMatches(gr.Matcher, ToolBash) {
			in.Others++
		}
	}
	return in, found
}

func regexpMatches(pattern, s string) bool {
	re, err := regexp.Compile(pattern)
	return err == nil && re.MatchString(s)
}

// isOurs reports whether a matcher group is Gatehouse's: one command hook
// running Gatehouse's hook command.
func isOurs(g json.RawMessage) bool {
	var gr group
	if json.Unmarshal(g, &gr) != nil || len(gr.Hooks) != 1 {
		return false
	}
	return gr.Hooks[0].Type == "command" && IsHookCommand(gr.Hooks[0].Command)
}

// TrustKey is the key of a hook's state in Codex's config.toml: the hooks
// file's absolute path, the event, the group's position and the hook's in
// it (codex-rs/hooks/src/lib.rs hook_key).
func TrustKey(hooksFile string, index int) string {
	return fmt.Sprintf("%s:pre_tool_use:%d:0", hooksFile, index)
}

// TrustHash is the hash Codex trusts Gatehouse's hook by, exactly as Codex
// computes it (codex-rs/hooks/src/engine/discovery.rs command_hook_hash
// and codex-rs/config version_for_toml): SHA-256 of the compact JSON, keys
// sorted, of the hook's normalized identity — the event's key label, the
// matcher, and the one handler with Codex's defaults filled in (async
// false; the timeout, 600 when unset) and unset fields left out.
func TrustHash(command string) string {
	var b strings.Builder
	b.WriteString(`{"event_name":"pre_tool_use","hooks":[{"async":false,"command":`)
	writeSerdeString(&b, command)
	b.WriteString(`,"statusMessage":`)
	writeSerdeString(&b, HookStatusMessage)
	b.WriteString(`,"timeout":` + strconv.Itoa(HookTimeoutSeconds) + `,"type":"command"}],"matcher":`)
	writeSerdeString(&b, Matcher)
	b.WriteString("}")
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeSerdeString writes s as serde_json writes a string: '"' and '\'
// escaped, the control characters as \b \t \n \f \r or \u00xx, and
// nothing else (no HTML or line-separator escapes, unlike encoding/json).
func writeSerdeString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Codex's commands are Rust Strings, always UTF-8; Gatehouse's
			// are paths, which could be otherwise: what Codex would read
			// after a lossy conversion.
			b.WriteString("\ufffd")
			i++
			continue
		}
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// trustHeader is the table header of key's hook state.
func trustHeader(key string) string { return "[hooks.state." + tomlString(key) + "]" }

// SetTrust returns config.toml with the hook at key trusted by hash, and
// whether anything changed. It edits the text, so that the user's
// comments and layout stay: the table [hooks.state."KEY"] gets its
// trusted_hash line replaced, or is appended. The result must be checked
// as TOML by the caller (a key defined another way, such as a dotted key,
// would now be defined twice).
func SetTrust(config []byte, key, hash string) ([]byte, bool) {
	line := "trusted_hash = " + tomlString(hash)
	lines := splitLines(config)
	start, end := findTable(lines, trustHeader(key))
	if start < 0 {
		var b bytes.Buffer
		b.Write(config)
		if len(config) > 0 && !bytes.HasSuffix(config, []byte("\n")) {
			b.WriteByte('\n')
		}
		if len(bytes.TrimSpace(config)) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(trustHeader(key) + "\n" + line + "\n")
		return b.Bytes(), true
	}
	for i := start + 1; i < end; i++ {
		if isKeyLine(lines[i], "trusted_hash") {
			if strings.TrimRight(lines[i], "\r\n") == line {
				return config, false
			}
			lines[i] = line + "\n"
			return []byte(strings.Join(lines, "")), true
		}
	}
	lines = append(lines[:start+1], append([]string{line + "\n"}, lines[start+1:]...)...)
	return []byte(strings.Join(lines, "")), true
}

// RemoveTrust returns config.toml without the trusted_hash of the hook at
// key, and without its table when nothing else is left in it.
func RemoveTrust(config []byte, key string) ([]byte, bool) {
	lines := splitLines(config)
	start, end := findTable(lines, trustHeader(key))
	if start < 0 {
		return config, false
	}
	var rest []string
	others := false
	for i := start + 1; i < end; i++ {
		if isKeyLine(lines[i], "trusted_hash") {
			continue
		}
		t := strings.TrimSpace(lines[i])
		if t != "" && !strings.HasPrefix(t, "#") {
			others = true
		}
		rest = append(rest, lines[i])
	}
	var out []string
	out = append(out, lines[:start]...)
	if others {
		out = append(out, lines[start])
		out = append(out, rest...)
	} else {
		// Drop the blank line SetTrust wrote before the table.
		if n := len(out); n > 0 && strings.TrimSpace(out[n-1]) == "" {
			out = out[:n-1]
		}
		for _, l := range rest {
			if strings.TrimSpace(l) != "" {
				out = append(out, l)
			}
		}
	}
	out = append(out, lines[end:]...)
	return []byte(strings.Join(out, "")), true
}

// TrustedHash returns the trusted_hash config.toml's text records for key
// ("" when none), as SetTrust writes it.
func TrustedHash(config []byte, key string) string {
	lines := splitLines(config)
	start, end := findTable(lines, trustHeader(key))
	for i := start + 1; start >= 0 && i < end; i++ {
		if isKeyLine(lines[i], "trusted_hash") {
			v := strings.TrimSpace(lines[i][strings.IndexByte(lines[i], '=')+1:])
			if s, err := strconv.Unquote(v); err == nil {
				return s
			}
		}
	}
	return ""
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// findTable returns the line of header and the line where its table ends
// (the next table header, or the end); start is -1 when it is not there.
func findTable(lines []string, header string) (start, end int) {
	start = -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if start < 0 {
			if t == header {
				start = i
			}
			continue
		}
		if strings.HasPrefix(t, "[") {
			return start, i
		}
	}
	return start, len(lines)
}

func isKeyLine(line, key string) bool {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, key) {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(t[len(key):]), "=")
}

// RenderManaged returns the managed hooks of Codex's requirements.toml
// (/etc/codex/requirements.toml): Gatehouse's PreToolUse hook running
// command, which Codex runs without a trust step and the user cannot turn
// off; with managedOnly, allow_managed_hooks_only as well, so that no
// user or project hook runs beside it (and rewrites the command after
// Gatehouse did).
func RenderManaged(command string, managedOnly bool) []byte {
	var b bytes.Buffer
	b.WriteString("# Gatehouse: every shell command Codex runs is decided by Gatehouse and\n")
	b.WriteString("# routed into its sandbox. Rendered by 'gatehouse managed-settings --agent codex'.\n")
	if managedOnly {
		b.WriteString("allow_managed_hooks_only = true\n")
	}
	b.WriteString("\n[[hooks.PreToolUse]]\n")
	b.WriteString("matcher = " + tomlString(Matcher) + "\n\n")
	b.WriteString("[[hooks.PreToolUse.hooks]]\n")
	b.WriteString("type = \"command\"\n")
	b.WriteString("command = " + tomlString(command) + "\n")
	b.WriteString("timeout = " + strconv.Itoa(HookTimeoutSeconds) + "\n")
	b.WriteString("statusMessage = " + tomlString(HookStatusMessage) + "\n")
	return b.Bytes()
}
