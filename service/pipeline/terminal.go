package pipeline

// Terminal control in delivered output (exec.output.terminal_controls).
//
// The writers the caller gave (the agent's result, the relay's FIFO, a
// terminal) get output after DLP redaction and the output caps, with
// terminal controls escaped by service/termesc unless the configuration
// says keep. The output hashes and the audit trail's copy see the redacted
// bytes as the command wrote them, unescaped: every human view of the
// trail escapes them itself.

import (
	"io"

	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// terminalEscape puts an escaper in front of each of the caller's
// writers, unless output keeps terminal controls; close passes on what
// the escapers hold back and must run after the streams are finished.
func (e *Executor) terminalEscape(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	if e.cfg.Exec.Output.TerminalControls == "keep" {
		return stdout, stderr, func() {}
	}
	o, r := termesc.NewWriter(stdout), termesc.NewWriter(stderr)
	return o, r, func() {
		o.Close()
		r.Close()
	}
}
