package claude

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const exe = "/home/u/.local/bin/gatehouse"

func load(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// Install then uninstall over real-world shapes: the hook is added once,
// everything else is kept, and uninstall gives back what was there.
func TestMergeAndRemove(t *testing.T) {
	t.Parallel()
	cmd := HookCommand(exe, "")
	for _, name := range []string{"", "settings-minimal.json", "settings-other-hooks.json", "settings-hooks-empty.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var orig []byte
			if name != "" {
				orig = load(t, name)
			}
			merged, changed, err := MergeHook(orig, cmd)
			if err != nil || !changed {
				t.Fatalf("MergeHook: changed %v, err %v", changed, err)
			}
			if got, ok := HasHook(merged); !ok || got != cmd {
				t.Fatalf("hook not found after merge:\n%s", merged)
			}
			// Everything else is kept.
			if orig != nil {
				o := decodeAny(t, orig).(map[string]any)
				m := decodeAny(t, merged).(map[string]any)
				for k, v := range o {
					if k == "hooks" {
						continue
					}
					if !reflect.DeepEqual(m[k], v) {
						t.Errorf("key %s changed: %v -> %v", k, v, m[k])
					}
				}
				if strings.Contains(string(orig), "log-bash.sh") && !strings.Contains(string(merged), "log-bash.sh") {
					t.Error("another tool's hook was lost")
				}
				// Key order is kept.
				if i, j := bytes.Index(merged, []byte(`"model"`)), bytes.Index(merged, []byte(`"permissions"`)); i > j {
					t.Error("key order changed")
				}
			}
			// Idempotent.
			again, changed, err := MergeHook(merged, cmd)
			if err != nil || changed || !bytes.Equal(again, merged) {
				t.Errorf("second merge changed the file (changed %v, err %v):\n%s", changed, err, again)
			}
			// Uninstall removes exactly what install added.
			back, changed, err := RemoveHook(merged)
			if err != nil || !changed {
				t.Fatalf("RemoveHook: changed %v err %v", changed, err)
			}
			if _, ok := HasHook(back); ok {
				t.Errorf("hook still there:\n%s", back)
			}
			want := any(map[string]any{})
			if orig != nil {
				want = decodeAny(t, orig)
				if name == "settings-hooks-empty.json" {
					delete(want.(map[string]any), "hooks") // an empty hooks object goes too
				}
			}
			if got := decodeAny(t, back); !reflect.DeepEqual(got, want) {
				t.Errorf("after uninstall:\n%s\nwant the original:\n%s", back, orig)
			}
			if _, changed, _ := RemoveHook(back); changed {
				t.Error("a second uninstall changed something")
			}
		})
	}
}

// An entry of a gatehouse binary that moved is replaced in place.
func TestMergeReplacesOldPath(t *testing.T) {
	t.Parallel()
	merged, changed, err := MergeHook(load(t, "settings-old-gatehouse.json"), HookCommand(exe, ""))
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	// Once for PreToolUse, PostToolUse, PermissionRequest and SessionEnd.
	if strings.Contains(string(merged), "/opt/old") || strings.Count(string(merged), "hook claude") != 4 {
		t.Errorf("old entry kept:\n%s", merged)
	}
}

// A user's own hook that shares Gatehouse's group is kept on uninstall.
func TestRemoveKeepsSharedGroup(t *testing.T) {
	t.Parallel()
	in := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"'/x/gatehouse' hook claude"},{"type":"command","command":"mine.sh"}]}]}}`
	out, changed, err := RemoveHook([]byte(in))
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	want := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"mine.sh"}]}]}}`
	if got := string(compact(out)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestMergeRefusesBadFiles(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"{\"a\": 1,}",                  // trailing comma
		"// comment\n{}",               // comments are not JSON
		"[]",                           // not an object
		`{"hooks": []}`,                // hooks not an object
		`{"hooks": {"PreToolUse": 1}}`, // not a list
		`{} {}`,
	} {
		if _, _, err := MergeHook([]byte(in), HookCommand(exe, "")); err == nil {
			t.Errorf("MergeHook(%q) succeeded", in)
		}
	}
}

