// Command gatehouse is the governed shell for AI coding agents: one binary
// with many faces (service, CLI, hook, relay, sandbox init).
package main

import (
	"context"
	"os"

	"github.com/gatehouse-dev/gatehouse/app/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
