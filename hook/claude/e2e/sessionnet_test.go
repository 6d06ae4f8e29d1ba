package e2e

// One network per Claude Code session. The executions of one session
// share a network namespace the service holds, so that a server one Bash
// call leaves running in the background (run_in_background: Claude Code
// keeps its relay, and so Gatehouse's execution, alive) answers the
// session's next calls on 127.0.0.1, and no other session's.
//
// What Claude Code 2.1.332 does with such a task, observed here: claude -p
// does not end while a background task runs (after its last answer it
// waits for the task, then sends the model the task's end and exits); on
// SIGTERM it ends the task's shell and so the relay, Gatehouse's execution
// ends killed, and the SessionEnd hook closes the session's network.
// Killed outright (SIGKILL), it leaves the relay running, and with it the
// execution (until its timeout or the service's end): the test's cleanup
// kills what it left, by pid.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A server started with run_in_background by one Bash call is fetched over
// 127.0.0.1 by the session's next call; a second claude -p session cannot
// reach it while it runs; both executions of the first session record its
// network. Ending the session (SIGTERM to claude, as a person's ^C) ends
// the relay, the execution (killed) and the session's network, and leaves
// no process behind.
func TestBackgroundServerAcrossCalls(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	settings := w.sandboxSettings(true)

	// A port free here, so that nothing of the host's is mistaken for
	// the server (the session's loopback is its own anyway).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	content := fmt.Sprintf("served-across-calls-%d", time.Now().UnixNano())
	site := filepath.Join(w.Workspace, "site")
	must(t, os.MkdirAll(site, 0o755))
	must(t, os.WriteFile(filepath.Join(site, "page.txt"), []byte(content+"\n"), 0o644))

	// fetch tries the server, tries times, 0.2 s apart (the first call's
	// server may still be starting), and says unreachable at last.
	fetch := func(tries int) string {
		return fmt.Sprintf("for i in $(seq 1 %d); do curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:%d/page.txt && exit 0; sleep 0.2; done; echo unreachable; exit 7", tries, port)
	}
	serve := fmt.Sprintf("cd site && exec /usr/bin/python3 -m http.server %d --bind 127.0.0.1", port)

	a := &fakeAPI{calls: []toolCall{
		{"Bash", map[string]any{"command": serve, "description": "serve the site", "run_in_background": true}},
		{"Bash", map[string]any{"command": fetch(150), "description": "fetch the page"}},
	}}
	run := w.startClaude(w.Workspace, settings, a)
	t.Cleanup(func() { killLeftovers(t, port) })
	t.Cleanup(run.kill)
	res := run.await(t, a, 2)
	contains(t, "the background call's tool_result", res[0].Content, "running in background")
	if res[1].IsError || !strings.Contains(res[1].Content, content) {
		t.Fatalf("the second call did not fetch the first call's server: %s\nexecutions:\n%s", outcome(res[1]), w.executions())
	}

	// The session's two decisions, oldest first: the server's, the
	// fetch's.
	var decs []api.Event
	for _, e := range w.Events() {
		if e.ParentID == "" && e.Surface == api.SurfaceAgentHook && e.ActionType == api.ActionShellExecute {
			decs = append(decs, e)
		}
	}
	if len(decs) != 2 || decs[0].SessionID == "" || decs[1].SessionID != decs[0].SessionID || !decs[0].Routed || !decs[1].Routed {
		t.Fatalf("want two routed decisions of one Claude Code session, got %+v", decs)
	}
	session := decs[0].SessionID
	network := api.NetworkSessionPrefix + session

	// The person sees what the session serves.
	ss, err := w.Client().Ports(context.Background())
	must(t, err)
	if i := slices.IndexFunc(ss, func(s api.SessionNetwork) bool { return s.SessionID == session }); i < 0 ||
		!slices.ContainsFunc(ss[i].Listening, func(p api.ListeningPort) bool { return p.Port == port }) {
		t.Errorf("gatehouse ports does not list %d listening in session %s: %+v", port, session, ss)
	}

	// Another claude -p session, while the server runs, has a loopback of
	// its own: its fetch finds nothing there.
	b := &fakeAPI{calls: []toolCall{{"Bash", map[string]any{"command": fetch(5), "description": "fetch from another session"}}}}
	outB := w.converse(w.Workspace, settings, b)
	resB := b.result(t)
	if !resB.IsError || !strings.Contains(resB.Content, "unreachable") || strings.Contains(resB.Content, content) {
		t.Errorf("another session's fetch: %s, want unreachable\nexecutions:\n%s", outcome(resB), w.executions())
	}
	var endB struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(outB), &endB); err != nil || endB.SessionID == "" || endB.SessionID == session {
		t.Errorf("the second claude's session id %q (%v), want one of its own (the first's is %s):\n%s", endB.SessionID, err, session, outB)
	}
	// The server still answered its own session then: through the
	// service, a call of the first session's id fetches it.
	contains(t, "a call of the first session after the other's", w.redeem(w.issue(fetch(150), session)), content)

	// The person ends the session.
	run.term(t)
	var left []string
	for i := 0; ; i++ {
		left = leftovers(port)
		ss, err := w.Client().Ports(context.Background())
		must(t, err)
		open := slices.ContainsFunc(ss, func(s api.SessionNetwork) bool { return s.SessionID == session })
		if len(left) == 0 && !open && w.execOf(decs[0].ID) != nil {
			break
		}
		if i == 600 {
			t.Fatalf("a minute after claude ended: processes left %q, session network open %v, server's execution %+v\nservice log:\n%s",
				left, open, w.execOf(decs[0].ID), w.ServeLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	server, fetched := w.execOf(decs[0].ID), w.execOf(decs[1].ID)
	if fetched == nil || fetched.Status != "completed" || fetched.ExitCode == nil || *fetched.ExitCode != 0 {
		t.Errorf("the fetch's execution: %+v", fetched)
	}
	if server.Status != "killed" {
		t.Errorf("the server's execution ended %q (%s), want killed: its relay ended with the session", server.Status, server.StatusReason)
	}
	for _, e := range []*api.Event{server, fetched} {
		if e != nil && (e.Network != network || e.SessionID != session) {
			t.Errorf("execution %s: network %q (%s), session %q; want %q", e.ID, e.Network, e.NetworkReason, e.SessionID, network)
		}
	}
	var other int
	for _, e := range w.Events() {
		if e.ParentID != "" && e.SessionID == endB.SessionID {
			other++
			if e.Network != api.NetworkSessionPrefix+endB.SessionID {
				t.Errorf("the other session's execution: network %q, want its own session's", e.Network)
			}
		}
	}
	if other != 1 {
		t.Errorf("%d executions of the other session recorded, want 1", other)
	}
}

// executions says how each execution recorded so far ended, for a
// failure's message.
func (w *world) executions() string {
	var b strings.Builder
	for _, e := range w.Events() {
		if e.ParentID != "" {
			code := "none"
			if e.ExitCode != nil {
				code = fmt.Sprint(*e.ExitCode)
			}
			fmt.Fprintf(&b, "  %s session %s: %s (%s) exit %s, network %q %s\n", e.ID, e.SessionID, e.Status, e.StatusReason, code, e.Network, e.NetworkReason)
		}
	}
	return b.String()
}

// execOf returns the execution event of decision id, nil when none is
// recorded yet.
func (w *world) execOf(id string) *api.Event {
	for _, e := range w.Events() {
		if e.ParentID == id {
			return &e
		}
	}
	return nil
}

// claudeRun is a claude -p started and not yet waited for.
type claudeRun struct {
	cmd  *exec.Cmd
	out  bytes.Buffer // claude's output, read once done is closed
	done chan struct{}
	err  error
}

// startClaude starts claude -p against api from cwd; the test ends it
// (term, or kill in its cleanup).
func (w *world) startClaude(cwd, settings string, api *fakeAPI) *claudeRun {
	w.t.Helper()
	r := &claudeRun{cmd: w.claudeCommand(context.Background(), cwd, settings, api), done: make(chan struct{})}
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	must(w.t, r.cmd.Start())
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	return r
}

// await returns api's first n tool_results once it has them; it fails the
// test when claude ends first, or after three minutes.
func (r *claudeRun) await(t *testing.T, api *fakeAPI, n int) []toolResult {
	t.Helper()
	for i := 0; api.results.Len() < n; i++ {
		select {
		case <-r.done:
			if api.results.Len() < n {
				t.Fatalf("claude ended (%v) with %d tool_results, want %d\n%s", r.err, api.results.Len(), n, r.out.String())
			}
		case <-time.After(100 * time.Millisecond):
		}
		if i == 1800 {
			t.Fatalf("claude made %d tool calls in three minutes, want %d", api.results.Len(), n)
		}
	}
	return api.results.All()[:n]
}

// term sends claude SIGTERM and waits a minute at most for it to end.
func (r *claudeRun) term(t *testing.T) {
	t.Helper()
	must(t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		r.kill()
		t.Fatalf("claude did not end a minute after SIGTERM\n%s", r.out.String())
	}
}

// kill ends claude if it still runs.
func (r *claudeRun) kill() {
	select {
	case <-r.done:
	default:
		r.cmd.Process.Kill()
		<-r.done
	}
}

// leftovers lists the processes of this test still running: relays of
// e2etest.HookBin, and servers on port.
func leftovers(port int) []string {
	var out []string
	server := fmt.Sprintf("http.server %d ", port)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		line := strings.Join(args, " ")
		if args[0] == e2etest.HookBin && len(args) > 1 && args[1] == "relay" || strings.Contains(line+" ", server) {
			out = append(out, e.Name()+": "+line)
		}
	}
	return out
}

// killLeftovers kills what leftovers finds, when the test failed before
// its session ended.
func killLeftovers(t *testing.T, port int) {
	for _, p := range leftovers(port) {
		var pid int
		if _, err := fmt.Sscanf(p, "%d:", &pid); err == nil {
			t.Logf("killing %s", p)
			if proc, err := os.FindProcess(pid); err == nil {
				proc.Kill()
			}
		}
	}
}
