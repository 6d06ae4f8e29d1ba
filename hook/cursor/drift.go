package cursor

import (
	"encoding/json"
	"fmt"
	"os"
)

// A Finding is one way Cursor's files drifted from what install writes,
// with the remedy.
type Finding struct {
	// Code is hook_missing, hook_broken, hook_not_fail_closed,
	// mcp_missing, mcp_broken or settings_unreadable.
	Code   string `json:"code"`
	File   string `json:"file,omitempty"`
	Detail string `json:"detail"`
	Remedy string `json:"remedy"`
}

// RemedyInstall is the remedy of a missing or stale part.
const RemedyInstall = "run gatehouse install --agent cursor"

// ReadDrift reads Cursor's hooks.json and mcp.json under home and says how
// they drifted: the hook present, failing closed and its program
// executable; the MCP server present and its program executable.
func ReadDrift(home string) []Finding {
	return Drift(HooksPath(home), MCPPath(home), os.ReadFile, executable)
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Drift is ReadDrift with the files' reader and the executable check given.
func Drift(hooksFile, mcpFile string, read func(string) ([]byte, error), exec func(string) bool) []Finding {
	var out []Finding
	load := func(p string) ([]byte, bool) {
		b, err := read(p)
		if err != nil && !os.IsNotExist(err) {
			out = append(out, Finding{Code: "settings_unreadable", File: p,
				Detail: fmt.Sprintf("%s cannot be read: %v", p, err), Remedy: "make it readable by this user"})
			return nil, false
		}
		return b, true
	}
	if b, ok := load(hooksFile); ok {
		out = append(out, hookDrift(hooksFile, b, exec)...)
	}
	if b, ok := load(mcpFile); ok {
		out = append(out, mcpDrift(mcpFile, b, exec)...)
	}
	return out
}

func hookDrift(file string, b []byte, exec func(string) bool) []Finding {
	_, list, err := parseHooks(b)
	if err != nil {
		return []Finding{{Code: "settings_unreadable", File: file, Detail: fmt.Sprintf("%s: %v", file, err), Remedy: "fix the file (Cursor reads it as JSON)"}}
	}
	for _, e := range list {
		var h hookEntry
		if json.Unmarshal(e, &h) != nil {
			continue
		}
		exe, wrapped, ok := hookProgram(h.Command)
		if !ok {
			continue
		}
		switch {
		case !exec(exe):
			return []Finding{{Code: "hook_broken", File: file, Remedy: RemedyInstall,
				Detail: fmt.Sprintf("Cursor's beforeShellExecution hook runs %s, which is not an executable file: every shell command is blocked, without the message that sends the agent to gatehouse mcp", exe)}}
		case !wrapped || !h.FailClosed:
			return []Finding{{Code: "hook_not_fail_closed", File: file, Remedy: RemedyInstall,
				Detail: "Cursor's beforeShellExecution hook is not set to fail closed (failClosed and the wrapper that exits 2): if it fails, Cursor runs the command outside Gatehouse"}}
		}
		return nil
	}
	return []Finding{{Code: "hook_missing", File: file, Remedy: RemedyInstall,
		Detail: "Gatehouse's beforeShellExecution hook is not in " + file + ": Cursor's built-in shell tool runs commands outside Gatehouse"}}
}

func mcpDrift(file string, b []byte, exec func(string) bool) []Finding {
	var c struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if len(b) > 0 && json.Unmarshal(b, &c) != nil {
		return []Finding{{Code: "settings_unreadable", File: file, Detail: file + " is not valid JSON", Remedy: "fix the file (Cursor reads it as JSON)"}}
	}
	e, ok := c.MCPServers[MCPServerName]
	exe, ours := isOurServer(e)
	switch {
	case !ok || !ours:
		return []Finding{{Code: "mcp_missing", File: file, Remedy: RemedyInstall,
			Detail: "Gatehouse's MCP server is not in " + file + ": the hook denies Cursor's shell tool and the agent has no shell__execute to turn to"}}
	case !exec(exe):
		return []Finding{{Code: "mcp_broken", File: file, Remedy: RemedyInstall,
			Detail: fmt.Sprintf("Cursor's gatehouse MCP server runs %s, which is not an executable file: the agent has no shell__execute", exe)}}
	}
	return nil
}
