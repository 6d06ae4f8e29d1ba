package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Finding is one way Codex's files drifted from Gatehouse's hook, with
// the remedy.
type Finding struct {
	// Code is hook_missing, hook_untrusted, hook_disabled, hook_stale,
	// hook_program, hook_competing or settings_unreadable.
	Code   string `json:"code"`
	File   string `json:"file,omitempty"`
	Detail string `json:"detail"`
	Remedy string `json:"remedy"`
}

// File is a file doctor read: its path and bytes (nil when absent).
type File struct {
	Path string
	Data []byte
}

// DriftOptions are Codex's files as doctor read them.
type DriftOptions struct {
	// Hooks is $CODEX_HOME/hooks.json, Config $CODEX_HOME/config.toml,
	// Requirements the managed requirements.toml.
	Hooks, Config, Requirements File
	// Executable reports whether a path is a program that can run.
	Executable func(string) bool
}

const reinstall = "run 'gatehouse install --agent codex' (it installs the hook and records its trust again)"

// Drift says how Codex's files drifted from Gatehouse's hook: the hook
// missing, present but not trusted (Codex then skips it without a word
// and every shell command runs as the model asked), turned off, not as
// install writes it, naming a program that cannot run, or beside another
// hook that may rewrite the same command. A managed hook in
// requirements.toml needs no trust and stands for the user's.
func Drift(o DriftOptions) []Finding {
	var out []Finding
	program := func(file, cmd string) {
		m := hookCommandRE().FindStringSubmatch(strings.TrimSuffix(cmd, failClosed))
		if m == nil {
			return
		}
		if exe := strings.ReplaceAll(m[1], `'\''`, "'"); o.Executable != nil && !o.Executable(exe) {
			out = append(out, Finding{Code: "hook_program", File: file,
				Detail: fmt.Sprintf("the hook runs %s, which is not an executable program: Codex's shell commands are blocked", exe), Remedy: reinstall})
		}
	}
	if strings.Contains(string(o.Requirements.Data), " hook codex") {
		for _, l := range strings.Split(string(o.Requirements.Data), "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "command") && strings.Contains(t, " hook codex") {
				if v := strings.TrimSpace(t[strings.IndexByte(t, '=')+1:]); len(v) > 1 {
					program(o.Requirements.Path, unquoteTOML(v))
				}
			}
		}
		return out
	}
	in, ok := FindHook(o.Hooks.Data)
	if !ok {
		return append(out, Finding{Code: "hook_missing", File: o.Hooks.Path,
			Detail: "Gatehouse's hook is not in Codex's hooks: its shell commands run without Gatehouse", Remedy: reinstall})
	}
	key := TrustKey(o.Hooks.Path, in.Index)
	switch got := TrustedHash(o.Config.Data, key); {
	case !in.Current:
		out = append(out, Finding{Code: "hook_stale", File: o.Hooks.Path,
			Detail: "Gatehouse's hook is not as install writes it (its matcher, timeout or message changed): Codex does not trust it until it is", Remedy: reinstall})
	case got == "":
		out = append(out, Finding{Code: "hook_untrusted", File: o.Config.Path,
			Detail: fmt.Sprintf("Codex has no trust recorded for Gatehouse's hook (%s): it skips the hook without a word, and its shell commands run without Gatehouse", key), Remedy: reinstall})
	case got != TrustHash(in.Command):
		out = append(out, Finding{Code: "hook_untrusted", File: o.Config.Path,
			Detail: fmt.Sprintf("the trust Codex recorded for Gatehouse's hook (%s) is for another hook: it skips the hook without a word", key), Remedy: reinstall})
	}
	if disabled(o.Config.Data, key) {
		out = append(out, Finding{Code: "hook_disabled", File: o.Config.Path,
			Detail: fmt.Sprintf("Gatehouse's hook is turned off in Codex (enabled = false for %s): its shell commands run without Gatehouse", key),
			Remedy: "remove the enabled = false line of that table, or turn the hook on in Codex's /hooks"})
	}
	program(o.Hooks.Path, in.Command)
	if in.Others > 0 {
		out = append(out, Finding{Code: "hook_competing", File: o.Hooks.Path,
			Detail: fmt.Sprintf("%d other PreToolUse hook(s) may take Codex's shell calls: Codex runs them beside Gatehouse's and keeps the rewrite that finishes last", in.Others),
			Remedy: "narrow their matcher so that it does not select Bash, or have IT install the managed hooks (gatehouse managed-settings --agent codex)"})
	}
	return out
}

// disabled reports whether config.toml's table of key says enabled = false.
func disabled(config []byte, key string) bool {
	lines := splitLines(config)
	start, end := findTable(lines, trustHeader(key))
	for i := start + 1; start >= 0 && i < end; i++ {
		if isKeyLine(lines[i], "enabled") && strings.TrimSpace(lines[i][strings.IndexByte(lines[i], '=')+1:]) == "false" {
			return true
		}
	}
	return false
}

// unquoteTOML reads a TOML basic string as tomlString writes it.
func unquoteTOML(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r")
	return r.Replace(v[1 : len(v)-1])
}

// ReadDrift reads Codex's files in home (its $CODEX_HOME) and the managed
// requirements file, and says how they drifted.
func ReadDrift(home, requirements string) []Finding {
	var out []Finding
	read := func(p string) File {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			out = append(out, Finding{Code: "settings_unreadable", File: p,
				Detail: fmt.Sprintf("%s cannot be read: %v", p, err), Remedy: "make it readable by this user"})
		}
		return File{Path: p, Data: b}
	}
	o := DriftOptions{Hooks: read(filepath.Join(home, HooksFile)), Config: read(filepath.Join(home, ConfigFile)),
		Executable: func(p string) bool {
			fi, err := os.Stat(p)
			return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
		}}
	if requirements != "" {
		o.Requirements = read(requirements)
	}
	return append(out, Drift(o)...)
}
