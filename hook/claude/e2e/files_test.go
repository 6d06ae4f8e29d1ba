package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// settingsWith writes the rendered managed settings, changed by edit, for
// claude --settings.
func (w *world) settingsWith(edit func(m map[string]any)) string {
	w.t.Helper()
	cmd := exec.Command(e2etest.GatehouseBin, "managed-settings")
	cmd.Env = w.Env()
	out, err := cmd.Output()
	must(w.t, err)
	var m map[string]any
	must(w.t, json.Unmarshal(out, &m))
	edit(m)
	b, _ := json.Marshal(m)
	path := filepath.Join(w.Dir, "claude-settings.json")
	must(w.t, os.WriteFile(path, b, 0o644))
	return path
}

// Claude Code's file tools run in its own process, outside every sandbox:
// the hook refuses them Gatehouse's own files, the deny-read set (through
// symlinks too) and writes outside the workspace roots, with the reason in
// the tool_result, and records each decision. The permission rules of the
// managed settings are left out, so that the hook alone is tested. (Claude
// Code 2.1.332 offers the model no Glob or Grep tool: their decisions are
// tested in service (TestFileScope, TestFileAccess) and hook/claude.)
func TestFileToolsRefused(t *testing.T) {
	w := newWorld(t)
	cfgDir := filepath.Join(w.Home, ".config", "gatehouse")
	cfgFile := filepath.Join(cfgDir, "config.yaml")
	cfg := "policy:\n  exec_timeout_seconds: 120\n"
	must(t, os.MkdirAll(cfgDir, 0o700))
	must(t, os.WriteFile(cfgFile, []byte(cfg), 0o600))
	must(t, os.Symlink(filepath.Join(w.Home, ".ssh", "id_e2e"), filepath.Join(w.Workspace, "innocent.txt")))
	must(t, os.WriteFile(filepath.Join(w.Workspace, "plain.txt"), []byte("PLAIN-CONTENT\n"), 0o644))
	w.StartService()
	w.Gatehouse("install", "--no-service")
	settings := w.settingsWith(func(m map[string]any) {
		delete(m, "hooks")
		delete(m, "allowManagedHooksOnly")
		delete(m, "permissions")
	})
	ssh := filepath.Join(w.Home, ".ssh")
	outside := filepath.Join(w.Home, "outside.txt")
	extra := filepath.Join(cfgDir, "extra.yaml")
	fa := &fakeAPI{calls: []toolCall{
		{"Read", map[string]any{"file_path": filepath.Join(ssh, "id_e2e")}},
		// Claude Code edits only what it has read, and Gatehouse refused
		// the Read: this Edit stops before the hook.
		{"Edit", map[string]any{"file_path": cfgFile, "old_string": "120", "new_string": "3600"}},
		{"Write", map[string]any{"file_path": extra, "content": "policy: {}\n"}},
		{"Write", map[string]any{"file_path": outside, "content": "written\n"}},
		{"Read", map[string]any{"file_path": filepath.Join(w.Workspace, "innocent.txt")}},
		{"Read", map[string]any{"file_path": filepath.Join(w.Workspace, "plain.txt")}},
	}}
	// One conversation a call, as Claude Code asks again after some
	// refusals.
	var res []toolResult
	for _, c := range fa.calls {
		one := &fakeAPI{calls: []toolCall{c}}
		w.converse(w.Workspace, settings, one)
		res = append(res, one.result(t))
	}
	type want struct {
		result   string // in the tool_result
		action   string // of the event; "" when the hook is not reached
		decision string
	}
	wants := []want{
		{"Gatehouse refused this Read (path_denied)", api.ActionFileRead, "deny"},
		{"has not been read", "", ""},
		{"Gatehouse refused this Write (path_denied)", api.ActionFileWrite, "deny"},
		{"Gatehouse refused this Write (path_outside_workspace)", api.ActionFileWrite, "deny"},
		{"resolves to " + filepath.Join(ssh, "id_e2e"), api.ActionFileRead, "deny"},
		{"PLAIN-CONTENT", api.ActionFileRead, "allow"},
	}
	var hooked []int
	for i, wt := range wants {
		contains(t, fmt.Sprintf("tool_result %d (%s)", i, fa.calls[i].Name), res[i].Content, wt.result)
		if strings.Contains(res[i].Content, "SECRET-KEY") || strings.Contains(res[i].Content, "id_e2e\n") {
			t.Errorf("%s revealed ~/.ssh: %s", fa.calls[i].Name, res[i].Content)
		}
		if wt.action != "" {
			hooked = append(hooked, i)
		}
	}
	contains(t, "Write tool_result", res[3].Content, "policy.workspace_roots")
	if b, _ := os.ReadFile(cfgFile); string(b) != cfg {
		t.Errorf("the Gatehouse config was changed:\n%s", b)
	}
	for _, p := range []string{outside, extra} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}

	var files []api.Event
	for _, e := range w.Events() {
		if strings.HasPrefix(e.ActionType, "file:") {
			files = append(files, e)
		}
	}
	if len(files) != len(hooked) {
		t.Fatalf("want %d file events, got %d: %+v", len(hooked), len(files), files)
	}
	for j, e := range files {
		i := hooked[j]
		if e.ActionType != wants[i].action || string(e.Decision) != wants[i].decision || e.Tool != fa.calls[i].Name ||
			e.Surface != api.SurfaceAgentHook || e.Agent != "claude-code" || e.SessionID == "" || len(e.Paths) == 0 {
			t.Errorf("event of call %d: %+v", i, e)
		}
	}
}

