package cli

import (
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/service/doctor"
)

// printAgentDrift writes, under the fact labelled label when it is an
// agent's (Gemini CLI, Codex), whether its settings hold Gatehouse's hook
// and each way they drifted, with its remedy.
func printAgentDrift(w io.Writer, r *doctor.Report, label string) {
	for _, a := range r.Agents {
		if a.Label != label || !a.Used {
			continue
		}
		if len(a.Drift) == 0 {
			fmt.Fprintln(w, "  ok   its settings run Gatehouse's hook for every shell command")
		}
		for _, d := range a.Drift {
			fmt.Fprintf(w, "  drift %s: %s\n", d.Code, d.Detail)
			fmt.Fprintf(w, "       fix: %s\n", d.Remedy)
		}
	}
}
