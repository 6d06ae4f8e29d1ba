package daemon

import "strings"

// The unit templates, in kardianos/service's template language. The files
// in packaging/ are these rendered for /usr/bin/gatehouse (a test keeps
// them in step).

// SystemdUnit is the systemd --user unit. Delegate=yes hands the service
// a cgroup subtree, so each execution can get memory and pids limits;
// KillMode=mixed sends SIGTERM to the service alone, which terminates its
// executions itself (recorded killed) before the rest get SIGKILL.
const SystemdUnit = `[Unit]
Description=Gatehouse: governed shell for AI coding agents
ConditionFileIsExecutable={{Path | cmdEscape}}

[Service]
Type=simple
ExecStart={{Path | cmdEscape}}{{range Arguments}} {{. | cmd}}{{end}}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=2
Delegate=yes
KillMode=mixed
TimeoutStopSec=30

[Install]
WantedBy=default.target
`

// LaunchdPlist is the LaunchAgent.
const LaunchdPlist = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{{Name | html}}</string>
	<key>ProgramArguments</key>
	<array>
		<string>{{Path | html}}</string>
{{range Arguments}}		<string>{{. | html}}</string>
{{end}}	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Interactive</string>
	<key>ExitTimeOut</key>
	<integer>30</integer>
	<key>StandardOutPath</key>
	<string>{{StandardOutPath | html}}</string>
	<key>StandardErrorPath</key>
	<string>{{StandardErrorPath | html}}</string>
</dict>
</plist>
`

// render expands the few template forms the units use, for tests and
// the packaging files: {{X | f}} and one {{range Arguments}} block.
func render(tmpl string, vals map[string]string, args []string, quote func(string) string) string {
	const open, end = "{{range Arguments}}", "{{end}}"
	if i := strings.Index(tmpl, open); i >= 0 {
		j := strings.Index(tmpl[i:], end) + i
		body := tmpl[i+len(open) : j]
		var b strings.Builder
		for _, a := range args {
			b.WriteString(strings.NewReplacer("{{. | cmd}}", quote(a), "{{. | html}}", a).Replace(body))
		}
		tmpl = tmpl[:i] + b.String() + tmpl[j+len(end):]
	}
	var pairs []string
	for k, v := range vals {
		for _, f := range []string{"cmdEscape", "html", "cmd"} {
			pairs = append(pairs, "{{"+k+" | "+f+"}}", v)
		}
	}
	return strings.NewReplacer(pairs...).Replace(tmpl)
}
