package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/internal/program"
)

var installCmd = &command{name: "install",
	summary: "install the user service and the agents' hooks (--agent claude|codex|gemini|cursor|all; Claude Code's by default)",
	usage:   installUsage,
	flags:   runInstall,
}

var uninstallCmd = &command{name: "uninstall",
	summary: "remove what 'gatehouse install' added",
	usage:   uninstallUsage,
	flags:   runUninstall,
}

const installUsage = `usage: gatehouse install [--agent claude|codex|gemini|cursor|all] [--no-service] [--no-tray] [--mcp]

Installs and starts the Gatehouse user service ('gatehouse service install'
and 'start': systemd --user, launchd, or without systemd --user a background
process started at login by ~/.config/autostart/gatehouse-service.desktop;
it says which way it went), starts the tray at login ('gatehouse tray': an
XDG autostart entry, ~/.config/autostart/gatehouse-tray.desktop, or on macOS
the LaunchAgent ~/Library/LaunchAgents/dev.gatehouse.tray.plist), then merges
Gatehouse's hooks into the user settings of the agents --agent names (one,
or all but cursor; by default claude):
  claude  PreToolUse, PostToolUse, PermissionRequest and SessionEnd hooks in
          Claude Code's $CLAUDE_CONFIG_DIR/settings.json (~/.claude/settings.json)
  codex   the PreToolUse hook in Codex's $CODEX_HOME/hooks.json
          (~/.codex/hooks.json), trusted by its hash in $CODEX_HOME/config.toml
  gemini  the BeforeTool hook in Gemini CLI's ~/.gemini/settings.json
  cursor  'gatehouse mcp' as the MCP server "gatehouse" in Cursor's
          ~/.cursor/mcp.json, and a beforeShellExecution hook in
          ~/.cursor/hooks.json that denies Cursor's built-in shell tool
          and sends the model to the server's shell__execute (Cursor's hook
          cannot reroute a command); only by name, since it turns the
          built-in tool off
Everything already in the files is kept, a backup is written before any change,
and running it again changes nothing. --no-service installs no service (run
'gatehouse serve' yourself); --no-tray leaves the tray out. --mcp also registers
'gatehouse mcp' as Claude Code's MCP server "gatehouse" at user scope
($CLAUDE_CONFIG_DIR/.claude.json, by default ~/.claude.json), whose tool is
mcp__gatehouse__shell__execute.`

const uninstallUsage = `usage: gatehouse uninstall [--agent claude|codex|gemini|cursor|all] [--keep-service]

Removes Gatehouse's hooks from the user settings of the agents --agent names
(by default claude, as install; all includes cursor; Codex's trust entry goes
with its hook, Cursor's MCP server with its hook), after
a backup, its MCP server from ~/.claude.json, and the tray's start at login,
and stops and removes the user service, unless --keep-service.`

// agentHooks is one agent's part of install and uninstall: its name for
// --agent, and what merges Gatehouse's hook into its user settings and
// takes it out again (each says on env.Stdout what it changed).
type agentHooks struct {
	name      string
	install   func(env *Env, exe string) error
	uninstall func(env *Env) error
	// byName: install --agent all leaves it out (uninstall's all takes
	// it), for a change a person should ask for by name.
	byName bool
}

// agents are the agents install and uninstall know, in the order "all"
// takes them.
var agents = []agentHooks{
	{name: "claude", install: installClaude, uninstall: uninstallClaude},
	{name: "codex", install: installCodex, uninstall: uninstallCodex},
	{name: "gemini", install: installGemini, uninstall: uninstallGemini},
	// Cursor's built-in shell tool is denied, not routed: by name only.
	{name: "cursor", install: installCursor, uninstall: uninstallCursor, byName: true},
}

// pickAgents returns the agents --agent names: one by name, or all (for
// install, all but those installed by name only).
func pickAgents(name string, install bool) ([]agentHooks, error) {
	if name == "all" {
		var out []agentHooks
		for _, a := range agents {
			if !install || !a.byName {
				out = append(out, a)
			}
		}
		return out, nil
	}
	names := make([]string, 0, len(agents)+1)
	for _, a := range agents {
		if a.name == name {
			return []agentHooks{a}, nil
		}
		names = append(names, a.name)
	}
	return nil, usagef("--agent %q: want %s or all", name, strings.Join(names, ", "))
}