func TestIsHookCommand(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]bool{
		HookCommand(exe, ""):                 true,
		HookCommand(exe, "governed_shell"):   true,
		HookCommand("/a b/gatehouse", ""):    true,
		"'/usr/bin/other' hook claude":       false,
		"gatehouse hook claude":              false,
		"'/x/gatehouse' hook claude; rm -rf": false,
	} {
		if got := IsHookCommand(cmd); got != want {
			t.Errorf("IsHookCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestRenderManaged(t *testing.T) {
	t.Parallel()
	b := RenderManaged(ManagedOptions{Exe: exe, Routing: "governed_shell", Home: "/home/u",
		DenyPaths: []string{"/home/u/.ssh", "/home/u/.config/gatehouse", "/srv/state/gatehouse"},
		DenyGlobs: []string{"/run/user/*/gatehouse-cred"}})
	var m struct {
		Sandbox     map[string]any `json:"sandbox"`
		Permissions struct {
			Deny                         []string `json:"deny"`
			DisableBypassPermissionsMode string   `json:"disableBypassPermissionsMode"`
		} `json:"permissions"`
		Hooks struct {
			PreToolUse        []matcherGroup `json:"PreToolUse"`
			PostToolUse       []matcherGroup `json:"PostToolUse"`
			PermissionRequest []matcherGroup `json:"PermissionRequest"`
			SessionEnd        []matcherGroup `json:"SessionEnd"`
		} `json:"hooks"`
		AllowManagedHooksOnly bool `json:"allowManagedHooksOnly"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	// Unsandboxed commands are allowed for the relay: the PermissionRequest
	// hook below lets out a live relay and nothing else.
	want := map[string]any{"enabled": true, "allowUnsandboxedCommands": true, "failIfUnavailable": true}
	if !reflect.DeepEqual(m.Sandbox, want) {
		t.Errorf("sandbox = %v, want %v (and nothing else: no unix-socket allowance)", m.Sandbox, want)
	}
	if m.Permissions.DisableBypassPermissionsMode != "disable" {
		t.Errorf("permissions.disableBypassPermissionsMode = %q, want disable", m.Permissions.DisableBypassPermissionsMode)
	}
	if !m.AllowManagedHooksOnly || len(m.Hooks.PreToolUse) != 1 {
		t.Fatalf("%s", b)
	}
	h := m.Hooks.PreToolUse[0]
	if h.Matcher != "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep" || len(h.Hooks) != 1 || h.Hooks[0].Command != "'"+exe+"' hook claude --routing governed_shell" || h.Hooks[0].OnFailure != "block" {
		t.Errorf("hook: %+v", h)
	}
	if se := m.Hooks.SessionEnd; len(se) != 1 || len(se[0].Hooks) != 1 || se[0].Hooks[0].Command != h.Hooks[0].Command {
		t.Errorf("SessionEnd: %+v", se)
	}
	if pt := m.Hooks.PostToolUse; len(pt) != 1 || pt[0].Matcher != OutputMatcher || len(pt[0].Hooks) != 1 ||
		pt[0].Hooks[0].Command != h.Hooks[0].Command || pt[0].Hooks[0].OnFailure != "block" {
		t.Errorf("PostToolUse: %+v", pt)
	}
	if pr := m.Hooks.PermissionRequest; len(pr) != 1 || pr[0].Matcher != "Bash" || len(pr[0].Hooks) != 1 ||
		pr[0].Hooks[0].Command != h.Hooks[0].Command {
		t.Errorf("PermissionRequest: %+v", pr)
	}
	if strings.Contains(string(b), "allowUnixSockets") {
		t.Error("unix sockets allowed")
	}
	for _, want := range []string{"Read(~/.ssh/**)", "Edit(~/.ssh/**)", "Read(~/.ssh)", "Edit(~/.config/gatehouse/**)",
		"Read(//srv/state/gatehouse/**)", "Edit(//srv/state/gatehouse)",
		// The credential directories, by pattern: the directory's rule
		// covers what is in it.
		"Read(//run/user/*/gatehouse-cred)", "Edit(//run/user/*/gatehouse-cred)"} {
		if !slices.Contains(m.Permissions.Deny, want) {
			t.Errorf("permissions.deny %q lacks %q", m.Permissions.Deny, want)
		}
	}
	if len(m.Permissions.Deny) != 4*3+2 {
		t.Errorf("permissions.deny = %q, want 4 rules a path and 2 a pattern", m.Permissions.Deny)
	}
	// Claude Code's sandbox mounts over what a Read glob matches when it
	// starts: a glob over entries that come and go (an execution's
	// directory, a process in /proc) fails its start.
	for _, r := range m.Permissions.Deny {
		if dir := strings.TrimSuffix(r, "/**)"); dir != r && strings.Contains(dir, "*") || strings.Contains(r, "//proc/") {
			t.Errorf("rule %q: a pattern over entries that come and go", r)
		}
	}
}

// Install registers the PostToolUse hook beside the PreToolUse one, for
// the tools that return what they read and for MCP tools; uninstall takes
// it away again.
func TestMergeInstallsPostToolUse(t *testing.T) {
	t.Parallel()
	cmd := HookCommand(exe, "")
	merged, _, err := MergeHook(nil, cmd)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks struct {
			PostToolUse []matcherGroup `json:"PostToolUse"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(merged, &s); err != nil {
		t.Fatal(err)
	}
	if pt := s.Hooks.PostToolUse; len(pt) != 1 || len(pt[0].Hooks) != 1 || pt[0].Hooks[0].Command != cmd || pt[0].Hooks[0].Timeout != PostToolUseTimeoutSeconds {
		t.Fatalf("PostToolUse: %+v\n%s", s.Hooks.PostToolUse, merged)
	}
	re := regexp.MustCompile("^(?:" + s.Hooks.PostToolUse[0].Matcher + ")$")
	for _, tool := range []string{"Read", "Grep", "Glob", "Bash", "mcp__github__get_file_contents"} {
		if !re.MatchString(tool) {
			t.Errorf("matcher %q does not cover %s", re, tool)
		}
	}
	for _, tool := range []string{"Write", "Edit", "TodoWrite"} {
		if re.MatchString(tool) {
			t.Errorf("matcher %q covers %s, which returns nothing it read", re, tool)
		}
	}
	back, _, err := RemoveHook(merged)
	if err != nil || strings.Contains(string(back), "PostToolUse") {
		t.Errorf("uninstall left PostToolUse (%v):\n%s", err, back)
	}
}

// Install writes the same matcher: the file tools reach the hook.
func TestHookGroupMatcher(t *testing.T) {
	t.Parallel()
	var g matcherGroup
	json.Unmarshal(HookGroup(HookCommand(exe, "")), &g)
	for _, tool := range append([]string{"Bash"}, FileTools...) {
		if !slices.Contains(strings.Split(g.Matcher, "|"), tool) {
			t.Errorf("matcher %q does not cover %s", g.Matcher, tool)
		}
	}
}

// Claude Code's spinner names Gatehouse while the PreToolUse hook runs
// (a held call runs it for minutes); installing again over a hook
// written without it adds it.
func TestHookStatusMessage(t *testing.T) {
	t.Parallel()
	old := []byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"'/usr/bin/gatehouse' hook claude","timeout":630,"onFailure":"block"}]}]}}`)
	merged, changed, err := MergeHook(old, HookCommand(exe, ""))
	if err != nil || !changed {
		t.Fatalf("MergeHook: changed %v, %v", changed, err)
	}
	var s struct {
		Hooks map[string][]matcherGroup `json:"hooks"`
	}
	if err := json.Unmarshal(merged, &s); err != nil {
		t.Fatal(err)
	}
	for ev, gs := range s.Hooks {
		for _, g := range gs {
			for _, h := range g.Hooks {
				want := ""
				if ev == "PreToolUse" {
					want = HookStatusMessage
				}
				if h.StatusMessage != want {
					t.Errorf("%s hook's statusMessage = %q, want %q", ev, h.StatusMessage, want)
				}
			}
		}
	}
	if !strings.Contains(HookStatusMessage, "Gatehouse") || !strings.Contains(HookStatusMessage, "approval") || utf8.RuneCountInString(HookStatusMessage) > 50 {
		t.Errorf("HookStatusMessage %q does not name Gatehouse and the approval it may wait for in at most 50 characters", HookStatusMessage)
	}
	if len(s.Hooks["PreToolUse"]) != 1 {
		t.Errorf("PreToolUse groups: %+v", s.Hooks["PreToolUse"])
	}
}

func TestDenyRules(t *testing.T) {
	t.Parallel()
	got := DenyRules("/home/u/", []string{"/home/u/.netrc", "/home/u2/x", "/home/u/.netrc", "rel", "/home/u/st", "/home/u/st/relay"}, []string{"/home/u/st/relay"})
	want := []string{
		"Read(~/.netrc)", "Read(~/.netrc/**)", "Edit(~/.netrc)", "Edit(~/.netrc/**)",
		"Read(//home/u2/x)", "Read(//home/u2/x/**)", "Edit(//home/u2/x)", "Edit(//home/u2/x/**)",
		// The relay's directory stays readable in Claude Code's sandbox.
		"Edit(~/st)", "Edit(~/st/**)", "Edit(~/st/relay)", "Edit(~/st/relay/**)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("DenyRules = %q, want %q", got, want)
	}
}
