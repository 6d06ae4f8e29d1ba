package decide

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini CLI runs a call whose hook exits with a status other than 0 and
// 2 and no answer: every refusal, a service that is not there included,
// is an answer with status 2.
func TestGeminiFailsClosed(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return dir
		case "XDG_RUNTIME_DIR":
			return filepath.Join(dir, "run")
		}
		return ""
	}
	for _, c := range []struct {
		name, in, want string
		status         int
	}{
		{"no service", `{"session_id":"s","cwd":"` + dir + `","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls","description":"x"}}`,
			`"decision":"deny","reason":"Gatehouse did not run this command: the Gatehouse service is not reachable`, 2},
		{"malformed", `{"hook_event_name":"BeforeTool"`, `"decision":"deny","reason":"Gatehouse could not read this tool call`, 2},
		{"no command", `{"cwd":"` + dir + `","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{}}`, `"decision":"deny"`, 2},
		{"another tool", `{"cwd":"` + dir + `","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"x"}}`, ``, 0},
	} {
		var out bytes.Buffer
		st := Gemini(context.Background(), Env{Stdin: strings.NewReader(c.in), Getenv: getenv}, &out)
		if st != c.status || !strings.Contains(out.String(), c.want) || (c.want == "" && out.Len() > 0) {
			t.Errorf("%s: status %d, answer %s", c.name, st, out.String())
		}
	}
}
