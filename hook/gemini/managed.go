package gemini

// This file renders the system settings IT pushes for Gemini CLI and
// compares the settings on a machine with them, for gatehouse doctor. It
// reads the files as Gemini CLI 0.61.0 does (packages/cli/src/config:
// settings.ts getSystemSettingsPath, settingsSchema.ts): the system
// settings (GEMINI_CLI_SYSTEM_SETTINGS_PATH, else /etc/gemini-cli/
// settings.json, /Library/Application Support/GeminiCli/settings.json,
// C:\ProgramData\gemini-cli\settings.json) win over the user's
// (~/.gemini/settings.json); hooks.BeforeTool lists are joined, and
// hooksConfig.disabled lists too; hooksConfig.enabled false turns every
// hook off. Every hook runs only in a folder Gemini trusts (security.
// folderTrust), which no file here can say.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/internal/jsonobj"
)

// ManagedPath returns where Gemini CLI reads its system settings on goos;
// GEMINI_CLI_SYSTEM_SETTINGS_PATH (getenv) moves them.
func ManagedPath(goos string, getenv func(string) string) string {
	if p := getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
		return p
	}
	switch goos {
	case "darwin":
		return "/Library/Application Support/GeminiCli/settings.json"
	case "windows":
		return `C:\ProgramData\gemini-cli\settings.json`
	}
	return "/etc/gemini-cli/settings.json"
}

// UserPath returns the user's settings file under home.
func UserPath(home string) string { return filepath.Join(home, ".gemini", "settings.json") }

// RenderManaged returns the system settings IT pushes: Gatehouse's
// BeforeTool hook running the program at exe, and hooks turned on, which
// a user's settings cannot then turn off.
func RenderManaged(exe string) []byte {
	b, _, _ := MergeManaged(nil, exe)
	return b
}

// MergeManaged returns the system settings system (empty when there are
// none) with RenderManaged's merged in: everything else in them is kept,
// and hooksConfig.enabled is set true. changed says whether anything
// changed.
func MergeManaged(system []byte, exe string) ([]byte, bool, error) {
	b, _, err := MergeHook(system, HookCommand(exe))
	if err != nil {
		return nil, false, err
	}
	root, err := jsonobj.Parse(b)
	if err != nil {
		return nil, false, err
	}
	hc, err := root.Object("hooksConfig")
	if err != nil {
		return nil, false, err
	}
	hc.Set("enabled", json.RawMessage("true"))
	root.Set("hooksConfig", hc.Encode())
	out := root.Indent()
	return out, len(system) == 0 || !jsonobj.Equal(out, system), nil
}

// A Finding is one way Gemini CLI's settings drifted from Gatehouse's
// policy, with the remedy.
type Finding struct {
	// Code is hook_missing, hook_broken, hook_not_fail_closed,
	// hooks_disabled or settings_unreadable.
	Code   string `json:"code"`
	File   string `json:"file,omitempty"`
	Detail string `json:"detail"`
	Remedy string `json:"remedy"`
}

const remedyHook = "gatehouse install --agent gemini (for this user), or sudo gatehouse managed-settings --agent gemini --install (for every user)"

// settings is what Drift reads of a settings file.
type settings struct {
	HooksConfig struct {
		Enabled  *bool    `json:"enabled"`
		Disabled []string `json:"disabled"`
	} `json:"hooksConfig"`
	Hooks struct {
		BeforeTool []matcherGroup `json:"BeforeTool"`
	} `json:"hooks"`
}

// SettingsFile is one settings file and its bytes; Data is nil when the
// file does not exist.
type SettingsFile struct {
	Path string
	Data []byte
}

// Drift says how the system and the user's settings drifted from
// Gatehouse's policy: the hook is present (in either), its program is
// executable (executable reports whether a path is), it is wrapped to
// fail closed, and hooks are on and it is not disabled.
func Drift(system, user SettingsFile, executable func(string) bool) []Finding {
	var out []Finding
	var found []hookEntry
	enabled := true
	var disabled []string
	for _, f := range []SettingsFile{user, system} { // the system's last: it wins
		if f.Data == nil {
			continue
		}
		var s settings
		if err := json.Unmarshal(f.Data, &s); err != nil {
			out = append(out, Finding{Code: "settings_unreadable", File: f.Path,
				Detail: fmt.Sprintf("%s is not JSON this check reads (%v); Gemini may still read it", f.Path, err),
				Remedy: "remove the comments or fix the file, then run gatehouse doctor again"})
			continue
		}
		if s.HooksConfig.Enabled != nil {
			enabled = *s.HooksConfig.Enabled
		}
		disabled = append(disabled, s.HooksConfig.Disabled...)
		for _, g := range s.Hooks.BeforeTool {
			if g.Matcher != ToolShell && g.Matcher != "" && g.Matcher != "*" && g.Matcher != ".*" {
				continue
			}
			for _, h := range g.Hooks {
				if h.Type == "command" && IsHookCommand(h.Command) {
					found = append(found, h)
				}
			}
		}
	}
	if len(found) == 0 {
		return append(out, Finding{Code: "hook_missing", File: user.Path,
			Detail: "Gemini CLI runs shell commands without Gatehouse: no BeforeTool hook runs gatehouse hook gemini",
			Remedy: remedyHook})
	}
	if !enabled {
		out = append(out, Finding{Code: "hooks_disabled",
			Detail: "hooksConfig.enabled is false: Gemini CLI runs no hook, Gatehouse's included",
			Remedy: "remove hooksConfig.enabled: false from the settings, or " + remedyHook})
	}
	for _, d := range disabled {
		if d == HookName || IsHookCommand(d) {
			out = append(out, Finding{Code: "hooks_disabled",
				Detail: fmt.Sprintf("hooksConfig.disabled names %q: Gemini CLI skips Gatehouse's hook", d),
				Remedy: "remove it from hooksConfig.disabled"})
		}
	}
	for _, h := range found {
		exe, _ := hookProgram(h.Command)
		if !executable(exe) {
			out = append(out, Finding{Code: "hook_broken",
				Detail: fmt.Sprintf("the hook's program %s is not an executable file: every shell command is blocked", exe),
				Remedy: remedyHook})
		}
		if h.Command != HookCommand(exe) {
			out = append(out, Finding{Code: "hook_not_fail_closed",
				Detail: "the hook runs without the shell that blocks a command when the hook crashes or is missing (Gemini CLI would run it)",
				Remedy: remedyHook})
		}
		if h.Timeout != 0 && h.Timeout < HookTimeoutMS {
			out = append(out, Finding{Code: "hook_not_fail_closed",
				Detail: fmt.Sprintf("the hook's timeout is %d ms: Gemini CLI runs the command when it passes, before a held command's approval", h.Timeout),
				Remedy: remedyHook})
		}
	}
	return out
}

// ReadDrift reads the system settings at system and the user's at user
// and returns Drift's findings.
func ReadDrift(system, user string) []Finding {
	var out []Finding
	read := func(p string) SettingsFile {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			out = append(out, Finding{Code: "settings_unreadable", File: p,
				Detail: fmt.Sprintf("%s cannot be read: %v", p, err), Remedy: "make it readable by this user"})
		}
		return SettingsFile{Path: p, Data: b}
	}
	s, u := read(system), read(user)
	return append(out, Drift(s, u, func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
	})...)
}
