package cli

import (
	"context"
	"flag"

	"github.com/gatehouse-dev/gatehouse/hook/cursor"
)

const hookCursorUsage = `usage: gatehouse hook cursor

Cursor runs this before every command of its built-in shell tool (its
beforeShellExecution hook, installed by 'gatehouse install --agent cursor'),
with the hook's JSON on stdin. Cursor's hook cannot rewrite a command, so
this one routes nothing: it denies every command and tells the model to run
it with the shell__execute tool of the gatehouse MCP server ('gatehouse mcp',
which the same install adds to Cursor's mcp.json). It asks the service
nothing and denies an input it cannot read too; the installed entry sets
failClosed and a wrapper that exits 2, so a hook that fails blocks
(docs/agents.md).`

func hookCursor(fl *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *Env, _ []string) error {
		if fl.NArg() > 0 {
			return usagef("hook cursor: unexpected argument %q", fl.Arg(0))
		}
		if st := cursor.Hook(env.Stdin, env.Stdout, env.Stderr); st != 0 {
			return ExitStatus(st)
		}
		return nil
	}
}

// installCursor merges Gatehouse's deny hook into Cursor's
// ~/.cursor/hooks.json and gatehouse mcp into its ~/.cursor/mcp.json: the
// built-in shell tool is denied, and the model runs commands with the MCP
// server's shell__execute.
func installCursor(env *Env, exe string) error {
	home, err := homeDir(env)
	if err != nil {
		return err
	}
	hint := "fix the file (Cursor reads it as JSON) and run 'gatehouse install --agent cursor' again; nothing was changed"
	// The server first: a hook that denies the shell with no tool to turn
	// to would leave the agent without one.
	if err := mergeFile(env, cursor.MCPPath(home), hint, func(old []byte) ([]byte, bool, error) {
		return cursor.MergeMCPServer(old, exe)
	}, "the Gatehouse MCP server is already configured", "Gatehouse MCP server configured ("+exe+" mcp; tool "+cursor.MCPTool+")"); err != nil {
		return err
	}
	cmd := cursor.HookCommand(hookExe(exe))
	return mergeFile(env, cursor.HooksPath(home), hint, func(old []byte) ([]byte, bool, error) {
		return cursor.MergeHook(old, cmd)
	}, "the Gatehouse hook is already installed", "Gatehouse hook installed: Cursor's shell tool is denied and the agent sent to "+cursor.MCPTool+" ("+cmd+")")
}

// uninstallCursor removes what installCursor added.
func uninstallCursor(env *Env) error {
	home, err := homeDir(env)
	if err != nil {
		return err
	}
	if err := mergeFile(env, cursor.HooksPath(home), "", cursor.RemoveHook, "no Gatehouse hook to remove", "Gatehouse hook removed"); err != nil {
		return err
	}
	return mergeFile(env, cursor.MCPPath(home), "", cursor.RemoveMCPServer, "no Gatehouse MCP server to remove", "Gatehouse MCP server removed")
}
