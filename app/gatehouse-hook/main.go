// Command gatehouse-hook is the small client Claude Code runs on every
// tool call: 'gatehouse-hook hook claude [--routing R]' is the PreToolUse
// hook (and the PostToolUse, PermissionRequest and SessionEnd one, by the
// event its input names) and 'gatehouse-hook relay TICKET' the relay of a
// routed command, answering exactly as 'gatehouse hook claude' and
// 'gatehouse relay' do (hook/hookcmd, over the same packages: hook/decide
// and hook/relay). 'hook codex', 'hook gemini' and 'hook cursor' are the
// other agents' hooks.
//
// It exists because these two run once or twice per Bash call and their
// start is on the call's critical path: this program links the hook's
// input and output, the wire types and the socket's client only (a test
// keeps it so), not the configuration model, SQLite, D-Bus or the OS
// service manager, whose initialisers the full binary runs before main.
// 'gatehouse install' and 'gatehouse managed-settings' name it when it is
// installed next to the gatehouse binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/gatehouse-dev/gatehouse/hook/hookcmd"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if code, ok := hookcmd.Run(ctx, args, stdin, stdout, stderr, getenv); ok {
		return code
	}
	fmt.Fprintln(stderr, "gatehouse: error: gatehouse-hook: want 'hook claude [--routing R]', 'hook codex', 'hook gemini', 'hook cursor' or 'relay TICKET'")
	return 2
}
