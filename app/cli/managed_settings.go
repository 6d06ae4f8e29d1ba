package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

var managedSettingsCmd = &command{name: "managed-settings",
	summary: "render Claude Code's managed-settings.json, Codex's requirements.toml hooks (--agent codex) or Gemini CLI's system settings (--agent gemini), for IT (--install writes it)",
	usage:   managedUsage,
	flags:   runManagedSettings,
}

const managedUsage = `usage: gatehouse managed-settings [--agent claude|codex|gemini] [--routing governed_shell|framework] [--hook FILE] [--hook-kind command|mcp_tool] [--install [--path FILE] [--drop-in auto|yes|no]]
       gatehouse managed-settings --mcp-config

Prints the managed-settings.json that makes Claude Code use Gatehouse: its own
sandbox on, with no start without it and no bypass-permissions mode,
Gatehouse's hook (this binary's absolute path) for Bash and the file tools,
for the output of the tools that read (cleaned of credentials before the model
sees it), and for Claude Code's permission requests for Bash (it lets a routed
command's relay, and nothing else, run outside Claude Code's sandbox:
unsandboxed commands are allowed, and every other one still asks the person),
managed hooks only, and permissions.deny rules keeping Claude Code's file
tools out of the deny-read set, Gatehouse's own directories and the
credential directories (paths under the home directory are written ~/…, so
one file serves every user). --routing
governed_shell (the default) makes the hook route every allowed Bash call
through Gatehouse whatever the user's policy says; framework leaves routing to
policy.builtin_exec_routing. --hook names the hook program the settings run
(an absolute path; by default gatehouse-hook beside this binary, else this
binary), for rendering on one machine what others install. --install writes
the file where Claude Code reads it (or to --path), which needs
administrator rights, and also the drop-in
managed-settings.d/90-gatehouse.json beside it when the Claude Code in
PATH reads drop-ins (2.1.83 and later; --drop-in yes or no decides instead):
merged last, it keeps Gatehouse's settings in force if another tool
replaces managed-settings.json.

--hook-kind mcp_tool has Claude Code call the hook as a tool of Gatehouse's
MCP server (gatehouse mcp, already running beside it) instead of starting a
process for each event: faster, and it needs that server configured under
the name gatehouse. --mcp-config prints the file that configures it (the
gatehouse binary beside --hook when that is given), for
claude --mcp-config FILE, or for IT to install as managed-mcp.json beside
managed-settings.json (which then allows no other MCP server). With the
server missing or failing, every Bash and file tool call is blocked.

--agent codex renders Codex CLI's managed hooks instead, for
/etc/codex/requirements.toml (or --path): Gatehouse's PreToolUse hook for
the shell tool, which Codex runs without asking the user to trust it, and
allow_managed_hooks_only, so that no user or project hook runs beside it.
--install writes it unless the file holds requirements of its own.

--agent gemini renders Gemini CLI's system settings instead, for
/etc/gemini-cli/settings.json (macOS: /Library/Application Support/GeminiCli/
settings.json; $GEMINI_CLI_SYSTEM_SETTINGS_PATH, or --path): Gatehouse's
BeforeTool hook for run_shell_command, wrapped to block when it fails, and
hooks turned on, which no user's settings can turn off. --install merges them
into the file, keeping the rest of it.`

func runManagedSettings(fl *flag.FlagSet) runFunc {
	routing := fl.String("routing", api.RoutingGovernedShell, "")
	install := fl.Bool("install", false, "")
	path := fl.String("path", "", "")
	hookFlag := fl.String("hook", "", "")
	dropIn := fl.String("drop-in", "auto", "")
	agent := fl.String("agent", "claude", "")
	hookKind := fl.String("hook-kind", claude.HookKinds[0], "")
	mcpConfig := fl.Bool("mcp-config", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if !slices.Contains(claude.HookKinds, *hookKind) {
			return usagef("managed-settings: --hook-kind %q: want command or mcp_tool", *hookKind)
		}
		if *agent != "claude" && *agent != "codex" && *agent != "gemini" {
			return usagef("managed-settings: --agent %q: want claude, codex or gemini", *agent)
		}
		if *routing != api.RoutingGovernedShell && *routing != api.RoutingFramework {
			return usagef("managed-settings: --routing %q: want governed_shell or framework", *routing)
		}
		if *dropIn != "auto" && *dropIn != "yes" && *dropIn != "no" {
			return usagef("managed-settings: --drop-in %q: want auto, yes or no", *dropIn)
		}
		if *hookFlag != "" && !filepath.IsAbs(*hookFlag) {
			return usagef("managed-settings: --hook %q: want an absolute path, like /usr/bin/gatehouse-hook", *hookFlag)
		}
		exe, err := selfPath()
		if err != nil {
			return err
		}
		hook := hookExe(exe)
		if *hookFlag != "" {
			hook = *hookFlag
		}
		if *mcpConfig {
			// The server the mcp_tool hook calls: this binary, or the
			// gatehouse installed beside --hook.
			server := exe
			if *hookFlag != "" {
				server = filepath.Join(filepath.Dir(*hookFlag), "gatehouse")
			}
			env.Stdout.Write(claude.MCPConfig(server))
			return nil
		}
		if *agent == "codex" {
			return managedCodex(env, hook, *path, *install)
		}
		if *agent == "gemini" {
			return managedGemini(env, hook, *path, *install)
		}
		hookRouting := ""
		if *routing == api.RoutingGovernedShell {
			hookRouting = api.RoutingGovernedShell
		}
		home, err := homeDir(env)
		if err != nil {
			return err
		}
		deny, readable := fileDenyPaths(env, home)
		data := claude.RenderManaged(claude.ManagedOptions{Exe: hook, Routing: hookRouting, HookKind: *hookKind, Home: home, DenyPaths: deny, Readable: readable,
			DenyGlobs: broker.DirGlobs(runtime.GOOS)})
		target := *path
		if target == "" {
			target = claude.ManagedPath(runtime.GOOS)
		}
		if !*install {
			env.Stdout.Write(data)
			fmt.Fprintf(env.Stderr, "gatehouse: Claude Code reads this from %s (and drop-ins from %s)\n",
				target, filepath.Join(filepath.Dir(target), "managed-settings.d"))
			return nil
		}
		if err := writeManaged(env, target, data); err != nil {
			return err
		}
		write, why := wantDropIn(ctx, *dropIn)
		if !write {
			fmt.Fprintf(env.Stdout, "%s: not written: %s\n", claude.DropInPath(target), why)
			return nil
		}
		return writeManaged(env, claude.DropInPath(target), data)
	}
}

