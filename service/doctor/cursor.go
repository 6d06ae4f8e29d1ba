package doctor

import (
	"os"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/hook/cursor"
)

// readCursor reads Cursor's ~/.cursor/hooks.json and ~/.cursor/mcp.json
// and says how they drifted (hook/cursor Drift): the deny hook present,
// failing closed and its program executable; the gatehouse MCP server
// present and its program executable. Its Note says that the built-in
// shell tool is denied, not routed. It is never Installed in the sense
// the service check reads: the hook asks the service nothing, and
// gatehouse mcp runs a command in its own process when no service runs.
func readCursor(o Options) Agent {
	a := Agent{Name: "cursor", Label: "cursor", Drift: []AgentFinding{}}
	if o.Home == "" {
		return a
	}
	a.Files = []string{cursor.HooksPath(o.Home), cursor.MCPPath(o.Home)}
	if fi, err := os.Stat(filepath.Join(o.Home, ".cursor")); err != nil || !fi.IsDir() {
		return a
	}
	a.Used = true
	hooked := true
	for _, f := range cursor.ReadDrift(o.Home) {
		if f.Code == "hook_missing" {
			hooked = false
		}
		a.Drift = append(a.Drift, AgentFinding(f))
	}
	if hooked {
		a.Note = cursor.Routing
	}
	return a
}
