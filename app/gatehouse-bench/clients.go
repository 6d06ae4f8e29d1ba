package main

// The thin clients against a running service: the hook process (spawn →
// decision JSON) and the relay of a routed true, each against an empty
// static Go program's start measured in the same run, and the service's
// own share of each (the same call made from this process, whose start is
// paid already), so that the client's start and the service's work show
// apart.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/hook/relay"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// clientWorld is one scratch user with a running service.
type clientWorld struct {
	gh       string // the gatehouse binary, which runs the service
	home, ws string
	runtime  string
	env      []string
	serve    *exec.Cmd
	serveLog bytes.Buffer
}

func (w *clientWorld) socket() string { return filepath.Join(w.runtime, "gatehouse", "gatehouse.sock") }
func (w *clientWorld) relayDir() string {
	return filepath.Join(w.home, ".local", "state", "gatehouse", "relay")
}

// startClientWorld makes a home under dir and starts gatehouse serve there.
func startClientWorld(gh, dir string) (*clientWorld, error) {
	return startWorld(gh, dir, "")
}

// startWorld is startClientWorld with config as the user's configuration
// file ("" for none).
func startWorld(gh, dir, config string) (*clientWorld, error) {
	w := &clientWorld{gh: gh, home: filepath.Join(dir, "home")}
	w.ws = filepath.Join(w.home, "src", "proj")
	if err := os.MkdirAll(w.ws, 0o755); err != nil {
		return nil, err
	}
	if config != "" {
		cdir := filepath.Join(w.home, ".config", "gatehouse")
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(cdir, "config.yaml"), []byte(config), 0o644); err != nil {
			return nil, err
		}
	}
	// The socket path must be short: its own directory under /tmp.
	rt, err := os.MkdirTemp("/tmp", "ghb")
	if err != nil {
		return nil, err
	}
	w.runtime = rt
	w.env = []string{
		"HOME=" + w.home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_RUNTIME_DIR=" + w.runtime,
		"LANG=C.UTF-8",
	}
	w.serve = exec.Command(gh, "serve")
	w.serve.Env = w.env
	w.serve.Stdout, w.serve.Stderr = &w.serveLog, &w.serveLog
	if err := w.serve.Start(); err != nil {
		return nil, err
	}
	c := localapi.NewClient(w.socket())
	for i := 0; ; i++ {
		if _, err := c.Status(context.Background()); err == nil {
			return w, nil
		}
		if i == 400 {
			w.stop()
			return nil, fmt.Errorf("the service did not come up:\n%s", w.serveLog.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (w *clientWorld) stop() {
	if w.serve != nil && w.serve.Process != nil {
		w.serve.Process.Signal(os.Interrupt)
		w.serve.Wait()
	}
	os.RemoveAll(w.runtime)
}

func (w *clientWorld) hookInput(command string) []byte {
	in, _ := json.Marshal(map[string]any{
		"session_id": "bench", "cwd": w.ws, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "bench"},
		"tool_use_id": "toolu_bench",
	})
	return in
}

// runHook runs the hook process once and returns the ticket of the
// rewritten command.
func (w *clientWorld) runHook(bin string, in []byte) (string, error) {
	cmd := exec.Command(bin, "hook", "claude")
	cmd.Env, cmd.Dir = w.env, w.ws
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hook: %v", err)
	}
	return ticketOf(out)
}

// ticketOf is the ticket at the end of a routed answer's command.
func ticketOf(out []byte) (string, error) {
	var ans struct {
		HookSpecificOutput struct {
			PermissionDecision string `json:"permissionDecision"`
			UpdatedInput       struct {
				Command string `json:"command"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		return "", fmt.Errorf("hook answered %q: %v", out, err)
	}
	f := strings.Fields(ans.HookSpecificOutput.UpdatedInput.Command)
	if ans.HookSpecificOutput.PermissionDecision != "allow" || len(f) < 2 || f[len(f)-2] != "relay" {
		return "", fmt.Errorf("hook did not route: %s", out)
	}
	return f[len(f)-1], nil
}

// emptyProgram builds an empty static Go program in dir.
func emptyProgram(dir string) (string, error) {
	src := filepath.Join(dir, "empty.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "empty")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the empty program: %v\n%s", err, out)
	}
	return bin, nil
}

// runClients measures the clients: gh is the gatehouse binary (its
// 'hook claude' and 'relay' commands), small the gatehouse-hook program
// ("" when there is none).
func runClients(gh, small string, n int) error {
	dir, empty, cleanup, err := scratch("gatehouse-bench-clients-")
	if err != nil {
		return err
	}
	defer cleanup()
	w, err := startClientWorld(gh, dir)
	if err != nil {
		return err
	}
	defer w.stop()
	in := w.hookInput("true")
	c := localapi.NewClient(w.socket())
	decide := api.DecideRequest{
		Request: api.ExecRequest{Command: "true", Cwd: w.ws, Agent: "claude-code", Surface: api.SurfaceAgentHook, SessionID: "bench"},
		Route:   true,
	}
	ctx := context.Background()

	type client struct{ name, bin string }
	clients := []client{{"gatehouse", gh}}
	if small != "" {
		clients = append(clients, client{"gatehouse-hook", small})
	}
	type measurement struct {
		name string
		run  func() error
		d    []time.Duration
	}
	cases := []*measurement{{name: "empty static Go program", run: func() error { return exec.Command(empty).Run() }}}
	var ticket string
	for _, cl := range clients {
		cases = append(cases,
			&measurement{name: "hook process, " + cl.name, run: func() (err error) {
				ticket, err = w.runHook(cl.bin, in)
				return err
			}},
			// The relay redeems the ticket the hook before it was given
			// (issued outside the time measured: the hook runs first).
			&measurement{name: "relay of routed true, " + cl.name, run: func() error {
				cmd := exec.Command(cl.bin, "relay", ticket)
				cmd.Env, cmd.Dir = w.env, w.ws
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("relay: %v: %s", err, stderr.String())
				}
				return nil
			}})
	}
	// The service's own share: the same calls made from this process, whose
	// start is paid already.
	cases = append(cases,
		&measurement{name: "service: decide (client in process)", run: func() error {
			resp, err := c.Decide(ctx, decide)
			if err == nil && resp.Ticket == "" {
				err = fmt.Errorf("the service did not route true: %+v", resp)
			}
			if err == nil {
				ticket = resp.Ticket
			}
			return err
		}},
		&measurement{name: "service: redeem true (relay in process)", run: func() error {
			if st := relay.Run(ctx, w.relayDir(), ticket, io.Discard, io.Discard); st != 0 {
				return fmt.Errorf("in-process relay of true: exit %d", st)
			}
			return nil
		}})
	for i := 0; i < n; i++ {
		// Interleaved, so that drift hits all alike.
		for _, m := range cases {
			t0 := time.Now()
			if err := m.run(); err != nil {
				return fmt.Errorf("%s: %v", m.name, err)
			}
			m.d = append(m.d, time.Since(t0))
			// The warm pool refills after a command; give it the time a
			// model takes between two calls.
			time.Sleep(40 * time.Millisecond)
		}
	}
	med := map[string]time.Duration{}
	fmt.Printf("clients against a running service, %d runs each (median, min, max):\n", n)
	for _, m := range cases {
		med[m.name] = median(m.d)
		fmt.Printf("  %-42s %8.2f ms  (%.2f .. %.2f)\n", m.name, ms(med[m.name]), ms(minOf(m.d)), ms(maxOf(m.d)))
	}
	e := med[cases[0].name]
	dec, red := med["service: decide (client in process)"], med["service: redeem true (relay in process)"]
	for _, cl := range clients {
		h, r := med["hook process, "+cl.name], med["relay of routed true, "+cl.name]
		fmt.Printf("  %s: hook / empty program %.2fx, relay of true / empty program %.2fx (targets <= 2.0x)\n", cl.name, float64(h)/float64(e), float64(r)/float64(e))
		fmt.Printf("  %s: hook = client %.2f ms + service's decision %.2f ms; relay = client %.2f ms + service's redemption %.2f ms\n",
			cl.name, ms(h-dec), ms(dec), ms(r-red), ms(red))
	}
	return nil
}
