package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

var update = flag.Bool("update", false, "update testscript files")

func TestMain(m *testing.M) {
	// Inside the sandbox this test binary is Gatehouse's init: its stages
	// are gatehouse-init's.
	sandboxtest.Stage(sandboxinit.Stages)
	// gatehouse, run by the scripts, finds it there unless the
	// configuration names another (exec.sandbox.init_path): testscript runs
	// this binary as gatehouse, and no gatehouse-init lies next to it.
	if exe, err := os.Executable(); err == nil {
		execInitPath = exe
	}
	testscript.Main(m, map[string]func(){
		"gatehouse": func() { os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

func TestScript(t *testing.T) {
	bwrapOK := false
	if _, err := exec.LookPath("bwrap"); err == nil {
		bwrapOK = exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").Run() == nil
	}
	if !bwrapOK && sandboxtest.Required() {
		t.Fatal("REQUIRE_SANDBOX=1 but bubblewrap does not run here")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		WorkdirRoot:         sandboxtest.Dir(t),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Cmds:                scriptCmds(auditScriptCmds(), serviceScriptCmds(), approvalScriptCmds(), exportScriptCmds()), // audit_test.go, service_test.go, approve_test.go, export_test.go
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			if err := os.MkdirAll(filepath.Join(home, "src"), 0o755); err != nil {
				return err
			}
			e.Setenv("HOME", home)
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			e.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
			e.Setenv("PATH", os.Getenv("PATH"))
			auditScriptSetup(e) // audit_test.go
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "bwrap":
				return bwrapOK, nil
			}
			if ok, known, err := auditCondition(cond); known { // audit_test.go
				return ok, err
			}
			return false, nil
		},
	})
}

// Exit statuses are part of the interface; testscript only sees zero and
// non-zero, so they are checked here.
func TestExitStatus(t *testing.T) {
	dir := sandboxtest.Dir(t)
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, "src"), 0o755)
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "PATH":
			return "/usr/bin:/bin"
		}
		return ""
	}
	run1 := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: getenv}
		code := int(run(context.Background(), env, args))
		return code, out.String() + errb.String()
	}
	src := filepath.Join(home, "src")
	big := strings.Repeat("x", 64<<10+1)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"exec"}, 2, "missing COMMAND"},
		{[]string{"exec", "--", big}, 2, "COMMAND: is 65537 bytes"},
		{[]string{"exec", "--", "echo a\x00b"}, 2, "COMMAND: contains a NUL byte"},
		{[]string{"exec", "--timeout", "0", "--", "true"}, 2, "--timeout: 0 is not allowed"},
		{[]string{"exec", "--bogus", "--", "true"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"exec", "--cwd", "/etc", "--", "true"}, 126, "cwd_outside_workspace"},
		{[]string{"exec", "--cwd", src, "--", "rm -rf ~"}, 126, "denied: policy_rule: built-in rule \"rm-root\""},
		{[]string{"exec", "--cwd", src, "--", "echo 'x"}, 126, "denied: parse_error"},
		{[]string{"explain", "--cwd", src, "rm -rf ~"}, 0, "decision: deny (policy_rule)"},
		{[]string{"nonsense"}, 2, `unknown command "nonsense"`},
	} {
		code, msg := run1(tc.args...)
		if code != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("gatehouse %q: exit %d %q, want %d and %q", tc.args[:1], code, msg, tc.code, tc.msg)
		}
	}
	if _, err := exec.LookPath("bwrap"); err != nil && !sandboxtest.Required() {
		t.Skip("bubblewrap missing")
	}
	for _, tc := range []struct {
		cmd  string
		code int
	}{
		{"exit 7", 7},
		{"true", 0},
		{"kill -9 $$", 137},
	} {
		if code, msg := run1("exec", "--cwd", src, "--", tc.cmd); code != tc.code {
			t.Errorf("exec %q: exit %d (%s), want %d", tc.cmd, code, msg, tc.code)
		}
	}
	if code, msg := run1("exec", "--cwd", src, "--timeout", "1", "--", "sleep 30"); code != 124 || !strings.Contains(msg, "timed out after 1 s") {
		t.Errorf("timeout: exit %d %q, want 124", code, msg)
	}
}
