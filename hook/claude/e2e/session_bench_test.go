package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// The session benchmark's settings (after -args, or after the package on
// the go test command line).
var (
	sessionCalls     = flag.Int("session.calls", 10, "BenchmarkClaudeSession: Bash calls in one Claude Code session")
	sessionRounds    = flag.Int("session.rounds", 3, "BenchmarkClaudeSession: rounds of the four configurations, interleaved")
	sessionBreakdown = flag.Bool("session.breakdown", true, "BenchmarkClaudeSession: one more timed session of each routed configuration, the hook and the relay wrapped in a timer")
)

// The five configurations of BenchmarkClaudeSession.
const (
	cfgAlone   = iota // Claude Code alone: no hook, its sandbox off
	cfgSandbox        // Claude Code's own sandbox, as the managed settings render it, without their hook
	cfgManaged        // the managed settings as rendered: the relay let out of Claude Code's sandbox by the PermissionRequest hook, the command in Gatehouse's
	cfgHook           // gatehouse install's hook only, Claude Code's sandbox off
	cfgMCP            // the managed settings rendered with the mcp_tool hook (--hook-kind mcp_tool), gatehouse mcp its server (--mcp-config)
	nConfigs
)

var cfgNames = [nConfigs]string{"alone", "cc-sandbox", "routed-managed", "routed-hook", "routed-mcp"}

// sessionRes holds the figures of the one measurement a test process
// makes, however often the framework calls the benchmark (-benchtime 200x
// calls it with b.N 1, then 200): b.N is not the number of calls.
var (
	sessionMu  sync.Mutex
	sessionRes *sessionFigures
)

// BenchmarkClaudeSession drives the real claude against the fake Messages
// API, which asks for -session.calls Bash "true" calls in one session, one
// tool_use a model turn, and measures the time between consecutive model
// requests: its median is the time of one Bash call, as the user sees it.
// The four configurations (cfgAlone … cfgHook) run interleaved,
// -session.rounds times; the figures are medians over every call of every
// round. It reports, in ms a call, each configuration, Gatehouse's own share
// (routed-hook − alone), Claude Code's sandbox share (cc-sandbox − alone),
// their ratio (target ≤ 0.5), routed-managed / cc-sandbox (target ≤ 0.6)
// and routed-managed / alone (target ≤ 1.6), and the same two for
// routed-mcp, the hook without a process; then, for the routed
// configurations, where a call's time goes, from the service's events
// (every session) and from one more session with the hook and the relay
// timed by a wrapper (-session.breakdown).
//
//	go test -run '^$' -bench ClaudeSession -benchtime 1x -v ./hook/claude/e2e
func BenchmarkClaudeSession(b *testing.B) {
	claude := requireClaude(b) // skips without bwrap, claude or socat (its sandbox's proxy)
	sessionMu.Lock()
	defer sessionMu.Unlock()
	if sessionRes == nil {
		sessionRes = measureSessions(b, claude)
	}
	sessionRes.report(b)
}

// sessionFigures are the measurements of every configuration.
type sessionFigures struct {
	calls, rounds int
	gaps          [nConfigs][]time.Duration // every call, every round
	// args are each configuration's claude arguments besides --settings.
	args         [nConfigs][]string
	roundMedians [nConfigs][]time.Duration   // one a round
	events       [nConfigs]*eventBreakdown   // routed configurations only
	wrapped      [nConfigs]*wrappedBreakdown // routed, -session.breakdown only
	log          []string
}

// eventBreakdown is where a routed call's time goes, from the model
// request that carries the tool_use to the next one, told by the service's
// events: the decision event's time (the hook's request reached the
// service), the execution event's (the relay redeemed its ticket) and its
// duration (the sandbox).
type eventBreakdown struct {
	toDecision, toRedeem, sandbox, afterRun []time.Duration
	warm, fresh                             int
	freshReasons                            map[string]int
}