func runInstall(fl *flag.FlagSet) runFunc {
	agent := fl.String("agent", "claude", "")
	noService := fl.Bool("no-service", false, "")
	noTray := fl.Bool("no-tray", false, "")
	withMCP := fl.Bool("mcp", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if fl.NArg() > 0 {
			return usagef("install: unexpected argument %q", fl.Arg(0))
		}
		picked, err := pickAgents(*agent, true)
		if err != nil {
			return err
		}
		exe, err := selfPath()
		if err != nil {
			return err
		}
		if !*noService {
			if err := serviceInstallStart(env, exe); err != nil {
				return err
			}
		}
		for _, a := range picked {
			if err := a.install(env, exe); err != nil {
				return err
			}
		}
		if *withMCP {
			if err := installMCP(env, exe); err != nil {
				return err
			}
		}
		if *noTray {
			return nil
		}
		home, err := homeDir(env)
		if err != nil {
			return err
		}
		return installTrayAutostart(env, runtime.GOOS, home, exe)
	}
}

// installClaude merges Gatehouse's hooks into Claude Code's user settings.
func installClaude(env *Env, exe string) error {
	file, err := claudeSettingsPath(env)
	if err != nil {
		return err
	}
	hook := claude.HookCommand(hookExe(exe), "")
	return mergeFile(env, file, "fix the file (Claude Code reads it as JSON) and run 'gatehouse install' again; nothing was changed", func(old []byte) ([]byte, bool, error) {
		return claude.MergeHook(old, hook)
	}, "the Gatehouse hook is already installed", "Gatehouse hook installed ("+hook+")")
}

// uninstallClaude removes Gatehouse's hooks from Claude Code's user
// settings.
func uninstallClaude(env *Env) error {
	file, err := claudeSettingsPath(env)
	if err != nil {
		return err
	}
	_, err = removeHookFile(env, file, claude.RemoveHook)
	return err
}

func runUninstall(fl *flag.FlagSet) runFunc {
	agent := fl.String("agent", "claude", "")
	keep := fl.Bool("keep-service", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		picked, err := pickAgents(*agent, false)
		if err != nil {
			return err
		}
		for _, a := range picked {
			if err := a.uninstall(env); err != nil {
				return err
			}
		}
		if err := uninstallMCP(env); err != nil {
			return err
		}
		home, err := homeDir(env)
		if err != nil {
			return err
		}
		if err := removeTrayAutostart(env, runtime.GOOS, home); err != nil {
			return err
		}
		if *keep {
			return nil
		}
		m, err := serviceManager(env)
		if err != nil {
			fmt.Fprintf(env.Stdout, "service: %v; nothing to remove\n", err)
			return nil
		}
		if err := m.Uninstall(); err != nil {
			return fmt.Errorf("removing the user service: %w", err)
		}
		fmt.Fprintln(env.Stdout, "service: stopped and removed")
		return nil
	}
}

// claudeSettingsPath is Claude Code's user settings file.
func claudeSettingsPath(env *Env) (string, error) {
	home, err := homeDir(env)
	if err != nil {
		return "", err
	}
	return homePaths(env, home).ClaudeSettings, nil
}

// selfPath is the gatehouse program's absolute path, symlinks resolved:
// the path hooks and units name (the front program beside gatehouse-core,
// program.Path).
func selfPath() (string, error) {
	exe, err := program.Path()
	if err != nil {
		return "", fmt.Errorf("locating the gatehouse binary: %w", err)
	}
	return exe, nil
}

