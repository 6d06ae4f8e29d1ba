package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's first command, make run, must work on a fresh machine: it
// installs bubblewrap when missing (apt-get as root), or names the command
// that does, before it runs anything in the sandbox.

// checkoutFile returns the path of a file at the top of the checkout, or
// skips when the package runs from a copy without it (the unprivileged
// run copies the package directory alone; the main run covers this).
func checkoutFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not beside this copy of the package; the run from the checkout covers it", name)
	}
	return p
}

func TestMakeRunInstallsBubblewrapFirst(t *testing.T) {
	makefile := checkoutFile(t, "Makefile")
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	out, err := exec.Command("make", "-n", "-f", makefile, "-C", filepath.Dir(makefile), "run").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	s := string(out)
	deps := strings.Index(s, ".ci/test-deps.sh run")
	build := strings.Index(s, "go build")
	run := strings.Index(s, "exec --")
	if deps < 0 || build < 0 || run < 0 || deps > run {
		t.Fatalf("make run does not install its dependencies before it runs the governed shell:\n%s", s)
	}
}

func TestRunDeps(t *testing.T) {
	script := checkoutFile(t, ".ci/test-deps.sh")
	for _, tc := range []struct {
		name      string
		bwrap     bool
		uid       string
		aptGet    bool
		wantCode  int
		wantApt   string // the recorded apt-get calls
		wantError string
	}{
		{name: "present", bwrap: true, uid: "1000", aptGet: true, wantCode: 0},
		{name: "root installs", uid: "0", aptGet: true, wantCode: 0,
			wantApt: "update -qq\ninstall -y -qq --no-install-recommends bubblewrap\n"},
		{name: "user is told", uid: "1000", aptGet: true, wantCode: 1,
			wantError: "missing bubblewrap; install them (Debian: sudo apt-get install -y bubblewrap"},
		{name: "no apt-get", uid: "0", wantCode: 1,
			wantError: "missing bubblewrap and no apt-get here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bin := t.TempDir()
			log := filepath.Join(t.TempDir(), "apt.log")
			fake := func(name, body string) {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fake("id", "echo "+tc.uid)
			if tc.bwrap {
				fake("bwrap", "exit 0")
			}
			if tc.aptGet {
				fake("apt-get", `echo "$*" >>`+log)
			}
			cmd := exec.Command("/bin/bash", script, "run")
			cmd.Env = []string{"PATH=" + bin}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantError) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tc.wantError)
			}
			apt, _ := os.ReadFile(log)
			if string(apt) != tc.wantApt {
				t.Errorf("apt-get calls %q, want %q", apt, tc.wantApt)
			}
		})
	}
}
