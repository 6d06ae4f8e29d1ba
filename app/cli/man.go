package cli

// The manual page, gatehouse(1), generated from the command table
// (cli.go): each command 'gatehouse help' lists, with its summary, its
// usage and its subcommands' usage. The packages ship it; nothing in it is
// written by hand but the few paragraphs below.

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/version"
)

var manCmd = &command{name: "man",
	summary: "print the manual page gatehouse(1), in roff",
	hidden:  true,
	run: func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("man: unexpected argument %q", args[0])
		}
		writeManPage(env.Stdout, version.Get())
		return nil
	},
}

// roff escapes text for a roff body: backslashes, hyphens (which roff
// would render as hyphens, not minus signs) and a line that would start
// with a control character.
func roff(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// manDate is the page's date: the build's day, so that one build's page
// is always the same bytes.
func manDate(v version.Info) string {
	if len(v.Date) >= 10 && v.Date[4] == '-' && v.Date[7] == '-' {
		return v.Date[:10]
	}
	return "unknown"
}

func writeManPage(w io.Writer, v version.Info) {
	fmt.Fprintf(w, `.TH GATEHOUSE 1 "%s" "gatehouse %s" "User Commands"
.SH NAME
gatehouse \- governed shell for AI coding agents
.SH SYNOPSIS
.B gatehouse
.I command
.RI [ arguments ]
.SH DESCRIPTION
Gatehouse decides, runs and records every shell command an AI coding agent
asks for: each command is analysed, judged against the policy, run inside a
kernel sandbox (bubblewrap and seccomp on Linux) with only the workspace
roots writable and no network but an allowlist, its output is cleaned of
credentials, and the execution is put on the audit trail.
.PP
Claude Code reaches it through its hook
.RB ( "gatehouse install" ),
MCP clients through
.BR "gatehouse mcp" ,
a terminal through
.BR "gatehouse exec" .
A user service
.RB ( "gatehouse serve" ,
the systemd user unit
.IR gatehouse.service )
runs the commands; where none runs,
.B gatehouse exec
and
.B gatehouse mcp
run the same pipeline in their own process.
.SH COMMANDS
`, manDate(v), roff(v.Version))
	for _, c := range visibleCommands() {
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(c.name), roff(c.summary))
		usages := []string{c.usage}
		for _, s := range c.subs {
			// A subcommand's usage, unless the command's already has it.
			if s.usage != "" && !strings.Contains(c.usage, "gatehouse "+s.name) {
				usages = append(usages, s.usage)
			}
		}
		for _, u := range usages {
			if u = strings.TrimSpace(u); u != "" {
				fmt.Fprintf(w, ".RS\n.PP\n.nf\n%s\n.fi\n.RE\n", roff(u))
			}
		}
	}
	fmt.Fprint(w, `.SH EXIT STATUS
A governed command exits with its own status; otherwise:
.TP
.B 0
success
.TP
.B 1
failure (doctor: the governed shell cannot serve)
.TP
.B 2
a bad argument; nothing ran
.TP
.B 124
the command timed out
.TP
.B 126
the command was denied or could not start
.TP
.B 137
the command was killed
.SH FILES
.TP
.I \(ti/.config/gatehouse/config.yaml
the user's configuration (macOS: \(ti/Library/Application Support/Gatehouse/config.yaml)
.TP
.I /etc/gatehouse/managed.yaml
the managed file IT installs, which the user's may only narrow (macOS: /Library/Application Support/Gatehouse/managed.yaml)
.TP
.I \(ti/.local/state/gatehouse/
the audit trail, trusted workspaces, saved rules and the relay's FIFOs
.TP
.I /usr/lib/gatehouse/gatehouse\-init
the sandbox init, from the same build as gatehouse
.TP
.I /usr/lib/systemd/user/gatehouse.service
the user service (systemctl \-\-user enable \-\-now gatehouse)
.TP
.I /etc/xdg/autostart/gatehouse\-tray.desktop
the menu\-bar app's start at login
.TP
.I /etc/claude\-code/managed\-settings.json
Claude Code's managed settings (gatehouse managed\-settings)
.TP
.I /usr/share/doc/gatehouse/
the README, the documentation and the example managed files for IT
.SH SEE ALSO
.BR bwrap (1),
.BR systemctl (1)
`)
}
