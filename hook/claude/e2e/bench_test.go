package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/e2etest"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// The hook runs on every Bash call Claude Code makes: these measure it as
// a whole process (spawn, connect, decide, answer) against a running
// service, and a routed "true" (the hook process, then the relay process,
// through the sandbox) against bash -c true. Each reports the median in
// ms/median; targets: hook ≤ 10 ms, routed true ≤ 40 ms.
//
//	go test -run '^$' -bench . -benchtime 200x ./hook/claude/e2e

func benchWorld(b *testing.B) *world {
	sandboxtest.RequireBwrap(b)
	w := &world{World: e2etest.NewWorld(b)}
	w.StartService()
	return w
}

func hookInput(w *world, command string) []byte {
	in, _ := json.Marshal(map[string]any{
		"session_id": "bench", "cwd": w.Workspace, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "bench"},
		"tool_use_id": "toolu_bench",
	})
	return in
}

// runHook runs the hook process once and returns its answer.
func runHook(b *testing.B, w *world, input []byte) []byte {
	cmd := exec.Command(e2etest.HookBin, "hook", "claude") // as the settings name it
	cmd.Env = w.Env()
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("hook: %v", err)
	}
	return out
}

func median(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "ms/median")
	b.ReportMetric(float64(d[len(d)*9/10].Microseconds())/1000, "ms/p90")
}

// BenchmarkHook: a typical command, decided and routed (a ticket issued);
// the tickets expire unredeemed.
func BenchmarkHook(b *testing.B) {
	w := benchWorld(b)
	in := hookInput(w, "git status --short && go test ./... 2>&1 | tail -20")
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		out := runHook(b, w, in)
		d = append(d, time.Since(t0))
		if !bytes.Contains(out, []byte(`"permissionDecision":"allow"`)) {
			b.Fatalf("hook answered %s", out)
		}
	}
	median(b, d)
}

// BenchmarkRoutedTrue: hook process, then the relay process it wrote,
// running true in Gatehouse's sandbox.
func BenchmarkRoutedTrue(b *testing.B) {
	w := benchWorld(b)
	in := hookInput(w, "true")
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		var ans struct {
			HookSpecificOutput struct {
				UpdatedInput struct {
					Command string `json:"command"`
				} `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(runHook(b, w, in), &ans); err != nil {
			b.Fatal(err)
		}
		relay := exec.Command("/bin/bash", "-c", ans.HookSpecificOutput.UpdatedInput.Command)
		relay.Env = w.Env()
		if out, err := relay.CombinedOutput(); err != nil {
			b.Fatalf("relay: %v %s", err, out)
		}
		d = append(d, time.Since(t0))
	}
	median(b, d)
}

// BenchmarkBashTrue is the baseline: bash -c true, unsandboxed.
func BenchmarkBashTrue(b *testing.B) {
	d := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	median(b, d)
}
