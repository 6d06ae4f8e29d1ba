package cursor

// This file edits Cursor's ~/.cursor/hooks.json and ~/.cursor/mcp.json.
// Its rules, as for the other agents' settings:
//
//   - everything already in the files is kept: other keys, other hooks,
//     other servers, key order, values byte for byte (only whitespace is
//     re-indented); a file that is not JSON is left alone and is an error;
//   - Gatehouse's hook is the entry of hooks.beforeShellExecution whose
//     command is HookCommand's, with failClosed set, and it is put first
//     (some Cursor versions ran only the first hook of an event's list);
//     installing again changes nothing, and an entry of another gatehouse
//     path is replaced;
//   - Gatehouse's server is mcpServers.gatehouse running `gatehouse mcp`;
//   - uninstalling removes exactly those, then the lists and objects they
//     leave empty. An entry named gatehouse that runs something else is
//     someone else's and is kept.

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/hook/hookjson"
	"github.com/gatehouse-dev/gatehouse/internal/jsonobj"
)

// MCPServerName is the name Gatehouse's MCP server has in mcp.json.
const MCPServerName = "gatehouse"

// HooksPath is Cursor's user hooks file under home.
func HooksPath(home string) string { return filepath.Join(home, ".cursor", "hooks.json") }

// MCPPath is Cursor's user MCP configuration under home.
func MCPPath(home string) string { return filepath.Join(home, ".cursor", "mcp.json") }

// failClosed is the shell around the hook's program: Cursor blocks the
// command on exit status 2, and runs it on any other failure (a program
// that is missing or killed) unless the entry sets failClosed, which
// Cursor versions before it ignore. Around the program, any failure is
// status 2 with a line that says so.
const failClosed = ` || { s=$?; [ "$s" -eq 2 ] || echo "Gatehouse: the hook failed (exit status $s), so the command did not run; ask the user to run gatehouse doctor" >&2; exit 2; }`