// writeManaged writes a managed settings file, root-owned and readable by
// all, after a backup of a different one.
func writeManaged(env *Env, target string, data []byte) error {
	old, err := readOptional(target)
	if err != nil {
		return err
	}
	if bytes.Equal(old, data) {
		fmt.Fprintf(env.Stdout, "%s: already up to date\n", target)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return managedWriteErr(target, err)
	}
	if old != nil {
		if err := os.WriteFile(target+".gatehouse-backup", old, 0o644); err != nil {
			return managedWriteErr(target, err)
		}
	}
	if err := os.WriteFile(target, data, 0o644); err != nil {
		return managedWriteErr(target, err)
	}
	if err := os.Chmod(target, 0o644); err != nil {
		return managedWriteErr(target, err)
	}
	fmt.Fprintf(env.Stdout, "%s: written\n", target)
	return nil
}

// wantDropIn decides whether --install writes the drop-in: as mode says,
// or under "auto" when the claude in PATH reads drop-ins. It returns why
// not when not.
func wantDropIn(ctx context.Context, mode string) (bool, string) {
	switch mode {
	case "yes":
		return true, ""
	case "no":
		return false, "--drop-in no"
	}
	bin, err := exec.LookPath("claude")
	if err != nil {
		return false, "Claude Code (claude) is not in PATH to say whether it reads drop-ins (" + claude.DropInMinVersion + " and later do); --drop-in yes writes it"
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return false, fmt.Sprintf("%s --version failed (%v); --drop-in yes writes it", bin, err)
	}
	v, err := claude.ParseVersion(string(out))
	if err != nil {
		return false, fmt.Sprintf("%s --version: %v; --drop-in yes writes it", bin, err)
	}
	if !claude.ReadsDropIns(v) {
		return false, fmt.Sprintf("Claude Code %s reads no managed-settings.d (%s and later do)", strings.Fields(string(out))[0], claude.DropInMinVersion)
	}
	return true, ""
}

func managedWriteErr(target string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return withHint(fmt.Errorf("writing %s: %w", target, err),
			"managed settings are system-wide: run it as an administrator (sudo gatehouse managed-settings --install)")
	}
	return fmt.Errorf("writing %s: %w", target, err)
}

// fileDenyPaths are the places no file tool of an agent may touch, for
// the managed settings' rules, and the relay's directory, which must stay
// readable inside Claude Code's sandbox: the executor's deny-read set with
// the default configuration (Gatehouse's config and state directories
// included), the files in them a directory rule cannot cover once the
// relay directory is exempt (the configuration and the audit database),
// and the socket's directory when it is under home (a per-user directory
// elsewhere, such as $XDG_RUNTIME_DIR, cannot be written once for every
// user; the hook refuses it).
func fileDenyPaths(env *Env, home string) (deny, readable []string) {
	opts := policy.DefaultLoadOptions(runtime.GOOS, home, env.Getenv)
	deny = pipeline.DenyRead(home, privatePaths(env, opts), nil)
	p := servicePaths(env, home)
	db := filepath.Join(p.state, audit.FileName)
	deny = append(deny, opts.UserFile, db, db+"-wal", db+"-shm")
	for _, d := range []string{p.relay, filepath.Dir(p.socket)} {
		if strings.HasPrefix(d, home+string(filepath.Separator)) {
			deny = append(deny, d)
		}
	}
	return deny, []string{p.relay}
}
