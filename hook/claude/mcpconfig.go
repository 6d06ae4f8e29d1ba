package claude

import (
	"bytes"
	"encoding/json"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/internal/jsonobj"
)

// MCPServerName is the name Gatehouse's MCP server is registered under in
// Claude Code's user configuration (~/.claude.json, mcpServers): its tool
// is then mcp__gatehouse__shell__execute.
const MCPServerName = "gatehouse"

// mcpServer is one stdio entry of mcpServers.
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// MCPServerEntry is the mcpServers entry that runs `exe mcp`.
func MCPServerEntry(exe string) json.RawMessage {
	b, _ := json.Marshal(mcpServer{Type: "stdio", Command: exe, Args: []string{"mcp"}, Env: map[string]string{}})
	return b
}

// MergeMCPServer returns config (Claude Code's ~/.claude.json) with the
// gatehouse MCP server registered at user scope, and whether anything
// changed. Every other key is kept, in its order.
func MergeMCPServer(config []byte, exe string) ([]byte, bool, error) {
	root, err := jsonobj.ParseJSONOnly(config)
	if err != nil {
		return nil, false, err
	}
	servers, err := root.Object("mcpServers")
	if err != nil {
		return nil, false, err
	}
	want := MCPServerEntry(exe)
	if cur, ok := servers.Get(MCPServerName); ok && jsonobj.Equal(cur, want) {
		return config, false, nil
	}
	servers.Set(MCPServerName, want)
	root.Set("mcpServers", servers.Encode())
	return root.Indent(), true, nil
}

// RemoveMCPServer returns config without Gatehouse's MCP server, and
// whether anything changed. An entry of the same name that does not run a
// gatehouse binary's mcp command is someone else's, and is kept.
func RemoveMCPServer(config []byte) ([]byte, bool, error) {
	if len(bytes.TrimSpace(config)) == 0 {
		return config, false, nil
	}
	root, err := jsonobj.ParseJSONOnly(config)
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
	var s mcpServer
	if json.Unmarshal(cur, &s) != nil || filepath.Base(s.Command) != "gatehouse" || len(s.Args) != 1 || s.Args[0] != "mcp" {
		return config, false, nil
	}
	servers.Del(MCPServerName)
	root.Set("mcpServers", servers.Encode())
	return root.Indent(), true, nil
}

// MCPConfig returns the file passed to claude --mcp-config (or installed as
// the managed managed-mcp.json) that runs Gatehouse's MCP server with
// --hook-tool: the tool the mcp_tool hook calls.
func MCPConfig(exe string) []byte {
	entry, _ := json.Marshal(mcpServer{Type: "stdio", Command: exe, Args: []string{"mcp", "--hook-tool"}, Env: map[string]string{}})
	b, _ := json.MarshalIndent(map[string]map[string]json.RawMessage{
		"mcpServers": {MCPServerName: entry}}, "", "  ")
	return append(b, '\n')
}
