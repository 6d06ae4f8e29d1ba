package cursor

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const userHooks = `{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [{"command": "./hooks/audit.sh", "timeout": 30}],
    "afterFileEdit": [{"command": "./hooks/format.sh"}]
  }
}
`

// The hook goes first in beforeShellExecution with failClosed, the user's
// hooks are kept, installing again changes nothing, a stale gatehouse path
// is replaced, and uninstalling gives back the user's hooks.
func TestMergeHook(t *testing.T) {
	cmd := HookCommand("/opt/gatehouse/gatehouse-hook")
	out, changed, err := MergeHook([]byte(userHooks), cmd)
	if err != nil || !changed {
		t.Fatalf("merge: %v %v", changed, err)
	}
	s := string(out)
	if strings.Index(s, "hook cursor") > strings.Index(s, "audit.sh") || !strings.Contains(s, `"failClosed": true`) ||
		!strings.Contains(s, "format.sh") || !strings.Contains(s, `"timeout": 30`) || !strings.Contains(s, `>&2`) {
		t.Errorf("merged:\n%s", s)
	}
	if again, changed, _ := MergeHook(out, cmd); changed || string(again) != s {
		t.Errorf("second merge changed the file")
	}
	moved, changed, _ := MergeHook(out, HookCommand("/usr/local/bin/gatehouse"))
	if !changed || strings.Count(string(moved), "hook cursor") != 1 || !strings.Contains(string(moved), "/usr/local/bin/gatehouse") {
		t.Errorf("stale path:\n%s", moved)
	}
	back, changed, err := RemoveHook(out)
	if err != nil || !changed || !jsonEqual(back, []byte(userHooks)) {
		t.Errorf("uninstall: %v %v\n%s", changed, err, back)
	}
	if _, changed, _ := RemoveHook(back); changed {
		t.Errorf("uninstall twice changed the file")
	}
	fresh, _, _ := MergeHook(nil, cmd)
	if !strings.HasPrefix(string(fresh), "{\n  \"version\": 1,") {
		t.Errorf("new file:\n%s", fresh)
	}
	if _, _, err := MergeHook([]byte("{\n // mine\n}"), cmd); err == nil {
		t.Errorf("a file with comments was merged")
	}
}

// The server is added beside the user's, again changes nothing, someone
// else's "gatehouse" is not replaced, and uninstall gives the file back.
func TestMergeMCPServer(t *testing.T) {
	user := `{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@mcp/github"], "env": {"T": "x"}}}}`
	out, changed, err := MergeMCPServer([]byte(user), "/opt/gatehouse/gatehouse")
	if err != nil || !changed || !strings.Contains(string(out), `"github"`) || !strings.Contains(string(out), `"gatehouse": {`) {
		t.Fatalf("merge: %v %v\n%s", changed, err, out)
	}
	if _, changed, _ := MergeMCPServer(out, "/opt/gatehouse/gatehouse"); changed {
		t.Errorf("second merge changed the file")
	}
	back, changed, _ := RemoveMCPServer(out)
	if !changed || !jsonEqual(back, []byte(user)) {
		t.Errorf("uninstall:\n%s", back)
	}
	theirs := `{"mcpServers": {"gatehouse": {"command": "/usr/bin/other", "args": []}}}`
	if _, _, err := MergeMCPServer([]byte(theirs), "/opt/gatehouse/gatehouse"); err == nil {
		t.Errorf("someone else's gatehouse server was replaced")
	}
	if _, changed, _ := RemoveMCPServer([]byte(theirs)); changed {
		t.Errorf("someone else's gatehouse server was removed")
	}
}

// Drift names a missing hook and server, a hook or server whose program is
// gone, and a hook that does not fail closed; what install writes has no
// finding.
func TestDrift(t *testing.T) {
	home := t.TempDir()
	prog := filepath.Join(home, "gatehouse")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	codes := func() (c []string) {
		for _, f := range ReadDrift(home) {
			c = append(c, f.Code)
		}
		return c
	}
	if got := strings.Join(codes(), " "); got != "hook_missing mcp_missing" {
		t.Errorf("nothing installed: %s", got)
	}
	must(t, os.MkdirAll(filepath.Join(home, ".cursor"), 0o700))
	h, _, _ := MergeHook([]byte(userHooks), HookCommand(prog))
	m, _, _ := MergeMCPServer(nil, prog)
	must(t, os.WriteFile(HooksPath(home), h, 0o600))
	must(t, os.WriteFile(MCPPath(home), m, 0o600))
	if got := codes(); len(got) != 0 {
		t.Errorf("installed: %v", got)
	}
	bare := strings.Replace(string(h), `"failClosed": true`, `"failClosed": false`, 1)
	must(t, os.WriteFile(HooksPath(home), []byte(bare), 0o600))
	if got := strings.Join(codes(), " "); got != "hook_not_fail_closed" {
		t.Errorf("not fail closed: %s", got)
	}
	must(t, os.Remove(prog))
	if got := strings.Join(codes(), " "); got != "hook_broken mcp_broken" {
		t.Errorf("program gone: %s", got)
	}
	if f := Drift("x", "y", func(string) ([]byte, error) { return nil, fs.ErrPermission }, executable); len(f) != 2 || f[0].Code != "settings_unreadable" {
		t.Errorf("unreadable: %+v", f)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func jsonEqual(a, b []byte) bool {
	return strings.Join(strings.Fields(string(a)), "") == strings.Join(strings.Fields(string(b)), "")
}

// Run by a shell, the installed command blocks (status 2 with a reason on
// stderr) when the program is missing or fails, and passes the program's
// answer on when it works.
func TestHookCommandFailsClosed(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	run := func(prog string) (int, string, string) {
		cmd := exec.Command("sh", "-c", HookCommand(prog))
		cmd.Stdin = strings.NewReader(`{"hook_event_name": "beforeShellExecution", "command": "ls", "cwd": "/"}`)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	if code, _, errs := run(filepath.Join(dir, "gatehouse-missing")); code != ExitBlock || !strings.Contains(errs, "the command did not run") {
		t.Errorf("missing program: %d %q", code, errs)
	}
	failing := filepath.Join(dir, "gatehouse-failing")
	must(t, os.WriteFile(failing, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	if code, _, errs := run(failing); code != ExitBlock || !strings.Contains(errs, "exit status 1") {
		t.Errorf("failing program: %d %q", code, errs)
	}
	working := filepath.Join(dir, "gatehouse-ok")
	must(t, os.WriteFile(working, []byte("#!/bin/sh\necho '{\"permission\":\"deny\"}'\n"), 0o755))
	if code, out, _ := run(working); code != 0 || !strings.Contains(out, `"deny"`) {
		t.Errorf("working program: %d %q", code, out)
	}
}
