package claude

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	testManaged = "/etc/claude-code/managed-settings.json"
	testDropIn  = "/etc/claude-code/managed-settings.d/"
	testUser    = "/home/u/.claude/settings.json"
	testHook    = "/usr/bin/gatehouse-hook"
)

// rendered is what gatehouse managed-settings renders, edited by edit.
func rendered(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	return rewrite(t, RenderManaged(ManagedOptions{Exe: testHook, Routing: "governed_shell", Home: "/home/u", DenyPaths: []string{"/home/u/.ssh"}}), edit)
}

// rewrite returns settings b changed by edit.
func rewrite(t *testing.T, b []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	if edit == nil {
		return b
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ = json.Marshal(m)
	return b
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Drift against Claude Code's settings in each shape: what IT installs,
// what gatehouse install writes, the ways a file loosens either, and what
// a later drop-in or the user's own file changes.
func TestDrift(t *testing.T) {
	t.Parallel()
	installed, _, err := MergeHook(nil, HookCommand(testHook, ""))
	if err != nil {
		t.Fatal(err)
	}
	mf := func(name string, data []byte) SettingsFile { return SettingsFile{Path: name, Data: data} }
	renderedMCP := RenderManaged(ManagedOptions{Exe: testHook, Routing: "governed_shell", HookKind: "mcp_tool", Home: "/home/u", DenyPaths: []string{"/home/u/.ssh"}})
	for _, tc := range []struct {
		name    string
		managed []SettingsFile
		user    []byte
		broken  bool     // the hook's program is not executable
		want    []string // codes, in order
		detail  string   // held by one finding's detail
	}{
		{name: "the rendered managed settings",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil))}},
		{name: "the rendered settings and a user file the managed values win over",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil))}, user: testdata(t, "drift/user-sandbox-off.json")},
		{name: "IT's own base file, Gatehouse's drop-in merged over it",
			managed: []SettingsFile{mf(testManaged, testdata(t, "drift/it-base.json")), mf(testDropIn+"90-gatehouse.json", rendered(t, nil))}},
		{name: "a later drop-in loosening Gatehouse's settings",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil)), mf(testDropIn+"95-it.json", testdata(t, "drift/it-loosens.json"))},
			want:    []string{"managed_hooks_only_off", "claude_sandbox_off"},
			detail:  "sandbox.enabled is false in " + testManaged},
		{name: "gatehouse install alone, no managed settings",
			user:   installed,
			want:   []string{"managed_hooks_only_off", "claude_sandbox_off"},
			detail: "the managed settings (none at " + testManaged + ") do not turn allowManagedHooksOnly on"},
		{name: "nothing at all",
			want:   []string{"hook_missing", "managed_hooks_only_off", "claude_sandbox_off", "claude_sandbox_escape"},
			detail: "Gatehouse's hook is in neither the managed settings (none at " + testManaged + ") nor " + testUser},
		{name: "managed hooks only, the hook in the user's file",
			managed: []SettingsFile{mf(testManaged, testdata(t, "drift/hooks-only-flag.json"))}, user: installed,
			want:   []string{"hook_missing"},
			detail: "does not run: the managed settings allow managed hooks only"},
		{name: "the user's disableAllHooks with the hook in the user's file",
			user:   testdata(t, "drift/user-hook-disable-all.json"),
			want:   []string{"hook_missing", "managed_hooks_only_off", "claude_sandbox_off", "claude_sandbox_escape"},
			detail: "the user settings set disableAllHooks"},
		{name: "the user's disableAllHooks, the hook managed",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil))}, user: testdata(t, "drift/disable-all-hooks.json")},
		{name: "managed disableAllHooks",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil)), mf(testDropIn+"99-off.json", testdata(t, "drift/disable-all-hooks.json"))},
			want:    []string{"hook_missing", "claude_sandbox_escape"},
			detail:  "turn every hook off"},
		{name: "the hook matched to the file tools only",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m, "hooks"); m["allowManagedHooksOnly"] = false }))},
			user:    testdata(t, "drift/user-hook-read-only.json"),
			want:    []string{"hook_missing", "managed_hooks_only_off", "claude_sandbox_escape"},
			detail:  "is not matched to Bash"},
		{name: "the managed hook matched to the file tools only, the user's to Bash",
			managed: []SettingsFile{mf(testManaged, testdata(t, "drift/user-hook-read-only.json"))}, user: installed,
			want: []string{"managed_hooks_only_off", "claude_sandbox_off"}},
		{name: "gatehouse install and managed settings without managed hooks only",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m, "allowManagedHooksOnly") }))}, user: installed,
			want:   []string{"hook_duplicate", "managed_hooks_only_off"},
			detail: "Gatehouse's hook runs twice for every Bash call"},
		{name: "gatehouse install under the rendered managed settings",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil))}, user: installed},
		{name: "managed settings rendered before the PostToolUse hook",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m["hooks"].(map[string]any), "PostToolUse") }))},
			want:    []string{"output_hook_missing"},
			detail:  "PostToolUse hook is not in " + testManaged},
		{name: "the PostToolUse hook in the user's file only, managed hooks only",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m["hooks"].(map[string]any), "PostToolUse") }))},
			user:    installed,
			want:    []string{"output_hook_missing"}},
		// allowUnsandboxedCommands: required with the PermissionRequest
		// hook, refused without it.
		{name: "unsandboxed commands off beside the PermissionRequest hook",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { m["sandbox"].(map[string]any)["allowUnsandboxedCommands"] = false }))},
			want:    []string{"relay_sandboxed"},
			detail:  "cannot let a routed command's relay out of Claude Code's sandbox"},
		{name: "unsandboxed commands on without the PermissionRequest hook",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m["hooks"].(map[string]any), "PermissionRequest") }))},
			want:    []string{"claude_sandbox_escape"},
			detail:  "sandbox.allowUnsandboxedCommands is true in " + testManaged},
		{name: "managed settings rendered before the PermissionRequest hook",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) {
				delete(m["hooks"].(map[string]any), "PermissionRequest")
				m["sandbox"].(map[string]any)["allowUnsandboxedCommands"] = false
			}))},
			want:   []string{"relay_sandboxed"},
			detail: "PermissionRequest hook is not in " + testManaged + " (settings written before it existed)"},
		{name: "the PermissionRequest hook in the user's file, managed hooks only",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m["hooks"].(map[string]any), "PermissionRequest") }))},
			user:    installed,
			want:    []string{"claude_sandbox_escape"}},
		{name: "the user's file allowing unsandboxed commands the managed settings leave open, no PermissionRequest hook",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) {
				delete(m["hooks"].(map[string]any), "PermissionRequest")
				delete(m["sandbox"].(map[string]any), "allowUnsandboxedCommands")
			}))},
			user:   []byte(`{"sandbox": {"allowUnsandboxedCommands": true}}`),
			want:   []string{"claude_sandbox_escape", "user_shadows_managed"},
			detail: "sets sandbox.allowUnsandboxedCommands to true"},
		{name: "the hook's program gone",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil))}, broken: true,
			want:   []string{"hook_broken"},
			detail: "runs " + testHook + ", which is not an executable file"},
		{name: "a user file deciding what the managed settings leave open",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m, "sandbox") }))},
			user:    testdata(t, "drift/user-sandbox-off.json"),
			want:    []string{"claude_sandbox_off", "user_shadows_managed", "user_shadows_managed"},
			detail:  testUser + " sets sandbox.failIfUnavailable to false, which the managed settings leave open"},
		{name: "user hooks for Bash beside Gatehouse's, managed hooks not only",
			managed: []SettingsFile{mf(testManaged, rendered(t, func(m map[string]any) { delete(m, "allowManagedHooksOnly") }))},
			user:    testdata(t, "settings-other-hooks.json"),
			want:    []string{"managed_hooks_only_off", "user_shadows_managed"},
			detail:  `adds PreToolUse hooks for Bash ("~/.claude/hooks/log-bash.sh")`},
		{name: "an unreadable managed file",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil)), mf(testDropIn+"50-bad.json", testdata(t, "drift/unreadable.json"))},
			want:    []string{"settings_unreadable"},
			detail:  testDropIn + "50-bad.json cannot be read"},
		// The hook as a tool of Gatehouse's MCP server (mcp_tool): the
		// same hook, no program to find.
		{name: "the managed settings rendered with the mcp_tool hook",
			managed: []SettingsFile{mf(testManaged, renderedMCP)}, broken: true},
		{name: "the mcp_tool hook beside the installed command hook, managed hooks not only",
			managed: []SettingsFile{mf(testManaged, rewrite(t, renderedMCP, func(m map[string]any) { delete(m, "allowManagedHooksOnly") }))}, user: installed,
			want:   []string{"hook_duplicate", "managed_hooks_only_off"},
			detail: "as mcp_tool gatehouse/claude_hook from the managed settings"},
		{name: "an mcp_tool hook of another tool",
			managed: []SettingsFile{mf(testManaged, bytes.ReplaceAll(renderedMCP, []byte(`"claude_hook"`), []byte(`"other"`)))},
			want:    []string{"hook_missing", "claude_sandbox_escape"},
			detail:  "in neither"},
		{name: "an unreadable user file",
			managed: []SettingsFile{mf(testManaged, rendered(t, nil))}, user: testdata(t, "drift/unreadable.json"),
			want: []string{"settings_unreadable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Drift(DriftOptions{
				Managed: tc.managed, ManagedPath: testManaged,
				User:       SettingsFile{Path: testUser, Data: tc.user},
				Executable: func(p string) bool { return p == testHook && !tc.broken },
			})
			var codes []string
			held := tc.detail == ""
			for _, f := range got {
				codes = append(codes, f.Code)
				if f.Detail == "" || f.Remedy == "" {
					t.Errorf("%s: a finding without detail or remedy: %+v", f.Code, f)
				}
				held = held || strings.Contains(f.Detail, tc.detail)
			}
			if !slices.Equal(codes, tc.want) {
				t.Errorf("codes %q, want %q\n%s", codes, tc.want, jsonText(got))
			}
			if !held {
				t.Errorf("no finding says %q:\n%s", tc.detail, jsonText(got))
			}
		})
	}
}

func TestMergeSettings(t *testing.T) {
	t.Parallel()
	base, _ := settingsObject([]byte(`{"a": 1, "o": {"x": 1, "y": [1, 2]}, "l": ["p", {"q": 1}]}`))
	over, _ := settingsObject([]byte(`{"a": 2, "o": {"y": [2, 3], "z": true}, "l": [{"q": 1}, "r"], "n": null}`))
	mergeSettings(base, over)
	if got, want := jsonText(base), `{"a":2,"l":["p",{"q":1},"r"],"n":null,"o":{"x":1,"y":[1,2,3],"z":true}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestMatchesTool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		matcher string
		want    bool
	}{{"", true}, {"*", true}, {"Bash", true}, {Matcher, true}, {"Ba", false}, {"Bash2", false}, {"Read|Edit", false}, {".*", true}, {"(", false}} {
		if got := matchesTool(tc.matcher, ToolBash); got != tc.want {
			t.Errorf("matchesTool(%q) = %v", tc.matcher, got)
		}
	}
}
