//go:build linux || darwin

package sandboxinit

import "testing"

func TestExecOfAnotherBuild(t *testing.T) {
	// It refuses before it execs anything (it would not return otherwise).
	for _, args := range [][]string{
		{"--build-id", "other", "--seccomp", "off", "--", "/bin/true"},
		{"--seccomp", "off", "--", "/bin/true"},
	} {
		if got := Exec(args); got != 126 {
			t.Errorf("Exec(%q) = %d, want 126", args, got)
		}
	}
}
