package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// The user's hooks file keeps everything of its own, in order; Gatehouse's
// group goes last, so no other hook's position (and trust key) moves; a
// second install changes nothing; uninstall gives back the user's file.
func TestMergeHookKeepsTheUsersAndRestores(t *testing.T) {
	user := []byte(`{
  "description": "mine",
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
    "PreToolUse": [{"matcher": "^apply_patch$", "hooks": [{"type": "command", "command": "check-patch", "timeout": 5}]}]
  }
}
`)
	cmd := HookCommand("/opt/gh/gatehouse-hook")
	merged, changed, idx, err := MergeHook(user, cmd)
	if err != nil || !changed || idx != 1 {
		t.Fatalf("merge: changed %v index %d: %v", changed, idx, err)
	}
	var f struct {
		Description string                       `json:"description"`
		Hooks       map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(merged, &f); err != nil || f.Description != "mine" || len(f.Hooks["SessionStart"]) != 1 || len(f.Hooks["PreToolUse"]) != 2 ||
		!strings.Contains(string(f.Hooks["PreToolUse"][0]), "check-patch") {
		t.Fatalf("merged:\n%s", merged)
	}
	got, ok := FindHook(merged)
	if !ok || got.Index != 1 || got.Command != cmd || !got.Current || got.Others != 0 {
		t.Errorf("found %+v %v", got, ok)
	}
	again, changed, idx2, err := MergeHook(merged, cmd)
	if err != nil || changed || idx2 != 1 || !bytes.Equal(again, merged) {
		t.Errorf("second merge changed the file (index %d, %v):\n%s", idx2, err, again)
	}
	// A new binary path replaces the command in place.
	moved, changed, idx3, _ := MergeHook(merged, HookCommand("/usr/bin/gatehouse"))
	if !changed || idx3 != 1 || strings.Contains(string(moved), "/opt/gh") {
		t.Errorf("moved binary: changed %v index %d\n%s", changed, idx3, moved)
	}
	back, changed, idx4, err := RemoveHook(merged)
	if err != nil || !changed || idx4 != 1 || !bytes.Equal(compact(back), compact(user)) {
		t.Errorf("uninstall did not restore the user's file (index %d, %v):\n%s", idx4, err, back)
	}
	if _, changed, _, _ := RemoveHook(user); changed {
		t.Error("removing from a file without Gatehouse's hook changed it")
	}
	if _, _, _, err := MergeHook([]byte(`{"hooks": []}`), cmd); err == nil {
		t.Error("a hooks file of the wrong shape was merged into")
	}
	// Another group that selects Bash is counted: its rewrite competes.
	other, _, _, _ := MergeHook([]byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash|Read","hooks":[{"type":"command","command":"x"}]}]}}`), cmd)
	if got, _ := FindHook(other); got.Others != 1 {
		t.Errorf("others %d, want 1", got.Others)
	}
}

// The trust hash is Codex's own: these are the currentHash values that
// Codex 0.169.0's app-server (hooks/list) reported for Gatehouse's group
// with these commands, the second with a path holding a quote, an
// apostrophe, U+2028 and a backslash, which serde_json and encoding/json
// escape differently.
func TestTrustHashIsCodexs(t *testing.T) {
	for _, tc := range []struct{ exe, hash string }{
		{"/usr/local/bin/gatehouse-hook", "sha256:33c6395975c155a483872a1b5888d126135afd912f28a533cb7bd1cdc0ed67c0"},
		{"/opt/a \"q'\u2028é\\/gatehouse-hook", "sha256:bd748144b4c7ce3fc0e40e370a6f033df1f60644286607ba3b7f3e4bdeb30c10"},
	} {
		if got := TrustHash(HookCommand(tc.exe)); got != tc.hash {
			t.Errorf("%q: %s, Codex says %s", tc.exe, got, tc.hash)
		}
	}
	if got := TrustKey("/home/u/.codex/hooks.json", 0); got != "/home/u/.codex/hooks.json:pre_tool_use:0:0" {
		t.Errorf("key %s", got)
	}
}

// Trust is recorded by editing config.toml's text: the user's comments
// and keys stay, the entry is replaced in place when the hash changes, a
// second run changes nothing, and removing it gives back the file.
func TestTrustEdit(t *testing.T) {
	user := []byte("# my settings\nmodel = \"o4\"\n\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n")
	key := TrustKey("/home/u/.codex/hooks.json", 0)
	withTrust, changed := SetTrust(user, key, "sha256:aa")
	if !changed || !bytes.HasPrefix(withTrust, user) || !strings.HasSuffix(string(withTrust), "\n[hooks.state.\"/home/u/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:aa\"\n") {
		t.Fatalf("set:\n%s", withTrust)
	}
	if TrustedHash(withTrust, key) != "sha256:aa" {
		t.Errorf("read back %q", TrustedHash(withTrust, key))
	}
	if again, changed := SetTrust(withTrust, key, "sha256:aa"); changed || !bytes.Equal(again, withTrust) {
		t.Errorf("second set changed the file:\n%s", again)
	}
	// A later table stays where it is; the hash is replaced in place.
	later := append(append([]byte{}, withTrust...), []byte("\n[tools]\nweb_search = true\n")...)
	re, changed := SetTrust(later, key, "sha256:bb")
	if !changed || TrustedHash(re, key) != "sha256:bb" || strings.Count(string(re), "trusted_hash") != 1 || !strings.HasSuffix(string(re), "[tools]\nweb_search = true\n") {
		t.Errorf("replace:\n%s", re)
	}
	back, changed := RemoveTrust(withTrust, key)
	if !changed || !bytes.Equal(back, user) {
		t.Errorf("remove did not restore:\n%q\nwant\n%q", back, user)
	}
	// A table the user added keys to keeps them.
	mixed := []byte("[hooks.state.\"" + "/home/u/.codex/hooks.json:pre_tool_use:0:0" + "\"]\nenabled = true\ntrusted_hash = \"sha256:aa\"\n")
	if out, _ := RemoveTrust(mixed, key); string(out) != "[hooks.state.\"/home/u/.codex/hooks.json:pre_tool_use:0:0\"]\nenabled = true\n" {
		t.Errorf("remove from a shared table:\n%s", out)
	}
	if out, changed := SetTrust(nil, key, "sha256:aa"); !changed || !strings.HasPrefix(string(out), "[hooks.state.") {
		t.Errorf("set in no file:\n%s", out)
	}
}

func TestRenderManaged(t *testing.T) {
	out := string(RenderManaged(HookCommand("/usr/bin/gatehouse-hook"), true))
	var req struct {
		Hooks struct {
			PreToolUse []struct {
				Matcher string
				Hooks   []struct{ Command string }
			}
		} `toml:"hooks"`
	}
	if _, err := toml.Decode(out, &req); err != nil || len(req.Hooks.PreToolUse) != 1 || req.Hooks.PreToolUse[0].Hooks[0].Command != HookCommand("/usr/bin/gatehouse-hook") {
		t.Errorf("the rendering does not read back as TOML (%v): %+v", err, req)
	}
	for _, want := range []string{"allow_managed_hooks_only = true\n", "[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n", "[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"'/usr/bin/gatehouse-hook' hook codex || { echo \\\"Gatehouse's hook failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// The hook's line blocks in Codex's terms whenever the program did not
// answer: a missing program or a crash becomes status 2 with a reason on
// stderr.
func TestHookCommandFailsClosed(t *testing.T) {
	cmd := HookCommand("/opt/it's/gatehouse-hook")
	if !IsHookCommand(cmd) || !IsHookCommand("'/usr/bin/gatehouse' hook codex") || IsHookCommand("'/usr/bin/other' hook codex") || IsHookCommand(cmd+"; rm -rf ~") {
		t.Errorf("IsHookCommand is wrong about %q", cmd)
	}
	out, err := exec.Command("sh", "-c", HookCommand("/nonexistent/gatehouse-hook")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "Gatehouse's hook failed (exit status 127), so the command did not run") {
		t.Errorf("a missing hook: %v\n%s", err, out)
	}
}