// The managed settings' permission rules are a second wall: with no hook
// at all, Claude Code itself refuses its file tools ~/.ssh and Gatehouse's
// configuration.
func TestManagedRulesRefuseFileTools(t *testing.T) {
	w := newWorld(t)
	cfgDir := filepath.Join(w.Home, ".config", "gatehouse")
	cfgFile := filepath.Join(cfgDir, "config.yaml")
	must(t, os.MkdirAll(cfgDir, 0o700))
	must(t, os.WriteFile(cfgFile, []byte("SECRET-CONFIG\n"), 0o600))
	settings := w.settingsWith(func(m map[string]any) {
		delete(m, "hooks")
		delete(m, "allowManagedHooksOnly")
	})
	fa := &fakeAPI{calls: []toolCall{
		{"Read", map[string]any{"file_path": filepath.Join(w.Home, ".ssh", "id_e2e")}},
		{"Read", map[string]any{"file_path": cfgFile}},
	}}
	w.converse(w.Workspace, settings, fa)
	for i, r := range fa.all(t, 2) {
		if !r.IsError || strings.Contains(r.Content, "SECRET-") {
			t.Errorf("call %d was not refused: %+v", i, r)
		}
	}
}

// Under framework routing the hook lets Bash run in Claude Code's own
// sandbox, and keeps it there: dangerouslyDisableSandbox is turned off,
// even where Claude Code's settings would honour it.
func TestFrameworkRoutingKeepsSandbox(t *testing.T) {
	w := newWorld(t)
	cfgDir := filepath.Join(w.Home, ".config", "gatehouse")
	must(t, os.MkdirAll(cfgDir, 0o700))
	must(t, os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte("policy:\n  builtin_exec_routing: framework\n"), 0o600))
	w.StartService()
	w.Gatehouse("install", "--no-service")
	settings := w.settingsWith(func(m map[string]any) {
		delete(m, "hooks")
		delete(m, "allowManagedHooksOnly")
		m["sandbox"].(map[string]any)["allowUnsandboxedCommands"] = true
	})
	marker := filepath.Join(w.Home, "unsandboxed-marker")
	// Permission prompts are skipped, so that only the sandbox stands in
	// the way (Claude Code allows that mode to root only in a sandbox).
	w.extraEnv = []string{"IS_SANDBOX=1"}
	fa := &fakeAPI{input: map[string]any{
		"command": "touch " + marker + " && echo wrote-marker || echo marker-refused", "description": "e2e",
		"dangerouslyDisableSandbox": true,
	}}
	w.converse(w.Workspace, settings, fa, "--permission-mode", "bypassPermissions")
	res := fa.result(t)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran outside Claude Code's sandbox: %s", res.Content)
	}
	contains(t, "tool_result", res.Content, "marker-refused")
}

// What Claude Code's Read returns reaches the model cleaned: the
// PostToolUse hook 'gatehouse install' registers has the service redact
// it (here a DLP pattern: the keychain is not this test's), the rest of
// the file arrives as it was, and the redaction is on the record.
func TestReadOutputRedacted(t *testing.T) {
	w := newWorld(t)
	must(t, os.WriteFile(filepath.Join(w.Workspace, "settings.ini"),
		[]byte("region = eu-west-1\naws_key = AKIAABCDEFGHIJKLMNOP\nplain = PLAIN-CONTENT\n"), 0o644))
	w.StartService()
	w.Gatehouse("install", "--no-service")
	fa := &fakeAPI{calls: []toolCall{{"Read", map[string]any{"file_path": filepath.Join(w.Workspace, "settings.ini")}}}}
	w.converse(w.Workspace, w.sandboxSettings(false), fa)
	res := fa.result(t)
	contains(t, "tool_result", res.Content, "[REDACTED:pattern:aws_access_key_id]", "PLAIN-CONTENT", "eu-west-1")
	if strings.Contains(res.Content, "AKIAABCDEFGHIJKLMNOP") || res.IsError {
		t.Errorf("the model got the key, or an error: %+v", res)
	}
	var out []api.Event
	for _, e := range w.Events() {
		if e.ActionType == api.ActionToolOutput {
			out = append(out, e)
		}
	}
	if len(out) != 1 || out[0].Tool != "Read" || out[0].Agent != "claude-code" || out[0].SessionID == "" ||
		out[0].Output.RedactionCount != 1 || !strings.Contains(out[0].Reason, "pattern aws_access_key_id") {
		t.Errorf("tool:output events: %+v", out)
	}
}