// wrappedBreakdown is the same, told by the timer around the hook and the
// relay processes (internal/timewrap).
type wrappedBreakdown struct {
	gaps                                                []time.Duration
	toHook, hook, hookToDecision, toRelay, relay, after []time.Duration
	relayToRedeem, redeemToExit                         []time.Duration
}

// sessionWorld is one isolated user for the benchmark.
func sessionWorld(b *testing.B, claude string) *world {
	w := &world{World: e2etest.NewWorld(b), claude: claude}
	return w
}

// ghRun runs the built gatehouse as w's user.
func (w *world) ghRun(args ...string) []byte {
	w.TB.Helper()
	cmd := exec.Command(e2etest.GatehouseBin, args...)
	cmd.Env = w.Env()
	cmd.Dir = w.Home
	out, err := cmd.Output()
	if err != nil {
		w.TB.Fatalf("gatehouse %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// managedSettings returns the settings gatehouse managed-settings renders
// for w.
func (w *world) managedSettings() map[string]any {
	var m map[string]any
	must(w.TB, json.Unmarshal(w.ghRun("managed-settings"), &m))
	return m
}

func writeJSON(tb testing.TB, path string, v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	must(tb, err)
	must(tb, os.WriteFile(path, b, 0o644))
	return path
}

// hookCommand returns the PreToolUse hook in settings m, nil unless one.
func hookCommand(m map[string]any) map[string]any {
	hooks, _ := m["hooks"].(map[string]any)
	pre, _ := hooks["PreToolUse"].([]any)
	if len(pre) != 1 {
		return nil
	}
	list, _ := pre[0].(map[string]any)["hooks"].([]any)
	if len(list) != 1 {
		return nil
	}
	h, _ := list[0].(map[string]any)
	return h
}

// wrapHook prefixes the hook command of settings m with the timer, and
// its PermissionRequest hook, when it has one, with the timer's unwrapping
// of the timed relay (the hook lets out exactly the relay it wrote).
func wrapHook(tb testing.TB, m map[string]any, timewrap, log string) {
	h := hookCommand(m)
	if h == nil {
		tb.Fatalf("settings without one PreToolUse hook: %v", m)
	}
	h["command"] = fmt.Sprintf("'%s' hook '%s' %s", timewrap, log, h["command"])
	hooks, _ := m["hooks"].(map[string]any)
	for _, g := range anyList(hooks["PermissionRequest"]) {
		gm, _ := g.(map[string]any)
		for _, x := range anyList(gm["hooks"]) {
			if ph, ok := x.(map[string]any); ok {
				ph["command"] = fmt.Sprintf("'%s' permission %s", timewrap, ph["command"])
			}
		}
	}
}

func anyList(v any) []any { l, _ := v.([]any); return l }

// timedAPI is the fake API, recording when each model request of the
// session arrived: turns[j] is the first request carrying j tool_results,
// the one answered with the (j+1)th tool_use.
type timedAPI struct {
	*fakeAPI
	tmu   sync.Mutex
	turns []time.Time
}

func (a *timedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	turn := strings.HasPrefix(r.URL.Path, "/v1/messages") && !strings.Contains(r.URL.Path, "count_tokens") &&
		slices.ContainsFunc(req.Tools, func(t struct {
			Name string `json:"name"`
		}) bool {
			return t.Name == "Bash"
		})
	a.fakeAPI.ServeHTTP(w, r)
	if !turn {
		return // not the agent's loop
	}
	n := a.fakeAPI.results.Len()
	a.tmu.Lock()
	if n == len(a.turns) { // a request sent again is not a new turn
		a.turns = append(a.turns, t)
	}
	a.tmu.Unlock()
}

// session runs one claude -p session of n Bash true calls from w's
// workspace, with extra arguments, and returns the fake API, its turns
// complete.
func (w *world) session(settings string, n int, extra ...string) *timedAPI {
	tb := w.TB
	tb.Helper()
	calls := make([]toolCall, n)
	for i := range calls {
		calls[i] = toolCall{"Bash", map[string]any{"command": "true", "description": "bench"}}
	}
	a := &timedAPI{fakeAPI: &fakeAPI{calls: calls}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(tb, err)
	srv := &http.Server{Handler: a}
	go srv.Serve(l)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.claude, append([]string{"-p", "run the commands", "--output-format", "json", "--settings", settings}, extra...)...)
	cmd.Dir = w.Workspace
	cmd.Env = append(w.Env(),
		"ANTHROPIC_BASE_URL=http://"+l.Addr().String(),
		"ANTHROPIC_API_KEY=e2e-test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	)
	cmd.Env = append(cmd.Env, w.extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tb.Fatalf("claude: %v\n%s\nservice log:\n%s", err, out.String(), w.ServeLog.String())
	}
	results := a.fakeAPI.results.All()
	for i, r := range results {
		if r.IsError {
			tb.Fatalf("call %d failed: %+v\nclaude: %s\nservice log:\n%s", i, r, out.String(), w.ServeLog.String())
		}
	}
	if len(results) != n || len(a.turns) != n+1 {
		tb.Fatalf("%d tool_results and %d turns, want %d and %d\nclaude: %s", len(results), len(a.turns), n, n+1, out.String())
	}
	return a
}

// gaps returns the time of each call: from the request answered with its
// tool_use to the one carrying its tool_result.
func (a *timedAPI) gaps() []time.Duration {
	var d []time.Duration
	for j := 1; j < len(a.turns); j++ {
		d = append(d, a.turns[j].Sub(a.turns[j-1]))
	}
	return d
}

// routedCall is one routed call as the service recorded it.
type routedCall struct {
	decision, redeem time.Time
	run              time.Duration
	start, reason    string
}

// routedCalls returns the n routed calls the service recorded since since,
// in order.
func (w *world) routedCalls(since time.Time, n int) []routedCall {
	tb := w.TB
	evs, err := w.Client().Events(context.Background(), 4*n+20)
	must(tb, err)
	dec := map[string]api.Event{}
	var runs []api.Event
	for _, e := range evs {
		if e.Time.Before(since) || e.ActionType != api.ActionShellExecute {
			continue
		}
		if e.ParentID == "" {
			dec[e.ID] = e
		} else {
			runs = append(runs, e)
		}
	}
	var calls []routedCall
	for _, r := range runs {
		d, ok := dec[r.ParentID]
		if !ok || r.Status != "completed" {
			tb.Fatalf("execution event without its decision, or not completed: %+v", r)
		}
		calls = append(calls, routedCall{decision: d.Time, redeem: r.Time, run: time.Duration(r.DurationMS) * time.Millisecond,
			start: r.SandboxStart, reason: r.SandboxStartReason})
	}
	if len(calls) != n || len(dec) != n {
		tb.Fatalf("the service recorded %d decisions and %d executions, want %d: %+v", len(dec), len(calls), n, evs)
	}
	slices.SortFunc(calls, func(a, b routedCall) int { return a.decision.Compare(b.decision) })
	return calls
}

// add adds a session's calls to the event breakdown.
func (e *eventBreakdown) add(tb testing.TB, a *timedAPI, calls []routedCall) {
	for j, c := range calls {
		if !c.decision.After(a.turns[j]) || !c.redeem.Before(a.turns[j+1]) {
			tb.Fatalf("call %d: decided %v, redeemed %v, outside its turn %v – %v", j, c.decision, c.redeem, a.turns[j], a.turns[j+1])
		}
		e.toDecision = append(e.toDecision, c.decision.Sub(a.turns[j]))
		e.toRedeem = append(e.toRedeem, c.redeem.Sub(c.decision))
		e.sandbox = append(e.sandbox, c.run)
		e.afterRun = append(e.afterRun, a.turns[j+1].Sub(c.redeem.Add(c.run)))
		if c.start == "warm" {
			e.warm++
		} else {
			e.fresh++
			if e.freshReasons == nil {
				e.freshReasons = map[string]int{}
			}
			e.freshReasons[c.start+": "+c.reason]++
		}
	}
}

// readHookLog returns the hook's start and end times, in order.
func readHookLog(tb testing.TB, path string) (starts, ends []time.Time) {
	b, err := os.ReadFile(path)
	must(tb, err)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s, e int64
		if _, err := fmt.Sscanf(line, "hook %d %d", &s, &e); err != nil {
			tb.Fatalf("hook log %q: %v", line, err)
		}
		starts, ends = append(starts, time.Unix(0, s)), append(ends, time.Unix(0, e))
	}
	return starts, ends
}

// relayTimes returns the relay's start and end times, from the timer's
// line in a tool_result.
func relayTimes(tb testing.TB, content string) (start, end time.Time) {
	i := strings.Index(content, "timewrap-relay ")
	if i < 0 {
		tb.Fatalf("tool_result without the relay's times: %q", content)
	}
	var s, e int64
	if _, err := fmt.Sscanf(content[i:], "timewrap-relay %d %d", &s, &e); err != nil {
		tb.Fatalf("tool_result %q: %v", content, err)
	}
	return time.Unix(0, s), time.Unix(0, e)
}

// wrappedSession runs one session with the hook and the relay timed and
// returns its breakdown.
func (w *world) wrappedSession(settings, hookLog string, n int, extra ...string) *wrappedBreakdown {
	tb := w.TB
	os.Remove(hookLog)
	since := time.Now()
	a := w.session(settings, n, extra...)
	calls := w.routedCalls(since, n)
	hs, he := readHookLog(tb, hookLog)
	if len(hs) != n {
		tb.Fatalf("the hook ran %d times, want %d", len(hs), n)
	}
	wb := &wrappedBreakdown{gaps: a.gaps()}
	for j := 0; j < n; j++ {
		rs, re := relayTimes(tb, a.fakeAPI.results.All()[j].Content)
		wb.toHook = append(wb.toHook, hs[j].Sub(a.turns[j]))
		wb.hook = append(wb.hook, he[j].Sub(hs[j]))
		wb.hookToDecision = append(wb.hookToDecision, calls[j].decision.Sub(hs[j]))
		wb.toRelay = append(wb.toRelay, rs.Sub(he[j]))
		wb.relay = append(wb.relay, re.Sub(rs))
		wb.relayToRedeem = append(wb.relayToRedeem, calls[j].redeem.Sub(rs))
		wb.redeemToExit = append(wb.redeemToExit, re.Sub(calls[j].redeem.Add(calls[j].run)))
		wb.after = append(wb.after, a.turns[j+1].Sub(re))
	}
	return wb
}

// buildTimewrap builds the timer beside the test's binaries.
func buildTimewrap(tb testing.TB) string {
	bin := filepath.Join(filepath.Dir(e2etest.HookBin), "timewrap")
	if os.Getenv("GATEHOUSE_E2E_BIN") != "" {
		return bin // built with the others
	}
	build := exec.Command("go", "build", "-o", bin, "github.com/gatehouse-dev/gatehouse/hook/claude/e2e/internal/timewrap")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building timewrap: %v\n%s", err, out)
	}
	return bin
}

func measureSessions(b *testing.B, claude string) *sessionFigures {
	n, rounds := *sessionCalls, *sessionRounds
	if n < 1 || rounds < 1 {
		b.Fatalf("-session.calls %d, -session.rounds %d: want at least 1", n, rounds)
	}
	f := &sessionFigures{calls: n, rounds: rounds}

	// Four users: configurations 1 and 2 need no service, 3, 4 and 5
	// each their own (4's user settings carry the installed hook).
	plain := sessionWorld(b, claude)
	managed := sessionWorld(b, claude)
	managed.StartService()
	hooked := sessionWorld(b, claude)
	hooked.StartService()
	hooked.ghRun("install", "--no-service")
	mcp := sessionWorld(b, claude)
	mcp.StartService()

	allow := map[string]any{"permissions": map[string]any{"allow": []string{"Bash(true)"}}}
	var settings [nConfigs]string
	worlds := [nConfigs]*world{plain, plain, managed, hooked, mcp}
	settings[cfgAlone] = writeJSON(b, filepath.Join(plain.Dir, "alone.json"), allow)
	sb := plain.managedSettings()
	delete(sb, "hooks")
	delete(sb, "allowManagedHooksOnly")
	if s, _ := sb["sandbox"].(map[string]any); s["enabled"] != true {
		b.Fatalf("the managed settings do not turn Claude Code's sandbox on: %v", s)
	}
	settings[cfgSandbox] = writeJSON(b, filepath.Join(plain.Dir, "sandbox.json"), sb)
	ms := managed.managedSettings()
	if hookCommand(ms) == nil {
		b.Fatalf("the managed settings carry no hook: %v", ms)
	}
	settings[cfgManaged] = writeJSON(b, filepath.Join(managed.Dir, "managed.json"), ms)
	settings[cfgHook] = writeJSON(b, filepath.Join(hooked.Dir, "alone.json"), allow)
	settings[cfgMCP], f.args[cfgMCP] = mcp.mcpSession()

	// One short session each first: Claude Code's first start in a new
	// home, and the first sandbox, are not what a call costs.
	for c := range nConfigs {
		worlds[c].session(settings[c], 1, f.args[c]...)
	}
	for c := cfgManaged; c < nConfigs; c++ {
		f.events[c] = &eventBreakdown{}
	}
	for r := range rounds {
		for c := range nConfigs {
			w := worlds[c]
			since := time.Now()
			a := w.session(settings[c], n, f.args[c]...)
			g := a.gaps()
			f.gaps[c] = append(f.gaps[c], g...)
			f.roundMedians[c] = append(f.roundMedians[c], med(g))
			if f.events[c] != nil {
				f.events[c].add(b, a, w.routedCalls(since, n))
			}
			f.log = append(f.log, fmt.Sprintf("round %d %-14s median %6.1f ms, calls %s", r+1, cfgNames[c], ms2(med(g)), msList(g)))
		}
	}

	if *sessionBreakdown {
		tw := buildTimewrap(b)
		// 3: the managed settings' hook, timed.
		m := managed.managedSettings()
		wrapHook(b, m, tw, filepath.Join(managed.Dir, "hook.log"))
		s := writeJSON(b, filepath.Join(managed.Dir, "managed-timed.json"), m)
		f.wrapped[cfgManaged] = managed.wrappedSession(s, filepath.Join(managed.Dir, "hook.log"), n)
		// 4: the installed hook in the user's settings, timed.
		user := filepath.Join(hooked.Home, ".claude", "settings.json")
		orig, err := os.ReadFile(user)
		must(b, err)
		var um map[string]any
		must(b, json.Unmarshal(orig, &um))
		wrapHook(b, um, tw, filepath.Join(hooked.Dir, "hook.log"))
		writeJSON(b, user, um)
		f.wrapped[cfgHook] = hooked.wrappedSession(settings[cfgHook], filepath.Join(hooked.Dir, "hook.log"), n)
		must(b, os.WriteFile(user, orig, 0o644))
	}
	return f
}

// mcpSession returns the settings and the claude arguments of the
// routed-mcp configuration: the managed settings with the mcp_tool hook,
// and the MCP configuration that runs its server.
func (w *world) mcpSession() (string, []string) {
	s, mc := w.mcpSettings("managed-mcp", nil)
	return s, []string{"--mcp-config", mc}
}

func med(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

func ms2(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func msList(d []time.Duration) string {
	var s []string
	for _, x := range d {
		s = append(s, fmt.Sprintf("%.1f", ms2(x)))
	}
	return strings.Join(s, " ")
}

// report prints the summary first: without -v, the framework keeps only
// the first lines of a benchmark's log.
func (f *sessionFigures) report(b *testing.B) {
	var m [nConfigs]float64
	for c := range nConfigs {
		m[c] = ms2(med(f.gaps[c]))
		b.ReportMetric(m[c], "ms/call-"+cfgNames[c])
	}
	own, ccs := m[cfgHook]-m[cfgAlone], m[cfgSandbox]-m[cfgAlone]
	share, managed, managedAlone := own/ccs, m[cfgManaged]/m[cfgSandbox], m[cfgManaged]/m[cfgAlone]
	b.ReportMetric(share, "share-ratio")
	b.ReportMetric(managed, "managed/cc-sandbox")
	b.ReportMetric(managedAlone, "managed/alone")
	mcpSandbox, mcpAlone := m[cfgMCP]/m[cfgSandbox], m[cfgMCP]/m[cfgAlone]
	b.ReportMetric(mcpSandbox, "mcp/cc-sandbox")
	b.ReportMetric(mcpAlone, "mcp/alone")
	b.ReportMetric(0, "ns/op")
	b.Logf("summary (%d calls × %d rounds, medians, ms a call): alone %.1f, cc-sandbox %.1f, routed-managed %.1f, routed-hook %.1f; Gatehouse's share %.1f, Claude Code's sandbox share %.1f, ratio %.2f× (target ≤ 0.5×); routed-managed / cc-sandbox %.2f× (target ≤ 0.6×); routed-managed / alone %.2f× (target ≤ 1.6×)",
		f.calls, f.rounds, m[cfgAlone], m[cfgSandbox], m[cfgManaged], m[cfgHook], own, ccs, share, managed, managedAlone)
	b.Logf("the hook without a process (routed-mcp: the same managed settings with the mcp_tool hook) %.1f ms a call: routed-mcp / cc-sandbox %.2f× (target ≤ 0.6×); routed-mcp / alone %.2f× (target ≤ 1.6×); routed-mcp / routed-managed %.2f×",
		m[cfgMCP], mcpSandbox, mcpAlone, m[cfgMCP]/m[cfgManaged])
	for c := cfgManaged; c < nConfigs; c++ {
		e := f.events[c]
		b.ReportMetric(float64(e.warm), "warm-"+cfgNames[c])
		b.Logf("%s: sandboxes warm %d of %d %v; from the service's events (medians, ms): model request → decision %.1f, decision → relay redeemed %.1f, sandbox run %.1f, run's end → next model request %.1f",
			cfgNames[c], e.warm, e.warm+e.fresh, e.freshReasons, ms2(med(e.toDecision)), ms2(med(e.toRedeem)), ms2(med(e.sandbox)), ms2(med(e.afterRun)))
		wb := f.wrapped[c]
		if wb == nil {
			continue
		}
		hook, relay := ms2(med(wb.hook)), ms2(med(wb.relay))
		b.ReportMetric(hook, "ms/hook-"+cfgNames[c])
		b.ReportMetric(relay, "ms/relay-"+cfgNames[c])
		rest := "Claude Code itself"
		if c == cfgManaged {
			rest += ", its permission request and the PermissionRequest hook"
		}
		b.Logf("%s: of its %.1f ms a call, the hook process %.1f, the relay process %.1f, the remainder (%s) %.1f",
			cfgNames[c], m[c], hook, relay, rest, m[c]-hook-relay)
		if c == cfgHook {
			b.Logf("Gatehouse's share %.1f: the hook %.1f, the relay %.1f, and %.1f more in Claude Code (running the hook, reading its answer)", own, hook, relay, own-hook-relay)
		}
		b.Logf("%s, hook and relay timed (one more session, medians, ms): call %.1f (the timer adds its own starts); model request → hook start %.1f; hook process %.1f (start → decision %.1f); hook's end → relay start %.1f; relay process %.1f (start → redeemed %.1f, the run's end → exit %.1f); relay's end → next model request %.1f",
			cfgNames[c], ms2(med(wb.gaps)), ms2(med(wb.toHook)), hook, ms2(med(wb.hookToDecision)),
			ms2(med(wb.toRelay)), relay, ms2(med(wb.relayToRedeem)), ms2(med(wb.redeemToExit)), ms2(med(wb.after)))
	}
	for c := range nConfigs {
		b.Logf("%-14s median %6.1f ms a call over %d calls; round medians %s", cfgNames[c], m[c], len(f.gaps[c]), msList(f.roundMedians[c]))
	}
	for _, l := range f.log {
		b.Log(l)
	}
}
