package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// userSettings is a user's settings.json with settings and a hook of
// their own (the schema of Gemini CLI 0.61.0's settingsSchema.ts).
const userSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "model": {"name": "gemini-2.5-pro"},
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"name": "lint", "type": "command", "command": "lint-hook"}]}
    ],
    "AfterTool": [{"matcher": "*", "hooks": [{"type": "command", "command": "log-hook"}]}]
  }
}`

func TestMergeKeepsIdempotentRemoveRestores(t *testing.T) {
	cmd := HookCommand("/opt/gh/gatehouse-hook")
	out, changed, err := MergeHook([]byte(userSettings), cmd)
	if err != nil || !changed {
		t.Fatalf("merge: changed %v, %v", changed, err)
	}
	var s struct {
		Security json.RawMessage `json:"security"`
		Model    json.RawMessage `json:"model"`
		Hooks    map[string][]matcherGroup
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	bt := s.Hooks["BeforeTool"]
	if len(bt) != 2 || bt[0].Hooks[0].Command != "lint-hook" || bt[1].Matcher != ToolShell ||
		bt[1].Hooks[0].Command != cmd || bt[1].Hooks[0].Timeout != HookTimeoutMS || bt[1].Hooks[0].Name != HookName ||
		len(s.Hooks["AfterTool"]) != 1 || !strings.Contains(string(s.Security), "gemini-api-key") || s.Model == nil {
		t.Errorf("merged:\n%s", out)
	}
	if again, changed, err := MergeHook(out, cmd); err != nil || changed || !bytes.Equal(again, out) {
		t.Errorf("merging again changed the file (%v, %v)", changed, err)
	}
	// Another gatehouse path is replaced in place, not added.
	moved, changed, _ := MergeHook(out, HookCommand("/usr/bin/gatehouse"))
	if !changed || strings.Count(string(moved), "hook gemini") != 1 || !strings.Contains(string(moved), "'/usr/bin/gatehouse' hook gemini") {
		t.Errorf("moved:\n%s", moved)
	}
	back, changed, err := RemoveHook(out)
	if err != nil || !changed {
		t.Fatalf("remove: %v %v", changed, err)
	}
	if !bytes.Equal(compact(back), compact([]byte(userSettings))) {
		t.Errorf("uninstall did not restore the settings:\n%s", back)
	}
	if _, changed, _ := RemoveHook(back); changed {
		t.Error("removing again changed the file")
	}
	// No file: the hook alone; removing it leaves an empty object.
	fresh, changed, _ := MergeHook(nil, cmd)
	if !changed || !IsHookCommand(cmd) {
		t.Fatalf("fresh: %s", fresh)
	}
	if back, _, _ := RemoveHook(fresh); string(compact(back)) != "{}" {
		t.Errorf("removed from a fresh file: %s", back)
	}
	// A file with comments (Gemini reads them) is left alone.
	if _, _, err := MergeHook([]byte("{\n // mine\n \"a\": 1}"), cmd); err == nil {
		t.Error("a file with comments was merged")
	}
}

func TestHookCommandIsOurs(t *testing.T) {
	for cmd, want := range map[string]bool{
		HookCommand("/usr/bin/gatehouse-hook"):   true,
		HookCommand("/it's/gatehouse"):           true,
		"'/usr/bin/gatehouse' hook gemini":       true,
		HookCommand("/usr/bin/other"):            false,
		"'/usr/bin/gatehouse' hook claude":       false,
		"'/usr/bin/gatehouse' hook gemini; rm x": false,
		"gatehouse hook gemini":                  false,
	} {
		if got := IsHookCommand(cmd); got != want {
			t.Errorf("IsHookCommand(%q) = %v", cmd, got)
		}
	}
}

// The installed command blocks (status 2, with a reason on stderr) when
// the program is missing or fails, as bash -c runs it for Gemini CLI, and
// keeps the program's own 0 and 2.
func TestHookCommandFailsClosed(t *testing.T) {
	dir := t.TempDir()
	prog := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		exe    string
		status int
		stderr string
		stdout string
	}{
		{filepath.Join(dir, "gatehouse-missing"), 2, "the hook failed (exit status 127)", ""},
		{prog("gatehouse-crash", "exit 1"), 2, "the hook failed (exit status 1)", ""},
		{prog("gatehouse-killed", "kill -9 $$"), 2, "the hook failed (exit status 137)", ""},
		{prog("gatehouse-deny", `echo '{"decision":"deny"}'; exit 2`), 2, "", `{"decision":"deny"}`},
		{prog("gatehouse-allow", `echo '{"decision":"allow"}'`), 0, "", `{"decision":"allow"}`},
	} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command("bash", "-c", HookCommand(c.exe))
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		st := 0
		if ee, ok := err.(*exec.ExitError); ok {
			st = ee.ExitCode()
		}
		if st != c.status || !strings.Contains(stderr.String(), c.stderr) || (c.stderr == "" && strings.Contains(stderr.String(), "Gatehouse")) ||
			strings.TrimSpace(stdout.String()) != c.stdout {
			t.Errorf("%s: status %d, stdout %q, stderr %q", filepath.Base(c.exe), st, stdout.String(), stderr.String())
		}
	}
}

func TestDrift(t *testing.T) {
	exe := "/opt/gatehouse-hook"
	executable := func(p string) bool { return p == exe }
	merged, _, _ := MergeHook([]byte(userSettings), HookCommand(exe))
	codes := func(fs []Finding) string {
		var c []string
		for _, f := range fs {
			c = append(c, f.Code)
		}
		return strings.Join(c, ",")
	}
	user := SettingsFile{Path: "/home/u/.gemini/settings.json"}
	for _, c := range []struct {
		name         string
		system, user []byte
		want         string
	}{
		{"installed", nil, merged, ""},
		{"managed", RenderManaged(exe), []byte(userSettings), ""},
		{"missing", nil, []byte(userSettings), "hook_missing"},
		{"no file", nil, nil, "hook_missing"},
		{"broken", nil, bytes.ReplaceAll(merged, []byte(exe), []byte("/gone/gatehouse-hook")), "hook_broken"},
		{"bare", nil, bytes.Replace(merged, []byte(failClosedJSON()), nil, 1), "hook_not_fail_closed"},
		{"short timeout", nil, bytes.Replace(merged, []byte(`"timeout": 640000`), []byte(`"timeout": 60000`), 1), "hook_not_fail_closed"},
		{"hooks off", nil, bytes.Replace(merged, []byte(`"model"`), []byte(`"hooksConfig": {"enabled": false}, "model"`), 1), "hooks_disabled"},
		{"hook disabled", nil, bytes.Replace(merged, []byte(`"model"`), []byte(`"hooksConfig": {"disabled": ["gatehouse"]}, "model"`), 1), "hooks_disabled"},
		{"system turns on", []byte(`{"hooksConfig":{"enabled":true}}`), bytes.Replace(merged, []byte(`"model"`), []byte(`"hooksConfig": {"enabled": false}, "model"`), 1), ""},
	} {
		u := user
		u.Data = c.user
		if got := codes(Drift(SettingsFile{Path: "/etc/gemini-cli/settings.json", Data: c.system}, u, executable)); got != c.want {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}

// failClosedJSON is failClosed as it appears in an indented settings file.
func failClosedJSON() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(failClosed)
	return strings.Trim(strings.TrimSpace(b.String()), `"`)
}

