package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { e2etest.Main(m, "gatehouse-front-") }

// run runs prog with args as w's user, from its workspace, with pipes for
// stdout and stderr (no terminal: the front program takes exec itself).
func run(w *e2etest.World, prog string, args ...string) (code int, stdout, stderr string) {
	w.TB.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env, cmd.Dir = w.Env(), w.Workspace
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		w.TB.Fatalf("%s %v: %v", prog, args, err)
	}
	return code, o.String(), e.String()
}

func core() string { return filepath.Join(filepath.Dir(e2etest.GatehouseBin), "gatehouse-core") }

// A gatehouse exec the front program sends to the service itself ends as
// the full program's does: the same exit status, the same output, the
// same lines for a denial, an argument the service refuses, a timeout, a
// usage error, and the same --json answer (but for the event's own id and
// times). Through a real service and real bubblewrap.
func TestFrontEndsAsTheFullProgram(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	w := e2etest.NewWorld(t)
	w.StartService()
	stdin := filepath.Join(w.Dir, "stdin.txt")
	e2etest.Must(t, os.WriteFile(stdin, []byte("from a file\n"), 0o644))
	for _, args := range [][]string{
		{"exec", "--", "echo out; echo err >&2; exit 3"},
		{"exec", "--", `for i in {1..3}; do echo "line $i"; done | cat`},
		{"exec", "--", "rm -rf /"},
		{"exec", "--cwd", "/etc", "--", "true"},
		{"exec", "--cwd", "..", "--", "pwd"},
		{"exec", "--stdin", stdin, "--", "cat; cat ~/.ssh/id_rsa"},
		{"exec", "--timeout", "1", "--", "sleep 5"},
		{"exec", "--timeout", "0", "--", "true"},
		{"exec", "--stdin", filepath.Join(w.Dir, "missing"), "--", "cat"},
		{"exec"},
		{"exec", "--nope", "--", "true"},
		{"exec", "--json", "--", "echo j; exit 4"},
		{"exec", "--json", "--", "rm -rf /"},
		{"version"},
	} {
		fc, fo, fe := run(w, e2etest.GatehouseBin, args...)
		cc, co, ce := run(w, core(), args...)
		if len(args) > 1 && args[1] == "--json" {
			fo, co = withoutIDs(t, fo), withoutIDs(t, co)
		}
		if fc != cc || fo != co || fe != ce {
			t.Errorf("%q: the front program: exit %d, stdout %q, stderr %q; the full program: exit %d, stdout %q, stderr %q",
				args, fc, fo, fe, cc, co, ce)
		}
	}
	// The calls are on the record, each once (two programs, seven calls
	// that ran or were denied by the service each).
	if got := len(w.Events()); got < 2*7 {
		t.Errorf("%d events on the record, want at least 14", got)
	}
}

// withoutIDs is the --json answer s with the event's id, times and
// durations blanked: two runs of one call differ only there.
func withoutIDs(t *testing.T, s string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("--json answer %q: %v", s, err)
	}
	var blank func(v any)
	blank = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch {
				case k == "id" || k == "time" || strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "_at") || strings.Contains(k, "duration"):
					v[k] = "-"
				default:
					blank(x)
				}
			}
		case []any:
			for _, x := range v {
				blank(x)
			}
		}
	}
	blank(m)
	b, _ := json.Marshal(m)
	return string(b)
}

// The front program takes gatehouse exec to a running service itself,
// without the full program: alone in a directory, it runs the call; every
// other command line, and exec without a service, needs gatehouse-core
// beside it, and says so.
func TestFrontTakesExecItself(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	w := e2etest.NewWorld(t)
	alone := filepath.Join(w.Dir, "alone")
	e2etest.Must(t, os.MkdirAll(alone, 0o755))
	front := filepath.Join(alone, "gatehouse")
	b, err := os.ReadFile(e2etest.GatehouseBin)
	e2etest.Must(t, err)
	e2etest.Must(t, os.WriteFile(front, b, 0o755))

	w.StartService()
	code, out, errs := run(w, front, "exec", "--", "echo taken by $(basename $0 2>/dev/null || echo sh)")
	if code != 0 || !strings.HasPrefix(out, "taken by") {
		t.Errorf("exec through the service without gatehouse-core: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Claude Code's hook and the relay it writes: the front program's own
	// (as gatehouse-hook runs them), naming the front program.
	hook := exec.Command(front, "hook", "claude", "--routing", "governed_shell")
	hook.Env, hook.Dir = w.Env(), w.Workspace
	hook.Stdin = strings.NewReader(`{"session_id":"s1","cwd":"` + w.Workspace + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"echo relayed; cat ~/.ssh/id_rsa"}}`)
	answer, err := hook.Output()
	e2etest.Must(t, err)
	var out2 struct {
		HookSpecificOutput struct {
			UpdatedInput struct{ Command string } `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	e2etest.Must(t, json.Unmarshal(answer, &out2))
	relay := out2.HookSpecificOutput.UpdatedInput.Command
	if !strings.HasPrefix(relay, "'"+front+"' relay ") {
		t.Fatalf("the hook's answer %s: want the relay of %s", answer, front)
	}
	code, out, errs = run(w, "/bin/sh", "-c", relay)
	if code != 1 || out != "relayed\n" || !strings.Contains(errs, "~/.ssh is hidden") {
		t.Errorf("the relay %s: exit %d, stdout %q, stderr %q", relay, code, out, errs)
	}

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"version"}, 1},
		{[]string{"exec", "--timeout", "0", "--", "true"}, 126},
	} {
		code, out, errs := run(w, front, tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errs, "gatehouse-core is missing beside "+front) || !strings.Contains(errs, "hint: install gatehouse-core") {
			t.Errorf("%q without gatehouse-core: exit %d, stdout %q, stderr %q; want exit %d naming gatehouse-core", tc.args, code, out, errs, tc.code)
		}
	}

	// No service: the full program runs the call in its own process.
	w.StopService()
	code, out, errs = run(w, e2etest.GatehouseBin, "exec", "--", "echo in-process")
	if code != 0 || out != "in-process\n" {
		t.Errorf("exec without a service: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = run(w, front, "exec", "--", "echo in-process")
	if code != 126 || !strings.Contains(errs, "gatehouse-core is missing") {
		t.Errorf("exec without a service and without gatehouse-core: exit %d, stderr %q", code, errs)
	}
}

// What the full program names as gatehouse — in hooks, units and MCP
// configurations — is the front program beside it, not gatehouse-core.
func TestCoreNamesTheFrontProgram(t *testing.T) {
	w := e2etest.NewWorld(t)
	code, out, errs := run(w, core(), "managed-settings", "--mcp-config")
	if code != 0 || !strings.Contains(out, `"command": "`+e2etest.GatehouseBin+`"`) {
		t.Errorf("managed-settings --mcp-config: exit %d, stdout %q, stderr %q; want the command %s", code, out, errs, e2etest.GatehouseBin)
	}
}
