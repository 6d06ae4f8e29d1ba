package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The settings name the small gatehouse-hook when it is installed next to
// the gatehouse binary and executable, else the gatehouse binary.
func TestHookExe(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no gatehouse-hook on windows")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "gatehouse")
	small := filepath.Join(dir, hookName)
	if got := hookExe(exe); got != exe {
		t.Errorf("without %s: hookExe = %s, want %s", hookName, got, exe)
	}
	os.WriteFile(small, []byte("#!/bin/sh\n"), 0o644)
	if got := hookExe(exe); got != exe {
		t.Errorf("with %s not executable: hookExe = %s, want %s", hookName, got, exe)
	}
	os.Chmod(small, 0o755)
	if got := hookExe(exe); got != small {
		t.Errorf("with %s: hookExe = %s, want it", hookName, got)
	}
}
