// Command gatehouse-core is the whole of gatehouse, the governed shell for
// AI coding agents: the service, the command line, the hooks, the relay.
// People run it as gatehouse, the front program beside it
// (app/gatehouse), which sends an agent's gatehouse exec to the running
// service itself and hands every other command line to this one.
package main

import (
	"context"
	"os"

	"github.com/gatehouse-dev/gatehouse/app/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
