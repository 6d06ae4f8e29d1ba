package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// handOver runs the full program with the same arguments, environment and
// standard files, and returns its exit status (Windows has no exec: this
// process waits, and a console's Ctrl-C reaches both).
func handOver(core string, argv []string) int {
	cmd := exec.Command(core, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "gatehouse: error: starting %s: %v\n", core, err)
	return failed(argv)
}