func readOptional(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// editFile rewrites file by edit, after a backup, and returns whether it
// wrote and the backup's path (none for a new file). A file that does not
// exist is edited as empty; an edit that fails leaves the file alone and
// is the error, with hint when there is one.
func editFile(file, hint string, edit func([]byte) ([]byte, bool, error)) (changed bool, backup string, err error) {
	old, err := readOptional(file)
	if err != nil {
		return false, "", err
	}
	out, changed, err := edit(old)
	if err != nil {
		err = fmt.Errorf("%s: %w", file, err)
		if hint != "" {
			err = withHint(err, hint)
		}
		return false, "", err
	}
	if !changed {
		return false, "", nil
	}
	backup, err = writeWithBackup(file, old, out)
	return err == nil, backup, err
}

// mergeFile is editFile that says on env.Stdout what it did: same when
// nothing changed, the backup and done when it wrote.
func mergeFile(env *Env, file, hint string, edit func([]byte) ([]byte, bool, error), same, done string) error {
	changed, backup, err := editFile(file, hint, edit)
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "%s: %s\n", file, same)
		return nil
	}
	if backup != "" {
		fmt.Fprintf(env.Stdout, "%s: backed up to %s\n", file, backup)
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", file, done)
	return nil
}

// removeHookFile takes Gatehouse's hook out of an agent's settings file
// by remove, after a backup, says so on env.Stdout, and returns whether it
// did.
func removeHookFile(env *Env, file string, remove func([]byte) ([]byte, bool, error)) (bool, error) {
	changed, backup, err := editFile(file, "", remove)
	if err != nil {
		return false, err
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "%s: no Gatehouse hook to remove\n", file)
		return false, nil
	}
	fmt.Fprintf(env.Stdout, "%s: Gatehouse hook removed (backup: %s)\n", file, backup)
	return true, nil
}

// writeWithBackup backs up the current file (when there is one) and
// replaces it with data atomically, keeping its mode. It returns the
// backup's path.
func writeWithBackup(file string, old, data []byte) (string, error) {
	mode := fs.FileMode(0o600)
	backup := ""
	if fi, err := os.Stat(file); err == nil {
		mode = fi.Mode().Perm()
		backup = fmt.Sprintf("%s.gatehouse-backup-%s", file, time.Now().Format("20060102-150405.000"))
		if err := os.WriteFile(backup, old, mode); err != nil {
			return "", fmt.Errorf("writing the backup: %w", err)
		}
	} else if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".settings-*.json")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return "", err
	}
	return backup, nil
}

// hookName is the small client's file name next to the gatehouse binary
// (app/gatehouse-hook).
const hookName = "gatehouse-hook"

// hookExe is the program Claude Code's settings name as the hook (and the
// hook, in turn, as the relay): the small gatehouse-hook next to exe when
// it is installed there, which starts faster on every tool call, else exe
// itself, whose 'hook claude' and 'relay' answer alike.
func hookExe(exe string) string {
	if runtime.GOOS == "windows" {
		return exe
	}
	p := filepath.Join(filepath.Dir(exe), hookName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return exe
}

// claudeConfigPath is Claude Code's user configuration file, where its
// user-scope MCP servers are.
func claudeConfigPath(env *Env) (string, error) {
	if d := env.Getenv("CLAUDE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, ".claude.json"), nil
	}
	home, err := homeDir(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude.json"), nil
}

// installMCP registers gatehouse mcp with Claude Code at user scope.
func installMCP(env *Env, exe string) error {
	file, err := claudeConfigPath(env)
	if err != nil {
		return err
	}
	changed, _, err := editFile(file, "fix the file (Claude Code reads it as JSON) and run 'gatehouse install --mcp' again; it was not changed", func(old []byte) ([]byte, bool, error) {
		return claude.MergeMCPServer(old, exe)
	})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "%s: the Gatehouse MCP server is already registered\n", file)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s: Gatehouse MCP server registered (%s mcp; tool mcp__gatehouse__shell__execute)\n", file, exe)
	return nil
}

// uninstallMCP removes what installMCP added, silently when there is
// nothing to remove.
func uninstallMCP(env *Env) error {
	file, err := claudeConfigPath(env)
	if err != nil {
		return err
	}
	changed, _, err := editFile(file, "", claude.RemoveMCPServer)
	if err != nil || !changed {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: Gatehouse MCP server removed\n", file)
	return nil
}
