// Package waitline is the line the caller of a held call shows the person
// waiting, on every face (gatehouse exec, MCP, the relay, Claude Code's
// hook). It lives apart from service/api so that the API's types link
// nothing (the relay links only them).
package waitline

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// Line is the line the caller of a held call shows the person
// waiting, on every face (gatehouse exec, MCP, Claude Code's hook): that
// it waits, how long at most, for what, and how to answer.
func Line(a api.Approval, now time.Time) string {
	left := fmt.Sprintf("%ds", int(a.Expires.Sub(now).Round(time.Second)/time.Second))
	if a.Kind == api.ApprovalEgress {
		if a.HostLoopback {
			return fmt.Sprintf("gatehouse: waiting up to %s for approval %s: %s, a service on this machine outside the sandbox (gatehouse approve %s --local-service if it is yours; or the tray)\n", left, a.ID, termesc.Line(a.SaveEntry), a.ID)
		}
		also := "--session or --always"
		if a.Preset != "" && slices.Contains(a.Answers, api.AnswerPreset) {
			also += " or --preset (the " + termesc.Line(a.Preset) + " hosts)"
		}
		return fmt.Sprintf("gatehouse: waiting up to %s for approval %s: %s, not on the egress allowlist (gatehouse approve %s for this command, %s; or the tray)\n", left, a.ID, termesc.Line(a.SaveEntry), a.ID, also)
	}
	if a.Kind == api.ApprovalWorkspace {
		return fmt.Sprintf("gatehouse: waiting up to %s for approval %s: to work in %s, which is in no workspace root (gatehouse approve %s for this call, --trust to trust it, or the tray)\n", left, a.ID, termesc.Line(a.Workspace), a.ID)
	}
	return fmt.Sprintf("gatehouse: waiting up to %s for approval %s of %q: %s (gatehouse approve %s, or the tray)\n", left, a.ID, abbrev(a.Command, 120), a.Rule, a.ID)
}

// abbrev shortens s to about n bytes on one line, as analysis.Abbrev
// does for the service's own texts (this package links no analysis).
func abbrev(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		i := n - 3
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return s[:i] + "..."
	}
	return s
}