// HookCommand returns the hook's command line for the gatehouse program
// at exe, inside the shell that turns its failures into a block.
func HookCommand(exe string) string {
	return shellQuote(exe) + " hook cursor" + failClosed
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hookProgram returns the program of a command HookCommand produced (or of
// the same command without the shell around it); ok is false for any
// other command, or a program whose name does not start "gatehouse".
func hookProgram(cmd string) (exe string, wrapped, ok bool) {
	if !strings.HasPrefix(cmd, "'") {
		return "", false, false
	}
	var b strings.Builder
	i := 1
	for {
		j := strings.IndexByte(cmd[i:], '\'')
		if j < 0 {
			return "", false, false
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
	if rest != " hook cursor" && rest != " hook cursor"+failClosed {
		return "", false, false
	}
	exe = b.String()
	return exe, rest != " hook cursor", strings.HasPrefix(filepath.Base(exe), "gatehouse")
}

// IsHookCommand reports whether cmd is Gatehouse's hook command.
func IsHookCommand(cmd string) bool {
	_, _, ok := hookProgram(cmd)
	return ok
}

// hookEntry is one entry of an event's list in hooks.json.
type hookEntry struct {
	Command    string `json:"command"`
	FailClosed bool   `json:"failClosed,omitempty"`
}

// HookEntry returns the beforeShellExecution entry that runs command.
func HookEntry(command string) json.RawMessage {
	return hookjson.Marshal(hookEntry{Command: command, FailClosed: true})
}

// MergeHook returns hooks.json with the hook that runs command installed
// first in beforeShellExecution, and whether anything changed. hooks may
// be empty (no file).
func MergeHook(hooks []byte, command string) ([]byte, bool, error) {
	root, list, err := parseHooks(hooks)
	if err != nil {
		return nil, false, err
	}
	want := HookEntry(command)
	if len(list) > 0 && jsonobj.Equal(list[0], want) && ours(list[1:]) == 0 {
		return hooks, false, nil
	}
	kept := []json.RawMessage{want}
	for _, e := range list {
		if !isOurs(e) {
			kept = append(kept, e)
		}
	}
	if _, ok := root.Get("version"); !ok {
		root.Set("version", json.RawMessage("1"))
	}
	ev, err := root.Object("hooks")
	if err != nil {
		return nil, false, err
	}
	ev.Set(EventBeforeShellExecution, jsonobj.Array(kept))
	root.Set("hooks", ev.Encode())
	return root.Indent(), true, nil
}

// RemoveHook returns hooks.json without Gatehouse's hook, and whether
// anything changed.
func RemoveHook(hooks []byte) ([]byte, bool, error) {
	root, list, err := parseHooks(hooks)
	if err != nil {
		return nil, false, err
	}
	if ours(list) == 0 {
		return hooks, false, nil
	}
	var kept []json.RawMessage
	for _, e := range list {
		if !isOurs(e) {
			kept = append(kept, e)
		}
	}
	ev, err := root.Object("hooks")
	if err != nil {
		return nil, false, err
	}
	ev.SetOrDel(EventBeforeShellExecution, jsonobj.Array(kept))
	root.SetOrDel("hooks", ev.Encode())
	return root.Indent(), true, nil
}

// parseHooks reads hooks.json and its beforeShellExecution list.
func parseHooks(b []byte) (*jsonobj.Object, []json.RawMessage, error) {
	root, err := jsonobj.Parse(b)
	if err != nil {
		return nil, nil, err
	}
	ev, err := root.Object("hooks")
	if err != nil {
		return nil, nil, err
	}
	list, err := ev.Array(EventBeforeShellExecution, "hooks."+EventBeforeShellExecution)
	if err != nil {
		return nil, nil, err
	}
	return root, list, nil
}

func isOurs(e json.RawMessage) bool {
	var h hookEntry
	return json.Unmarshal(e, &h) == nil && IsHookCommand(h.Command)
}

func ours(list []json.RawMessage) int {
	n := 0
	for _, e := range list {
		if isOurs(e) {
			n++
		}
	}
	return n
}

// mcpServer is one stdio server of mcp.json.
type mcpServer struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// MCPServerEntry is the mcpServers entry that runs `exe mcp`.
func MCPServerEntry(exe string) json.RawMessage {
	return hookjson.Marshal(mcpServer{Command: exe, Args: []string{"mcp"}})
}

// isOurServer reports whether an mcpServers entry runs a gatehouse
// program's mcp command, and returns the program.
func isOurServer(e json.RawMessage) (string, bool) {
	var s mcpServer
	if json.Unmarshal(e, &s) != nil || !strings.HasPrefix(filepath.Base(s.Command), "gatehouse") || len(s.Args) != 1 || s.Args[0] != "mcp" {
		return "", false
	}
	return s.Command, true
}

// MergeMCPServer returns mcp.json with Gatehouse's server registered, and
// whether anything changed. A server named gatehouse that is someone
// else's is an error: nothing is replaced.
func MergeMCPServer(config []byte, exe string) ([]byte, bool, error) {
	root, err := jsonobj.Parse(config)
	if err != nil {
		return nil, false, err
	}
	servers, err := root.Object("mcpServers")
	if err != nil {
		return nil, false, err
	}
	want := MCPServerEntry(exe)
	if cur, ok := servers.Get(MCPServerName); ok {
		if jsonobj.Equal(cur, want) {
			return config, false, nil
		}
		if _, ours := isOurServer(cur); !ours {
			return nil, false, errServerTaken
		}
	}
	servers.Set(MCPServerName, want)
	root.Set("mcpServers", servers.Encode())
	return root.Indent(), true, nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errServerTaken = constError(`mcpServers: a server named "gatehouse" that does not run gatehouse mcp is already there`)

// RemoveMCPServer returns mcp.json without Gatehouse's server, and
// whether anything changed.
func RemoveMCPServer(config []byte) ([]byte, bool, error) {
	root, err := jsonobj.Parse(config)
	if err != nil {
		return nil, false, err
	}
	servers, err := root.Object("mcpServers")
	if err != nil {
		return nil, false, err
	}
	cur, ok := servers.Get(MCPServerName)
	if !ok {
		return config, false, nil
	}
	if _, ours := isOurServer(cur); !ours {
		return config, false, nil
	}
	servers.Del(MCPServerName)
	root.SetOrDel("mcpServers", servers.Encode())
	return root.Indent(), true, nil
}
