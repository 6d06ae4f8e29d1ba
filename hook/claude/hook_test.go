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
	want := map[string]any{
		"command":           "'/opt/g h/gatehouse' relay ght1.T",
		"description":       "List files",
		"timeout":           float64(5000),
		"run_in_background": false,
	}
	if o.HookEventName != "PreToolUse" || o.PermissionDecision != "allow" {
		t.Errorf("%+v", o)
	}
	for k, v := range want {
		if o.UpdatedInput[k] != v {
			t.Errorf("updatedInput.%s = %v, want %v", k, o.UpdatedInput[k], v)
		}
	}
	if _, ok := o.UpdatedInput["dangerouslyDisableSandbox"]; ok || len(o.UpdatedInput) != len(want) {
		t.Errorf("updatedInput = %v", o.UpdatedInput)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "not json", "[]", `{"tool_name": ""}`,
		`{"hook_event_name": "PostToolUse", "tool_name": "Bash"}`,
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
		{Bash{TimeoutMS: 3000}, 0, 2},
		{Bash{TimeoutMS: 1500}, 0, 1},
		{Bash{TimeoutMS: 100}, 0, 1},
		{Bash{}, 0, 119},
		{Bash{}, 60_000, 59},
		{Bash{Background: true}, 0, 1799},
		{Bash{TimeoutMS: 600_000}, 0, 599},
	} {
		if got := tc.b.TimeoutSeconds(tc.def); got != tc.seconds {
			t.Errorf("%+v default %d: %d s, want %d", tc.b, tc.def, got, tc.seconds)
		}
	}
}

func FuzzHookDecode(f *testing.F) {
	f.Add(`{"tool_name":"Bash","tool_input":{"command":"ls","timeout":1e3}}`)
	f.Add(`{"tool_name":"Read","tool_input":{"file_path":"/x"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		in, err := Decode(strings.NewReader(s))
		if err != nil {
			return
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
