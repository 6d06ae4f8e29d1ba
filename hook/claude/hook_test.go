package claude

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeAndRoute(t *testing.T) {
	t.Parallel()
	in, err := Decode(bytes.NewReader(load(t, "pretooluse-bash.json")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := in.Bash()
	if err != nil {
		t.Fatal(err)
	}
	if b.Command != "ls -la" || b.TimeoutMS != 5000 || b.Background || in.SessionID == "" || in.Cwd != "/home/u/src/p" {
		t.Errorf("decoded %+v %+v", in, b)
	}
	var buf bytes.Buffer
	Route(in, RelayCommand("/opt/g h/gatehouse", "ght1.T"), "r").Encode(&buf)
	var out struct {
		HookSpecificOutput struct {
			HookEventName      string         `json:"hookEventName"`
			PermissionDecision string         `json:"permissionDecision"`
			UpdatedInput       map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	o := out.HookSpecificOutput
	// The relay asks to run outside Claude Code's sandbox; the command
	// runs in Gatehouse's.
	want := map[string]any{
		"command":                   "'/opt/g h/gatehouse' relay ght1.T",
		"description":               "List files",
		"timeout":                   float64(5000),
		"run_in_background":         false,
		"dangerouslyDisableSandbox": true,
	}
	if o.HookEventName != "PreToolUse" || o.PermissionDecision != "allow" {
		t.Errorf("%+v", o)
	}
	for k, v := range want {
		if o.UpdatedInput[k] != v {
			t.Errorf("updatedInput.%s = %v, want %v", k, o.UpdatedInput[k], v)
		}
	}
	if len(o.UpdatedInput) != len(want) {
		t.Errorf("updatedInput = %v", o.UpdatedInput)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "not json", "[]", `{"tool_name": ""}`,
		`{"hook_event_name": "PostToolUse"}`,
		`{"hook_event_name": "PreCompact", "tool_name": "Bash"}`,
	} {
		if _, err := Decode(strings.NewReader(in)); err == nil {
			t.Errorf("Decode(%q) succeeded", in)
		}
	}
	in, _ := Decode(strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":5}}`))
	if _, err := in.Bash(); err == nil {
		t.Error("a non-string command was accepted")
	}
	in, _ = Decode(strings.NewReader(`{"tool_name":"Bash","tool_input":{}}`))
	if _, err := in.Bash(); err == nil {
		t.Error("a missing command was accepted")
	}
}

func TestTimeoutSeconds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		b       Bash
		def     int64
		seconds int
	}{
		{Bash{TimeoutMS: 5000}, 0, 3},
		{Bash{TimeoutMS: 3000}, 0, 1},
		{Bash{TimeoutMS: 1500}, 0, 1},
		{Bash{TimeoutMS: 100}, 0, 1},
		{Bash{}, 0, 118},
		{Bash{}, 60_000, 58},
		{Bash{Background: true}, 0, 1798},
		{Bash{TimeoutMS: 600_000}, 0, 598},
	} {
		if got := tc.b.TimeoutSeconds(tc.def); got != tc.seconds {
			t.Errorf("%+v default %d: %d s, want %d", tc.b, tc.def, got, tc.seconds)
		}
	}
}

func FuzzHookDecode(f *testing.F) {
	f.Add(`{"tool_name":"Bash","tool_input":{"command":"ls","timeout":1e3}}`)
	f.Add(`{"tool_name":"Read","tool_input":{"file_path":"/x"}}`)
	f.Add(`{"tool_name":"Glob","cwd":"/w","tool_input":{"pattern":"../a/*","path":"/b"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		in, err := Decode(strings.NewReader(s))
		if err != nil {
			return
		}
		if fa, err := in.FileAccess(); err == nil && (len(fa.Paths) == 0 || fa.Access == "") {
			t.Fatalf("file access without paths or access: %+v", fa)
		}
		if b, err := in.Bash(); err == nil {
			b.TimeoutSeconds(0)
			var buf bytes.Buffer
			Route(in, RelayCommand("/g", "t"), "").Encode(&buf)
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("invalid output %s", buf.Bytes())
			}
		}
	})
}

// Under framework routing the call runs as asked, but never outside
// Claude Code's sandbox.
func TestAllowKeepsTheSandbox(t *testing.T) {
	t.Parallel()
	in, err := Decode(strings.NewReader(`{"cwd":"/w","tool_name":"Bash","tool_input":{"command":"ls","timeout":5000,"dangerouslyDisableSandbox":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	Allow(in, "ok").Encode(&buf)
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision string         `json:"permissionDecision"`
			UpdatedInput       map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	o := out.HookSpecificOutput
	want := map[string]any{"command": "ls", "timeout": float64(5000), "dangerouslyDisableSandbox": false}
	if o.PermissionDecision != "allow" || len(o.UpdatedInput) != len(want) {
		t.Fatalf("%s", buf.Bytes())
	}
	for k, v := range want {
		if o.UpdatedInput[k] != v {
			t.Errorf("updatedInput.%s = %v, want %v", k, o.UpdatedInput[k], v)
		}
	}
	// Without the flag, the input is not rewritten at all.
	in, _ = Decode(strings.NewReader(`{"cwd":"/w","tool_name":"Bash","tool_input":{"command":"ls"}}`))
	buf.Reset()
	Allow(in, "ok").Encode(&buf)
	if strings.Contains(buf.String(), "updatedInput") {
		t.Errorf("input rewritten: %s", buf.String())
	}
}

func TestInputWithoutCwdOrCommand(t *testing.T) {
	t.Parallel()
	in, _ := Decode(strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`))
	if err := in.CheckCwd(); err == nil {
		t.Error("an input without cwd was accepted")
	}
	for _, ti := range []string{`{"command":null}`, `{"command":["ls"]}`, `{}`, `null`} {
		in, _ := Decode(strings.NewReader(`{"cwd":"/w","tool_name":"Bash","tool_input":` + ti + `}`))
		if fa, err := in.FileAccess(); err == nil && (len(fa.Paths) == 0 || fa.Access == "") {
			t.Fatalf("file access without paths or access: %+v", fa)
		}
		if b, err := in.Bash(); err == nil {
			t.Errorf("tool_input %s accepted as command %q", ti, b.Command)
		}
	}
}

func TestFileAccess(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, input string
		access      string
		search      bool
		paths       []string
	}{
		{"Read", `{"file_path":"/h/.ssh/id"}`, "read", false, []string{"/h/.ssh/id"}},
		{"Write", `{"file_path":"/w/a","content":"x"}`, "write", false, []string{"/w/a"}},
		{"Edit", `{"file_path":"/w/a","old_string":"x","new_string":"y"}`, "write", false, []string{"/w/a"}},
		{"MultiEdit", `{"file_path":"/w/a","edits":[]}`, "write", false, []string{"/w/a"}},
		{"NotebookEdit", `{"notebook_path":"/w/n.ipynb","new_source":""}`, "write", false, []string{"/w/n.ipynb"}},
		{"Grep", `{"pattern":"key"}`, "read", true, []string{"/w"}},
		{"Grep", `{"pattern":"key","path":"/h/.ssh"}`, "read", true, []string{"/h/.ssh"}},
		{"Glob", `{"pattern":"**/*.go"}`, "read", true, []string{"/w"}},
		{"Glob", `{"pattern":"../../.ssh/*","path":"/w/s"}`, "read", true, []string{"/w/s", "/w/s/../../.ssh"}},
		{"Glob", `{"pattern":"/h/.ssh/id*"}`, "read", true, []string{"/w", "/h/.ssh"}},
	} {
		in, err := Decode(strings.NewReader(`{"cwd":"/w","tool_name":"` + tc.tool + `","tool_input":` + tc.input + `}`))
		if err != nil {
			t.Fatal(err)
		}
		fa, err := in.FileAccess()
		if err != nil {
			t.Errorf("%s %s: %v", tc.tool, tc.input, err)
			continue
		}
		if fa.Tool != tc.tool || fa.Access != tc.access || fa.Search != tc.search || strings.Join(fa.Paths, " ") != strings.Join(tc.paths, " ") {
			t.Errorf("%s %s: %+v, want %s %v %v", tc.tool, tc.input, fa, tc.access, tc.search, tc.paths)
		}
	}
	for _, bad := range []string{
		`{"tool_name":"Read","tool_input":{}}`,
		`{"tool_name":"Read","tool_input":{"file_path":null}}`,
		`{"tool_name":"Read","tool_input":{"file_path":""}}`,
		`{"tool_name":"Edit","tool_input":{"file_path":7}}`,
		`{"tool_name":"NotebookEdit","tool_input":{"file_path":"/w/n.ipynb"}}`,
		`{"tool_name":"Grep","tool_input":{"path":1}}`,
		`{"tool_name":"Glob","tool_input":{"path":"/w"}}`,
		`{"tool_name":"WebFetch","tool_input":{"url":"x"}}`,
	} {
		in, err := Decode(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		in.Cwd = "/w"
		if fa, err := in.FileAccess(); err == nil {
			t.Errorf("%s accepted: %+v", bad, fa)
		}
	}
}

func TestGlobPrefix(t *testing.T) {
	t.Parallel()
	for pat, want := range map[string]string{
		"*.go": "", "**/*.go": "", "src/*.go": "src", "/etc/**": "/etc", "/*": "/",
		"../../.ssh/id*": "../../.ssh", "a/b/c": "a/b", "a/{b,c}/d": "a", "a/[bc]/d": "a",
	} {
		if got := GlobPrefix(pat); got != want {
			t.Errorf("GlobPrefix(%q) = %q, want %q", pat, got, want)
		}
	}
}

// A PostToolUse input (as Claude Code 2.1.332 sends it after a Read) is
// read with its tool_response; an answer replaces the output.
func TestDecodePostToolUse(t *testing.T) {
	t.Parallel()
	in, err := Decode(bytes.NewReader(load(t, "posttooluse-read.json")))
	if err != nil {
		t.Fatal(err)
	}
	if in.HookEventName != EventPostToolUse || in.ToolName != "Read" || !strings.Contains(string(in.ToolResponse), `"content":"hello SECRETVALUE123 bye\n"`) {
		t.Fatalf("%+v", in)
	}
	var buf bytes.Buffer
	ReplaceOutput(json.RawMessage(`{"type":"text"}`)).Encode(&buf)
	if got := strings.TrimSpace(buf.String()); got != `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"type":"text"}}}` {
		t.Errorf("answer %s", got)
	}
}

// An output that cannot be checked is withheld, its shape kept: every
// string long enough to hold a credential becomes the note.
func TestWithhold(t *testing.T) {
	t.Parallel()
	in, err := Decode(bytes.NewReader(load(t, "posttooluse-read.json")))
	if err != nil {
		t.Fatal(err)
	}
	o := Withhold(in, "the service is down")
	var got struct {
		Type string `json:"type"`
		File struct {
			FilePath string `json:"filePath"`
			Content  string `json:"content"`
			NumLines int    `json:"numLines"`
		} `json:"file"`
	}
	if err := json.Unmarshal(o.HookSpecificOutput.UpdatedToolOutput, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != "text" || got.File.NumLines != 2 || !strings.Contains(got.File.Content, "Gatehouse withheld this output of Read") ||
		!strings.Contains(got.File.Content, "the service is down") || strings.Contains(string(o.HookSpecificOutput.UpdatedToolOutput), "SECRETVALUE") {
		t.Errorf("withheld output %s", o.HookSpecificOutput.UpdatedToolOutput)
	}
	in.ToolResponse = json.RawMessage(`not json SECRETVALUE123`)
	if s := string(Withhold(in, "x").HookSpecificOutput.UpdatedToolOutput); strings.Contains(s, "SECRETVALUE") || !strings.HasPrefix(s, `"[Gatehouse withheld`) {
		t.Errorf("withheld non-JSON output %s", s)
	}
}

func TestIsRelayCommand(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]bool{
		RelayCommand("/usr/bin/gatehouse-hook", "ght1.J0XYwMB3XYmWHk1kOUgSyX6avxHMmlst"): true,
		RelayCommand("/usr/bin/gatehouse-hook", "gh_AbC-123_x"):                          true,
		RelayCommand("/home/o'neil/bin/gatehouse", "gh_x"):                               true,
		RelayCommand("/usr/bin/evil", "gh_x"):                                            false,
		RelayCommand("/usr/bin/gatehouse", "gh_x") + "; cat f":                           false,
		"cat f; " + RelayCommand("/usr/bin/gatehouse", "gh_x"):                           false,
		"'/usr/bin/gatehouse' relay gh_x $(cat f)":                                       false,
		"cat ~/.netrc": false,
	} {
		if got := IsRelayCommand(cmd); got != want {
			t.Errorf("IsRelayCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// A PermissionRequest answer has the shape Claude Code reads (checked with
// Claude Code 2.1.332): an allow carries nothing but the behaviour, so the
// command allowed is the one asked about.
func TestPermissionAnswers(t *testing.T) {
	t.Parallel()
	in, err := Decode(strings.NewReader(`{"hook_event_name":"PermissionRequest","session_id":"s","cwd":"/w","permission_mode":"default",` +
		`"tool_name":"Bash","tool_input":{"command":"'/x/gatehouse-hook' relay ght1.T","dangerouslyDisableSandbox":true}}`))
	if err != nil || in.HookEventName != EventPermissionRequest {
		t.Fatalf("decode: %+v %v", in, err)
	}
	for _, tc := range []struct {
		out  *Output
		want string
	}{
		{PermissionAllow(), `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		{PermissionDeny("no <way>"), `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no <way>"}}}`},
	} {
		var buf bytes.Buffer
		if err := tc.out.Encode(&buf); err != nil || strings.TrimSpace(buf.String()) != tc.want {
			t.Errorf("got %s (%v), want %s", buf.String(), err, tc.want)
		}
	}
}

// ParseRelayCommand takes back exactly what RelayCommand writes, for a
// gatehouse program, and nothing that only looks like it.
func TestParseRelayCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd, exe, ticket string
	}{
		{RelayCommand("/usr/bin/gatehouse-hook", "ght1.AbC-_9"), "/usr/bin/gatehouse-hook", "ght1.AbC-_9"},
		{RelayCommand("/o'dd dir/gatehouse", "ght1.T"), "/o'dd dir/gatehouse", "ght1.T"},
		{RelayCommand("/usr/bin/evil", "ght1.T"), "", ""},
		{"/usr/bin/gatehouse-hook relay ght1.T", "", ""},
		{RelayCommand("/usr/bin/gatehouse-hook", "ght1.T") + "; id", "", ""},
		{RelayCommand("/usr/bin/gatehouse-hook", "ght1.T") + "\nid", "", ""},
		{RelayCommand("/usr/bin/gatehouse-hook", "ght1.T $(id)"), "", ""},
		{"'/usr/bin/gatehouse-hook' relay ght1.T 'x'", "", ""},
		{"'/a'\\'' relay ght1.T", "", ""},
	} {
		exe, ticket, ok := ParseRelayCommand(tc.cmd)
		if exe != tc.exe || ticket != tc.ticket || ok != (tc.exe != "") {
			t.Errorf("ParseRelayCommand(%q) = %q %q %v, want %q %q", tc.cmd, exe, ticket, ok, tc.exe, tc.ticket)
		}
	}
}
