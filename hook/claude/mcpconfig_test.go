package claude

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMCPServerConfig(t *testing.T) {
	t.Parallel()
	old := []byte(`{"numStartups": 3, "mcpServers": {"other": {"type": "stdio", "command": "x"}}, "projects": {}}`)
	out, changed, err := MergeMCPServer(old, "/opt/gh/gatehouse")
	if err != nil || !changed {
		t.Fatalf("merge: %v %v", changed, err)
	}
	var m struct {
		MCPServers map[string]mcpServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if g := m.MCPServers["gatehouse"]; g.Command != "/opt/gh/gatehouse" || len(g.Args) != 1 || g.Args[0] != "mcp" || g.Type != "stdio" {
		t.Errorf("entry %+v", g)
	}
	if _, ok := m.MCPServers["other"]; !ok {
		t.Error("another server was lost")
	}
	if i, j := strings.Index(string(out), "numStartups"), strings.Index(string(out), "projects"); i < 0 || j < i {
		t.Errorf("keys reordered:\n%s", out)
	}
	if _, changed, _ := MergeMCPServer(out, "/opt/gh/gatehouse"); changed {
		t.Error("a second merge changed something")
	}
	back, changed, err := RemoveMCPServer(out)
	if err != nil || !changed || strings.Contains(string(back), `"gatehouse"`) || !strings.Contains(string(back), `"other"`) {
		t.Errorf("remove: %v %v\n%s", changed, err, back)
	}
	if _, changed, _ := RemoveMCPServer(back); changed {
		t.Error("a second remove changed something")
	}
	// Someone else's server of the same name stays.
	theirs := []byte(`{"mcpServers": {"gatehouse": {"type": "stdio", "command": "/usr/bin/other-tool", "args": []}}}`)
	if _, changed, _ := RemoveMCPServer(theirs); changed {
		t.Error("removed someone else's entry")
	}
	if _, _, err := MergeMCPServer([]byte(`{"mcpServers": [1]}`), "/g"); err == nil {
		t.Error("a malformed mcpServers was taken")
	}
}
