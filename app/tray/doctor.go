package tray

// This file is the tray's face of gatehouse doctor: the report the
// service's API serves (api.DoctorReport), as a notification and as the
// file Open doctor report shows. Nothing here reads doctor's text.

import (
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// DoctorSummary is the notification of one report: its verdict, the
// first problems (else warnings) with their remedies, and where the full
// report is.
func DoctorSummary(r *api.DoctorReport, report string) (title, body string) {
	where := "The full report is in " + report + " (Open doctor report in the tray's menu)."
	problems, warnings := r.Count(api.DoctorProblem), r.Count(api.DoctorWarning)
	list := api.DoctorProblem
	switch {
	case problems > 0:
		title = "Gatehouse doctor: " + plural(problems, "problem")
	case warnings > 0:
		title, list = "Gatehouse doctor: no problem, "+plural(warnings, "warning"), api.DoctorWarning
	default:
		return "Gatehouse doctor: ok", "The governed shell can serve. " + where
	}
	var b strings.Builder
	n := 0
	for _, c := range r.Checks {
		if c.State != list {
			continue
		}
		if n == 3 {
			fmt.Fprintf(&b, "… and %d more\n", r.Count(list)-n)
			break
		}
		n++
		line := "• " + Shorten(c.Message, 160)
		if c.Remedy != "" {
			line += "; fix: " + Shorten(c.Remedy, 120)
		}
		fmt.Fprintln(&b, line)
	}
	b.WriteString(where)
	return title, b.String()
}

// DoctorText is the report as the file Open doctor report shows: the
// checks truth first, each with its state and remedy; what IT's managed
// settings would add, with its one remedy; then what doctor read. Every
// value is escaped.
func DoctorText(r *api.DoctorReport, at time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gatehouse doctor, %s\n\n", at.Format(time.DateTime))
	check := func(c api.DoctorCheck) {
		fmt.Fprintf(&b, "%-14s %s: %s\n", Escape(c.Name)+":", c.State, Escape(c.Message))
		if c.Remedy != "" {
			fmt.Fprintf(&b, "       fix: %s\n", Escape(c.Remedy))
		}
	}
	for _, c := range r.Checks {
		check(c)
	}
	if len(r.Managed) > 0 {
		b.WriteString("\nwhat IT's managed settings would add for every user of this machine (advice, not a problem):\n")
		for _, c := range r.Managed {
			check(c)
		}
		if r.ManagedRemedy != "" {
			fmt.Fprintf(&b, "       fix: %s\n", Escape(r.ManagedRemedy))
		}
	}
	if len(r.Facts) > 0 {
		b.WriteString("\nwhat doctor read:\n")
		for _, f := range r.Facts {
			fmt.Fprintf(&b, "%-15s%s\n", Escape(f.Label)+":", Escape(f.Value))
		}
	}
	if r.OK {
		b.WriteString("\nok: the governed shell can serve\n")
	}
	return b.String()
}
