package sandboxinit

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Stages are the init program's entry points by name: "sandbox-init"
// (Linux), "sandbox-exec" (Linux and macOS), "linger" and "build-id". A
// test binary that stands in for the init dispatches to them the same way
// Main does (sandbox/sandboxtest.Stage).
var Stages = map[string]func(args []string) int{"build-id": PrintBuildID}

// The streams PrintBuildID and Main write to.
var stdout, stderr io.Writer = os.Stdout, os.Stderr

// Main runs the stage args[0] names (args are os.Args[1:]) and returns the
// exit status: app/gatehouse-init is this function.
func Main(args []string) int {
	if len(args) > 0 {
		if f, ok := Stages[args[0]]; ok {
			return f(args[1:])
		}
	}
	names := make([]string, 0, len(Stages))
	for n := range Stages {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintf(stderr, "gatehouse-init is Gatehouse's sandbox init, started by gatehouse only\nusage: gatehouse-init %s ...\n", strings.Join(names, " | "))
	return 2
}
