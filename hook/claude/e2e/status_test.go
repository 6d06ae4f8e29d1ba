package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
)

// screen collects a terminal's output.
type screen struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// csi matches a terminal control sequence.
var csi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// text returns what was written, control sequences as spaces, runs of
// spaces as one.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(strings.Fields(csi.ReplaceAllString(s.b.String(), " ")), " ")
}

// In Claude Code's terminal view, a Bash call held for approval shows the
// hook's status message in the spinner (instead of "running PreToolUse
// hook") for as long as it waits.
func TestHeldCallShowsStatusMessage(t *testing.T) {
	w := newWorld(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatal("script (util-linux) is needed to run Claude Code on a terminal")
	}
	w.WriteConfig("policy:\n  rules:\n    - {name: ask-deploy, action: ask, reason: deploys need a person, command: [echo], args: [{seq: [deploy]}]}\n")
	w.StartService()
	w.Gatehouse("install", "--no-service")
	// A first start's dialogs (theme, this folder's trust, the API key)
	// answered already.
	key := "e2e-test-key-0123456789abcdefghij"
	state, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 5,
		"customApiKeyResponses": map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects":              map[string]any{w.Workspace: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}})
	must(t, os.WriteFile(filepath.Join(w.Home, ".claude.json"), state, 0o600))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: &fakeAPI{input: map[string]any{"command": "echo deploy now", "description": "e2e"}}}
	go srv.Serve(l)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-qfec", w.claude+" 'run the command'", "/dev/null")
	cmd.Dir = w.Workspace
	cmd.Env = append(w.Env(), "ANTHROPIC_BASE_URL=http://"+l.Addr().String(), "ANTHROPIC_API_KEY="+key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "TERM=xterm-256color")
	scr := &screen{}
	cmd.Stdout, cmd.Stderr = scr, scr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	defer stdin.Close()
	must(t, cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	a, ok := w.AwaitApproval(60 * time.Second)
	if !ok {
		t.FailNow()
	}
	for !strings.Contains(scr.text(), claude.HookStatusMessage) {
		if ctx.Err() != nil {
			t.Fatalf("the terminal never showed %q while the call was held:\n%s", claude.HookStatusMessage, scr.text())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(scr.text(), "running PreToolUse hook") {
		t.Errorf("the terminal showed the generic hook spinner:\n%s", scr.text())
	}
	w.AnswerOnTerminal("approve", a.ID)
}
