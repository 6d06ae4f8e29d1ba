package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkClaudeHookKinds measures what each kind of hook costs Claude
// Code itself, the answer aside: one session of -session.calls Bash
// "true" calls (its sandbox off, Bash(true) allowed) with no hook, and
// with a PreToolUse hook that answers nothing of each kind — a command
// (true: the cheapest process), an http hook (a loopback server answering
// {}, the secret header a real one would check included) and an mcp_tool
// hook (gatehouse mcp's hook tool, asked about a tool it does not decide,
// so that it answers {} without the service). -session.rounds rounds,
// interleaved; medians a call and each kind's cost over no hook.
//
//	go test -run '^$' -bench ClaudeHookKinds -benchtime 1x -v ./hook/claude/e2e
func BenchmarkClaudeHookKinds(b *testing.B) {
	claude := requireClaude(b)
	if b.N > 1 {
		b.Skip("one measurement a process: run with -benchtime 1x")
	}
	w := sessionWorld(b, claude)
	const secret = "bench-secret-0123456789"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(b, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("Authorization") != "Bearer "+secret {
			http.Error(rw, "no", http.StatusUnauthorized)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, "{}")
	})}
	go srv.Serve(l)
	defer srv.Close()

	group := func(h map[string]any) map[string]any {
		h["timeout"], h["onFailure"] = 30, "block"
		return map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{h}}}}
	}
	kinds := []struct {
		name  string
		hooks map[string]any
		args  []string
	}{
		{"none", nil, nil},
		{"command", group(map[string]any{"type": "command", "command": "true"}), nil},
		{"http", group(map[string]any{"type": "http", "url": "http://" + l.Addr().String() + "/hook",
			"headers": map[string]any{"Authorization": "Bearer $GATEHOUSE_BENCH_SECRET"}, "allowedEnvVars": []string{"GATEHOUSE_BENCH_SECRET"}}), nil},
		{"mcp_tool", group(map[string]any{"type": "mcp_tool", "server": "gatehouse", "tool": "claude_hook",
			"input": map[string]any{"hook_event_name": "${hook_event_name}", "session_id": "${session_id}", "cwd": "${cwd}", "tool_name": "Noop"}}),
			[]string{"--mcp-config", filepath.Join(w.Dir, "mcp.json")}},
	}
	must(b, os.WriteFile(filepath.Join(w.Dir, "mcp.json"), w.ghRun("managed-settings", "--mcp-config"), 0o644))
	w.extraEnv = []string{"GATEHOUSE_BENCH_SECRET=" + secret}
	names, settings, args := make([]string, len(kinds)), make([]string, len(kinds)), make([][]string, len(kinds))
	for i, k := range kinds {
		m := map[string]any{"permissions": map[string]any{"allow": []string{"Bash(true)"}}}
		if k.hooks != nil {
			m["hooks"] = k.hooks
		}
		names[i], args[i] = k.name, k.args
		settings[i] = writeJSON(b, filepath.Join(w.Dir, "kind-"+k.name+".json"), m)
	}
	gaps := w.interleaved(b, names, settings, args, nil)
	none := ms2(med(gaps[0]))
	for i, k := range kinds {
		m := ms2(med(gaps[i]))
		b.ReportMetric(m, "ms/call-"+k.name)
		b.Logf("%-8s median %6.1f ms a call over %d calls: the hook costs %+.1f ms", k.name, m, len(gaps[i]), m-none)
	}
	b.ReportMetric(0, "ns/op")
}

// interleaved runs one short session of each configuration first (Claude
// Code's first start is not what a call costs), then -session.rounds
// rounds of one -session.calls session of each in turn, logging each, and
// returns every call's time by configuration. check, when not nil, sees
// each measured session of configuration i.
func (w *world) interleaved(b *testing.B, names, settings []string, args [][]string, check func(i int, a *timedAPI)) [][]time.Duration {
	b.Helper()
	for i, s := range settings {
		w.session(s, 1, args[i]...)
	}
	gaps := make([][]time.Duration, len(names))
	for r := range *sessionRounds {
		for i, name := range names {
			a := w.session(settings[i], *sessionCalls, args[i]...)
			if check != nil {
				check(i, a)
			}
			g := a.gaps()
			gaps[i] = append(gaps[i], g...)
			b.Logf("round %d %-13s median %6.1f ms, calls %s", r+1, name, ms2(med(g)), msList(g))
		}
	}
	return gaps
}
