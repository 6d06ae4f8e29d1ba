package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
)

// hostileEntry is an event whose every free text carries terminal
// controls: the judged command, the agent's name, the reason, the kept
// output.
func hostileEntry() *audit.Entry {
	code := 0
	return &audit.Entry{Record: audit.Record{
		Event: api.Event{
			ID: "0123456789abcdef0123456789abcdef", Time: time.Unix(1700000000, 0),
			Agent: "evil\x1b]0;title\a", Surface: api.SurfaceMCP, ActionType: api.ActionShellExecute,
			Decision: "allow", Reason: "why\u202egnp.exe", Status: "completed", ExitCode: &code,
			Cwd: "/w/\u200bsrc", SandboxMode: "bubblewrap",
			Output: api.Output{StdoutBytes: 30, StderrBytes: 3},
		},
		Command: "printf ok\x1b[2K\rrm -rf ~",
		Stdout:  []byte("\x1b]52;c;Y3VybCBldmls\aout\r\n\u009b31m\xff\n"),
		Stderr:  []byte("e\b\n"),
	}}
}

// visible reports the first terminal control left in s.
func visible(s string) string {
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r == '\r' && strings.HasPrefix(s[i:], "\r\n"):
		case r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0xfffd,
			r == 0x200b || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			return s[max(0, i-10):min(len(s), i+10)]
		}
	}
	return ""
}

func TestAuditShowEscapes(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := auditShowText(&b, hostileEntry(), nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if v := visible(out); v != "" {
		t.Errorf("audit show printed a terminal control near %q:\n%s", v, out)
	}
	for _, want := range []string{
		`printf ok\x1b[2K\x0drm -rf ~`, `evil\x1b]0;title\x07`, `why\u202egnp.exe`, `/w/\u200bsrc`,
		`\x1b]52;c;Y3VybCBldmls\x07out` + "\r\n" + `\u009b31m\xff`, `e\x08`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("audit show lacks %q:\n%s", want, out)
		}
	}
}

func TestAuditListEscapes(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := auditTable(&b, []audit.Entry{*hostileEntry()}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if v := visible(out); v != "" {
		t.Errorf("audit list printed a terminal control near %q:\n%s", v, out)
	}
	if !strings.Contains(out, `printf ok\x1b[2K\x0drm -rf ~`) || !strings.Contains(out, `evil\x1b]0;title\x07`) {
		t.Errorf("audit list:\n%s", out)
	}
}

func TestAuditJSONEscapes(t *testing.T) {
	t.Parallel()
	e := hostileEntry()
	obj := auditObject(e)
	obj["stdout"] = auditText(e.Stdout)
	var b bytes.Buffer
	auditJSON(&b, obj)
	if v := visible(b.String()); v != "" {
		t.Errorf("audit show --json printed a terminal control near %q:\n%s", v, b.String())
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back["command"] != e.Command || back["agent"] != e.Event.Agent || back["reason"] != e.Event.Reason {
		t.Errorf("the JSON decodes to other values: %v", back)
	}
}
