package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// A Bash call an ask rule holds waits inside Claude Code's hook while a
// person approves it from the CLI; then it runs in Gatehouse and the
// tool_result is its output, and the decision's record carries the answer.
func TestHeldCallApprovedFromCLI(t *testing.T) {
	w := newWorld(t)
	w.WriteConfig("policy:\n  rules:\n    - {name: ask-deploy, action: ask, reason: deploys need a person, command: [echo], args: [{seq: [deploy]}]}\n")
	w.StartService()
	w.Gatehouse("install", "--no-service")
	settings := w.sandboxSettings(false)

	answered := make(chan string, 1)
	go func() {
		a, _ := w.AwaitApproval(60 * time.Second)
		if a.Agent != "claude-code" || a.Surface != api.SurfaceAgentHook || a.Rule != "ask-deploy" || a.SessionID == "" || !strings.Contains(a.Command, "echo deploy now") {
			t.Errorf("approval request %+v", a)
		}
		answered <- w.AnswerOnTerminal("approve", a.ID)
	}()
	res, _ := w.runClaude(w.Workspace, settings, map[string]any{"command": "echo deploy now; echo done-$((6*7))", "description": "e2e"})
	contains(t, "tool_result", res.Content, "deploy now", "done-42")
	if res.IsError {
		t.Errorf("the approved call is an error result: %s", res.Content)
	}
	contains(t, "approve output", <-answered, "approved", "(once)")

	evs := w.Events()
	if len(evs) != 2 {
		t.Fatalf("want a decision and an execution, got %+v", evs)
	}
	dec, run := evs[0], evs[1]
	if dec.Decision != "allow" || dec.Approval == nil || dec.Approval.Answer != api.AnswerOnce || dec.Approval.By != api.ByCLI || dec.Approval.Rule != "ask-deploy" {
		t.Errorf("decision event %+v (approval %+v)", dec, dec.Approval)
	}
	if run.ParentID != dec.ID || run.Status != "completed" {
		t.Errorf("execution event %+v", run)
	}
}

// A session in a project outside every workspace root asks about it;
// trusted for claude-code, the directory (the top of its git repository)
// is trusted for that agent and the call runs there. Directories that may never be workspaces are
// refused without asking: /, $HOME, ~/.ssh, and a symlink to $HOME inside
// the trusted root.
func TestWorkspaceTrust(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	w.Gatehouse("install", "--no-service")
	settings := w.sandboxSettings(false)
	project := filepath.Join(w.Home, "work", "api")
	sub := filepath.Join(project, "cmd")
	must(t, os.MkdirAll(sub, 0o755))
	must(t, exec.Command("git", "init", "-q", project).Run())

	answered := make(chan api.Approval, 1)
	go func() {
		a, _ := w.AwaitApproval(60 * time.Second)
		w.AnswerOnTerminal("approve", a.ID, "--trust")
		answered <- a
	}()
	res, _ := w.runClaude(sub, settings, map[string]any{"command": "pwd; echo data > made.txt && echo wrote-here", "description": "e2e"})
	a := <-answered
	if a.Kind != api.ApprovalWorkspace || a.Workspace != project || a.Agent != "claude-code" || !strings.Contains(a.Question, "claude-code wants to work in ~/work/api, which is in no workspace root") || !slices.Contains(a.Answers, api.AnswerTrust) {
		t.Errorf("approval request %+v", a)
	}
	contains(t, "tool_result", res.Content, sub, "wrote-here")
	if _, err := os.Stat(filepath.Join(sub, "made.txt")); err != nil {
		t.Errorf("the trusted workspace is not writable: %v", err)
	}
	contains(t, "workspace list", w.Gatehouse("workspace", "list"), "trusted  "+project, "for claude-code only")
	evs := w.Events()
	if len(evs) != 2 || evs[0].Approval == nil || evs[0].Approval.Kind != api.ApprovalWorkspace || evs[0].Approval.Workspace != project {
		t.Errorf("events %+v", evs)
	}

	// Never a workspace, whatever is asked.
	must(t, os.Symlink(w.Home, filepath.Join(project, "homelink")))
	for _, dir := range []string{"/", w.Home, filepath.Join(w.Home, ".ssh"), filepath.Join(project, "homelink")} {
		res, _ := w.runClaude(dir, settings, map[string]any{"command": "echo ran-in-" + filepath.Base(dir), "description": "e2e"})
		contains(t, "tool_result from "+dir, res.Content, "Gatehouse denied this command (cwd_outside_workspace)", "cannot be trusted as a workspace")
		if strings.Contains(res.Content, "ran-in-") && !strings.Contains(res.Content, "echo ran-in-") {
			t.Errorf("the call from %s ran: %s", dir, res.Content)
		}
	}
	if as, _ := w.Client().Approvals(context.Background()); len(as) != 0 {
		t.Errorf("a refused directory asked: %+v", as)
	}
}

// While a held call waits, the hook says so where Claude Code shows a
// running hook's output (stream-json's hook_progress events, with
// --include-hook-events): the approval's id and how to answer, the line a
// held gatehouse exec prints (waitline.Line).
func TestHeldCallSaysItWaits(t *testing.T) {
	w := newWorld(t)
	w.WriteConfig("policy:\n  rules:\n    - {name: ask-deploy, action: ask, reason: deploys need a person, command: [echo], args: [{seq: [deploy]}]}\n")
	w.StartService()
	w.Gatehouse("install", "--no-service")
	settings := w.sandboxSettings(false)

	// The call is answered once Claude Code has passed on the hook's
	// line, so that the wait is as long as it takes to say so.
	said := &watchFor{want: []byte(`"hook_progress"`), also: []byte("gatehouse: waiting up to"), seen: make(chan struct{})}
	w.claudeOut = said
	held, answered := make(chan api.Approval, 1), make(chan struct{})
	go func() {
		defer close(answered)
		a, _ := w.AwaitApproval(60 * time.Second)
		held <- a
		select {
		case <-said.seen:
		case <-time.After(60 * time.Second):
			t.Error("Claude Code passed on no hook output while the call was held")
		}
		w.AnswerOnTerminal("approve", a.ID)
	}()
	fake := &fakeAPI{input: map[string]any{"command": "echo deploy now", "description": "e2e"}}
	out := w.converse(w.Workspace, settings, fake, "--output-format", "stream-json", "--verbose", "--include-hook-events")
	a := <-held
	<-answered
	res := fake.result(t)
	contains(t, "tool_result", res.Content, "deploy now")
	if strings.Contains(res.Content, "waiting up to") {
		t.Errorf("the hook's line reached the model: %s", res.Content)
	}

	var line string
	for _, l := range strings.Split(out, "\n") {
		var ev struct {
			Subtype   string `json:"subtype"`
			HookEvent string `json:"hook_event"`
			Stderr    string `json:"stderr"`
		}
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Subtype == "hook_progress" && ev.HookEvent == "PreToolUse" && ev.Stderr != "" {
			line = ev.Stderr
		}
	}
	contains(t, "the hook's output while held", line, "gatehouse: waiting up to", "for approval "+a.ID, `"echo deploy now"`, "ask-deploy", "gatehouse approve "+a.ID, "or the tray")
}

// watchFor closes seen once a line holding want and also was written.
type watchFor struct {
	want, also []byte
	seen       chan struct{}
	mu         sync.Mutex
	buf        []byte
	done       bool
}

func (w *watchFor) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := w.buf[:i]
		w.buf = w.buf[i+1:]
		if bytes.Contains(line, w.want) && bytes.Contains(line, w.also) {
			w.done = true
			close(w.seen)
			return len(p), nil
		}
	}
}
