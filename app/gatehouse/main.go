// Command gatehouse is the governed shell for AI coding agents, as people
// and agents run it: a small front program. It sends gatehouse exec to
// the running user service itself (app/cli/execface), which is the call
// an agent makes over and over, runs the hooks and the relay as
// gatehouse-hook does (hook/hookcmd), and hands every other command line —
// and an exec it does not take — to the full program, gatehouse-core,
// beside it (app/gatehouse-core).
//
// It exists because the full program's start is most of a call through
// the service: it links the configuration model, SQLite, D-Bus, the OS
// service manager, OpenTelemetry and the MCP SDK, whose initialisers run
// before main. This program links the wire types, the socket's client
// and exec's face only (a test keeps it so).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gatehouse-dev/gatehouse/app/cli/execface"
	"github.com/gatehouse-dev/gatehouse/hook/hookcmd"
	"github.com/gatehouse-dev/gatehouse/internal/program"
)

func main() {
	ctx, args := context.Background(), os.Args[1:]
	// The hooks and the relay as gatehouse-hook runs them: an agent's
	// settings may name gatehouse for them (the mcp_tool hook's relay
	// does).
	if code, ok := hookcmd.Run(ctx, args, os.Stdin, os.Stdout, os.Stderr, os.Getenv); ok {
		os.Exit(code)
	}
	if code, ok := execface.Front(ctx, args, os.Stdout, os.Stderr, os.Getenv); ok {
		os.Exit(code)
	}
	core, err := corePath()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gatehouse: error: %v\n", err)
		fmt.Fprintf(os.Stderr, "gatehouse: hint: install %s from the same build beside gatehouse ('make build' puts both in bin/; the packages in /usr/bin)\n", program.Core)
		os.Exit(failed(os.Args))
	}
	os.Exit(handOver(core, os.Args))
}

// corePath is the full program beside this one (symbolic links resolved,
// so a link to gatehouse in another directory finds it).
func corePath() (string, error) {
	exe, err := program.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the gatehouse program: %w", err)
	}
	core, err := program.Beside(exe, program.Core)
	if err != nil {
		return "", fmt.Errorf("the full program %s is missing beside %s: %w", program.Core, exe, err)
	}
	return core, nil
}

// failed is the exit status when the full program cannot be started for
// argv: an exec's "could not run", else a failure.
func failed(argv []string) int {
	if len(argv) > 1 && argv[1] == "exec" {
		return execface.ExitCannotRun
	}
	return 1
}
