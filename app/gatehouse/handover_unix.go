//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// handOver replaces this process with the full program, with the same
// arguments (argv[0] kept), environment and open files; it returns only
// when that fails.
func handOver(core string, argv []string) int {
	err := syscall.Exec(core, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "gatehouse: error: starting %s: %v\n", core, err)
	return failed(argv)
}
