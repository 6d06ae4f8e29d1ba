package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/hook/cursor"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Doctor reads Cursor's files when Cursor is set up here: installed, the
// fact says the built-in shell tool is denied, not routed, and there is
// no finding; the hook's program gone is hook_broken, the MCP server
// removed mcp_missing, the hook removed hook_missing (and no such line).
// The service being down is not a problem for Cursor: its hook asks the
// service nothing.
func TestCursorDrift(t *testing.T) {
	home := t.TempDir()
	o := Options{Home: home}
	if a := readCursor(o); a.Used || len(a.Drift) != 0 {
		t.Errorf("without Cursor: %+v", a)
	}
	prog := filepath.Join(home, "gatehouse")
	must(t, os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755))
	must(t, os.MkdirAll(filepath.Join(home, ".cursor"), 0o700))
	hooks, _, err := cursor.MergeHook(nil, cursor.HookCommand(prog))
	must(t, err)
	mcp, _, err := cursor.MergeMCPServer([]byte(`{"mcpServers": {"other": {"command": "x"}}}`), prog)
	must(t, err)
	must(t, os.WriteFile(cursor.HooksPath(home), hooks, 0o600))
	must(t, os.WriteFile(cursor.MCPPath(home), mcp, 0o600))

	a := readCursor(o)
	if !a.Used || a.Installed || len(a.Drift) != 0 || a.Note != cursor.Routing {
		t.Errorf("installed: %+v", a)
	}
	noClaude := Claude{Drift: []claude.Finding{{Code: "hook_missing"}}}
	r := &Report{SandboxMode: "bubblewrap", ClaudeCode: noClaude, Agents: []Agent{a}}
	r.finish(Options{})
	if f := factValue(r, "cursor"); !strings.Contains(f, cursor.MCPPath(home)) || !strings.Contains(f, "the built-in shell tool is denied, not routed") {
		t.Errorf("fact: %q", f)
	}
	if c, _ := r.Check(CheckService); c.State == api.DoctorProblem {
		t.Errorf("service check: %+v", c)
	}

	must(t, os.Remove(prog))
	if a := readCursor(o); len(a.Drift) != 2 || a.Drift[0].Code != "hook_broken" || a.Drift[1].Code != "mcp_broken" {
		t.Errorf("program gone: %+v", a)
	}
	must(t, os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755))
	unmcp, _, err := cursor.RemoveMCPServer(mcp)
	must(t, err)
	must(t, os.WriteFile(cursor.MCPPath(home), unmcp, 0o600))
	unhooked, _, err := cursor.RemoveHook(hooks)
	must(t, err)
	must(t, os.WriteFile(cursor.HooksPath(home), unhooked, 0o600))
	a = readCursor(o)
	if a.Note != "" || len(a.Drift) != 2 || a.Drift[0].Code != "hook_missing" || a.Drift[1].Code != "mcp_missing" {
		t.Errorf("removed: %+v", a)
	}
	r = &Report{SandboxMode: "bubblewrap", ClaudeCode: noClaude, Agents: []Agent{a}}
	r.finish(Options{})
	if c, _ := r.Check("cursor hook_missing"); c.State != api.DoctorWarning || !strings.Contains(c.Remedy, "install --agent cursor") {
		t.Errorf("checks: %+v", r.Checks)
	}
	if strings.Contains(factValue(r, "cursor"), "denied") {
		t.Errorf("fact without the hook: %q", factValue(r, "cursor"))
	}
}
