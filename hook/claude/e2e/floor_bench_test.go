package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkClaudeRoutedFloor measures what Claude Code's own mechanics of
// a routed call cost when the hooks and the relay do no work at all: the
// floor under any Gatehouse, however fast. The managed settings as
// rendered, with every hook's command replaced by a shell one-liner that
// answers as Gatehouse's would, at once (PreToolUse: allow, the command
// rewritten to true with dangerouslyDisableSandbox; PermissionRequest:
// allow; the others: nothing), against Claude Code alone and with its own
// sandbox; the same with the mcp_tool hooks (--hook-kind mcp_tool) served
// by an MCP server that answers at once (floorMCP, the floor under
// gatehouse mcp --hook-tool); and the hook alone (Claude Code's sandbox
// off, PreToolUse only).
// It reports each in ms a call and each floor over alone and over the
// sandbox: routed-managed / alone cannot go below floor-managed / alone.
//
//	go test -run '^$' -bench ClaudeRoutedFloor -benchtime 1x -v ./hook/claude/e2e
func BenchmarkClaudeRoutedFloor(b *testing.B) {
	claude := requireClaude(b)
	if b.N > 1 {
		b.Skip("one measurement a process: run with -benchtime 1x")
	}
	w := sessionWorld(b, claude)
	allow := map[string]any{"permissions": map[string]any{"allow": []string{"Bash(true)"}}}

	sb := w.managedSettings()
	delete(sb, "hooks")
	delete(sb, "allowManagedHooksOnly")

	pre := `cat >/dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"true","dangerouslyDisableSandbox":true}}}'`
	perm := `cat >/dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`
	floor := w.managedSettings()
	hooks, _ := floor["hooks"].(map[string]any)
	if hooks["PreToolUse"] == nil || hooks["PermissionRequest"] == nil {
		b.Fatalf("the managed settings carry no PreToolUse and PermissionRequest hooks: %v", hooks)
	}
	for event, groups := range hooks {
		for _, g := range anyList(groups) {
			gm, _ := g.(map[string]any)
			for _, x := range anyList(gm["hooks"]) {
				h, _ := x.(map[string]any)
				switch event {
				case "PreToolUse":
					h["command"] = pre
				case "PermissionRequest":
					h["command"] = perm
				default:
					h["command"] = "cat >/dev/null"
				}
			}
		}
	}
	hookOnly := map[string]any{"permissions": allow["permissions"], "hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command",
			"command": strings.Replace(pre, `,"dangerouslyDisableSandbox":true`, "", 1)}}}}}}

	// The mcp_tool form: every hook a call of the instant server's tool;
	// SessionEnd (a command hook) left out.
	fm, _ := w.mcpSettings("floor-mcp", func(m map[string]any) {
		delete(m["hooks"].(map[string]any), "SessionEnd")
	})
	server := filepath.Join(w.Dir, "floor_mcp.py")
	must(b, os.WriteFile(server, []byte(floorMCP), 0o644))
	mcpConfig := writeJSON(b, filepath.Join(w.Dir, "floor-mcp-server.json"), map[string]any{"mcpServers": map[string]any{
		"gatehouse": map[string]any{"type": "stdio", "command": "python3", "args": []string{server}}}})

	names := []string{"alone", "cc-sandbox", "floor-managed", "floor-hook", "floor-mcp"}
	settings := []string{
		writeJSON(b, filepath.Join(w.Dir, "alone.json"), allow),
		writeJSON(b, filepath.Join(w.Dir, "sandbox.json"), sb),
		writeJSON(b, filepath.Join(w.Dir, "floor-managed.json"), floor),
		writeJSON(b, filepath.Join(w.Dir, "floor-hook.json"), hookOnly),
		fm,
	}
	args := [][]string{nil, nil, nil, nil, {"--mcp-config", mcpConfig}}
	gaps := w.interleaved(b, names, settings, args, func(i int, a *timedAPI) {
		if i < 2 {
			return
		}
		// The rewritten command ran: the model saw true's empty result,
		// never a denial.
		for _, res := range a.results.All() {
			if res.IsError {
				s, _ := json.Marshal(res)
				b.Fatalf("%s: a call did not run: %s", names[i], s)
			}
		}
	})
	m := make([]float64, len(names))
	for i, name := range names {
		m[i] = ms2(med(gaps[i]))
		b.ReportMetric(m[i], "ms/call-"+name)
	}
	b.ReportMetric(m[2]/m[0], "floor-managed/alone")
	b.ReportMetric(m[2]/m[1], "floor-managed/cc-sandbox")
	b.ReportMetric(m[3]/m[0], "floor-hook/alone")
	b.ReportMetric(m[4]/m[0], "floor-mcp/alone")
	b.ReportMetric(m[4]/m[1], "floor-mcp/cc-sandbox")
	b.ReportMetric(0, "ns/op")
	b.Logf("summary (%d calls × %d rounds, medians, ms a call): alone %.1f, cc-sandbox %.1f, floor-managed %.1f (%.2f× alone, %.2f× cc-sandbox), floor-hook %.1f (%.2f× alone), floor-mcp %.1f (%.2f× alone, %.2f× cc-sandbox)",
		*sessionCalls, *sessionRounds, m[0], m[1], m[2], m[2]/m[0], m[2]/m[1], m[3], m[3]/m[0], m[4], m[4]/m[0], m[4]/m[1])
}

// floorMCP is an MCP server on stdio whose one tool, claude_hook, answers
// each of Claude Code's hook calls at once as Gatehouse's would, doing no
// work: PreToolUse allows Bash with the command rewritten to true outside
// Claude Code's sandbox, PermissionRequest allows, the rest say nothing.
const floorMCP = `import json, sys
PRE = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
       "updatedInput": {"command": "true", "dangerouslyDisableSandbox": True}}}
PERM = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
def answer(id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method, id = msg.get("method"), msg.get("id")
    if id is None:
        continue
    if method == "initialize":
        answer(id, {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "floor", "version": "0"}})
    elif method == "tools/list":
        answer(id, {"tools": [{"name": "claude_hook", "description": "hook", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        event = msg["params"].get("arguments", {}).get("hook_event_name")
        out = PRE if event == "PreToolUse" else PERM if event == "PermissionRequest" else None
        answer(id, {"content": [{"type": "text", "text": json.dumps(out) if out else ""}]})
    else:
        answer(id, {})
`
