package codex

import (
	"strings"
	"testing"
)

// Doctor's findings for Codex: each drift install can cause or leave, and
// none when the hook is installed and trusted as install writes it.
func TestDrift(t *testing.T) {
	const hooksPath, configPath = "/home/u/.codex/hooks.json", "/home/u/.codex/config.toml"
	cmd := HookCommand("/usr/bin/gatehouse-hook")
	hooks, _, idx, _ := MergeHook(nil, cmd)
	trusted, _ := SetTrust(nil, TrustKey(hooksPath, idx), TrustHash(cmd))
	yes := func(string) bool { return true }
	codes := func(o DriftOptions) string {
		o.Hooks.Path, o.Config.Path = hooksPath, configPath
		if o.Executable == nil {
			o.Executable = yes
		}
		var c []string
		for _, f := range Drift(o) {
			if f.Detail == "" || f.Remedy == "" {
				t.Errorf("finding %+v lacks a detail or remedy", f)
			}
			c = append(c, f.Code)
		}
		return strings.Join(c, ",")
	}
	other, _, otherIdx, _ := MergeHook([]byte(`{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"audit-all"}]}]}}`), cmd)
	otherTrusted, _ := SetTrust(nil, TrustKey(hooksPath, otherIdx), TrustHash(cmd))
	stale := []byte(strings.Replace(string(hooks), `"timeout": 630`, `"timeout": 60`, 1))
	moved, _, _, _ := MergeHook([]byte(`{"hooks":{"PreToolUse":[{"matcher":"^apply_patch$","hooks":[{"type":"command","command":"x"}]}]}}`), cmd)
	for _, tc := range []struct {
		name string
		o    DriftOptions
		want string
	}{
		{"installed and trusted", DriftOptions{Hooks: File{Data: hooks}, Config: File{Data: trusted}}, ""},
		{"no hooks file", DriftOptions{}, "hook_missing"},
		{"no trust", DriftOptions{Hooks: File{Data: hooks}}, "hook_untrusted"},
		{"trust of another command", DriftOptions{Hooks: File{Data: hooks}, Config: File{Data: []byte(strings.Replace(string(trusted), "sha256:", "sha256:0", 1))}}, "hook_untrusted"},
		// A group put before Gatehouse's moves its key: the trust recorded
		// no longer names it.
		{"moved by another group", DriftOptions{Hooks: File{Data: moved}, Config: File{Data: trusted}}, "hook_untrusted"},
		{"edited", DriftOptions{Hooks: File{Data: stale}, Config: File{Data: trusted}}, "hook_stale"},
		{"turned off", DriftOptions{Hooks: File{Data: hooks}, Config: File{Data: append(trusted, []byte("enabled = false\n")...)}}, "hook_disabled"},
		{"program gone", DriftOptions{Hooks: File{Data: hooks}, Config: File{Data: trusted}, Executable: func(string) bool { return false }}, "hook_program"},
		{"another hook on Bash", DriftOptions{Hooks: File{Data: other}, Config: File{Data: otherTrusted}}, "hook_competing"},
		{"managed", DriftOptions{Requirements: File{Path: "/etc/codex/requirements.toml", Data: RenderManaged(cmd, true)}}, ""},
		{"managed, program gone", DriftOptions{Requirements: File{Path: "/etc/codex/requirements.toml", Data: RenderManaged(cmd, true)}, Executable: func(string) bool { return false }}, "hook_program"},
	} {
		if got := codes(tc.o); got != tc.want {
			t.Errorf("%s: findings %q, want %q", tc.name, got, tc.want)
		}
	}
}