func TestManagedPath(t *testing.T) {
	none := func(string) string { return "" }
	if got := ManagedPath("linux", none); got != "/etc/gemini-cli/settings.json" {
		t.Error(got)
	}
	if got := ManagedPath("linux", func(string) string { return "/x.json" }); got != "/x.json" {
		t.Error(got)
	}
}

// The system settings keep what IT put there; hooks are turned on.
func TestMergeManaged(t *testing.T) {
	system := []byte(`{"general": {"disableAutoUpdate": true}, "hooksConfig": {"enabled": false, "notifications": false}}`)
	out, changed, err := MergeManaged(system, "/usr/bin/gatehouse-hook")
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	var s struct {
		General     map[string]bool `json:"general"`
		HooksConfig map[string]bool `json:"hooksConfig"`
	}
	json.Unmarshal(out, &s)
	if !s.General["disableAutoUpdate"] || !s.HooksConfig["enabled"] || s.HooksConfig["notifications"] ||
		Drift(SettingsFile{Path: "/etc/gemini-cli/settings.json", Data: out}, SettingsFile{}, func(string) bool { return true }) != nil {
		t.Errorf("merged:\n%s", out)
	}
	if again, changed, _ := MergeManaged(out, "/usr/bin/gatehouse-hook"); changed || !bytes.Equal(again, out) {
		t.Error("merging again changed the file")
	}
}
