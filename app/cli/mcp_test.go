package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// mcpWorld is one user with a home, a workspace and a configuration, whose
// MCP clients run gatehouse mcp (this test binary, as the scripts do).
type mcpWorld struct {
	t *testing.T
	// hookTool starts the server with --hook-tool.
	hookTool bool
	home     string
	runtime  string
	serve    *exec.Cmd
}

func newMCPWorld(t *testing.T, config string) *mcpWorld {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if sandboxtest.Required() {
			t.Fatal("REQUIRE_SANDBOX=1 but bubblewrap is not installed")
		}
		t.Skip("bubblewrap is not installed")
	}
	w := &mcpWorld{t: t, home: filepath.Join(sandboxtest.Dir(t), "home")}
	if err := os.MkdirAll(filepath.Join(w.home, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := os.MkdirTemp("/tmp", "ghmcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	w.runtime = rt
	dir := filepath.Join(w.home, ".config", "gatehouse")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *mcpWorld) env() []string {
	return []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + w.runtime, "LANG=C.UTF-8"}
}

// args are gatehouse mcp's arguments.
func (w *mcpWorld) args() []string {
	if w.hookTool {
		return []string{"mcp", "--hook-tool"}
	}
	return []string{"mcp"}
}

// connect starts gatehouse mcp as a client named name would.
func (w *mcpWorld) connect(name string, opts *mcp.ClientOptions) *mcp.ClientSession {
	w.t.Helper()
	return w.connectIn(name, w.home, "", opts)
}

// connectIn starts gatehouse mcp in dir, as a client named name offering
// roots (directories) would, on protocol version proto (empty: the latest).
func (w *mcpWorld) connectIn(name, dir, proto string, opts *mcp.ClientOptions, roots ...string) *mcp.ClientSession {
	w.t.Helper()
	exe, err := exec.LookPath("gatehouse")
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(exe, w.args()...)
	cmd.Env = w.env()
	cmd.Dir = dir
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	for _, r := range roots {
		//lint:ignore SA1019 the roots capability is what is tested
		c.AddRoots(&mcp.Root{URI: "file://" + r})
	}
	s, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { s.Close() })
	return s
}

// connectPipes starts gatehouse mcp on pipes of its own and returns the
// session and what closes the client's end, as a client that dies does.
func (w *mcpWorld) connectPipes(name string) (*mcp.ClientSession, func()) {
	w.t.Helper()
	exe, _ := exec.LookPath("gatehouse")
	cmd := exec.Command(exe, w.args()...)
	cmd.Env = w.env()
	cmd.Dir = w.home
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return s, func() { in.Close(); out.Close() }
}

func (w *mcpWorld) startService() {
	w.t.Helper()
	exe, _ := exec.LookPath("gatehouse")
	w.serve = exec.Command(exe, "serve")
	w.serve.Env = w.env()
	if err := w.serve.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { w.serve.Process.Signal(os.Interrupt); w.serve.Wait() })
	c := w.client()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if _, err := c.Status(context.Background()); err == nil {
			return
		}
	}
	w.t.Fatal("the service did not come up")
}

func (w *mcpWorld) client() *localapi.Client {
	return localapi.NewClient(filepath.Join(w.runtime, "gatehouse", "gatehouse.sock"))
}

// call calls shell__execute with args.
func call(t *testing.T, s *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, string, mcpOutput) {
	t.Helper()
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %v: %v", args, err)
	}
	var text strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	var out mcpOutput
	if r.StructuredContent != nil {
		b, _ := json.Marshal(r.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return r, text.String(), out
}

// The SDK's own client, over stdio: one tool with its constraints; a call
// returns the output and the figures; a non-zero exit is a result; a
// denial, a timeout and every bad argument say what happened, and bad
// arguments run nothing.
func TestMCPShellExecute(t *testing.T) {
	w := newMCPWorld(t, "exec:\n  env:\n    agent_settable: [FOO]\n")
	s := w.connect("Claude Desktop", nil)

	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The shell tool alone: Claude Code's hook tool is served only with
	// --hook-tool (mcp_hook_test.go).
	if len(tools.Tools) != 1 || tools.Tools[0].Name != ToolName {
		t.Fatalf("tools %+v", tools.Tools)
	}
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	for _, want := range []string{`"required":["command"]`, `"maxLength":65536`, `"maxProperties":32`, `"enum":["FOO"]`, `"additionalProperties":false`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema lacks %s: %s", want, schema)
		}
	}
	if d := tools.Tools[0].Description; !strings.Contains(d, "workspace roots are writable") || !strings.Contains(d, "no network") {
		t.Errorf("description %q", d)
	}

	r, text, out := call(t, s, map[string]any{"command": "echo hello $FOO; echo oops >&2; ls ~/.ssh 2>/dev/null || echo ssh-hidden", "env": map[string]any{"FOO": "bar"}})
	if r.IsError || !strings.Contains(text, "hello bar\n") || !strings.Contains(text, "stderr:\noops") || out.ExitCode == nil || *out.ExitCode != 0 || out.SandboxMode != "bubblewrap" || out.EventID == "" {
		t.Errorf("call: error %v, text %q, out %+v", r.IsError, text, out)
	}
	r, text, out = call(t, s, map[string]any{"command": "exit 3"})
	if r.IsError || out.ExitCode == nil || *out.ExitCode != 3 || !strings.Contains(text, "exit code 3") {
		t.Errorf("exit 3: error %v, text %q, out %+v", r.IsError, text, out)
	}
	r, text, _ = call(t, s, map[string]any{"command": "rm -rf ~"})
	if !r.IsError || !strings.Contains(text, "Gatehouse denied this command (policy_rule)") || !strings.Contains(text, "rm-root") {
		t.Errorf("denied: error %v, text %q", r.IsError, text)
	}
	r, _, out = call(t, s, map[string]any{"command": "sleep 30", "timeout_seconds": 1})
	if r.IsError || !out.TimedOut || out.TimeoutSeconds != 1 {
		t.Errorf("timeout: error %v, out %+v", r.IsError, out)
	}

	marker := filepath.Join(w.home, "src", "ran")
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "touch ran; : " + strings.Repeat("x", 64<<10)}, "command"},
		{map[string]any{"command": "touch ran\x00"}, "command"},
		{map[string]any{"command": "touch ran", "cwd": "/etc"}, "cwd_outside_workspace"},
		{map[string]any{"command": "touch ran", "env": map[string]any{"BAR": "x"}}, "env"},
		{map[string]any{"command": "touch ran", "timeout_seconds": "soon"}, "timeout_seconds"},
		{map[string]any{"command": "touch ran", "timeout_seconds": 0}, "timeout_seconds"},
		{map[string]any{"command": "touch ran", "timeout": 5}, "timeout"},
		{map[string]any{"cwd": "/tmp"}, "command"},
	} {
		r, text, _ := call(t, s, tc.args)
		if !r.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%v: error %v, text %q; want an error naming %s", tc.args, r.IsError, text, tc.want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a call with a bad argument ran")
	}

	// On the record with surface mcp and the client's name as the agent.
	evs := auditEvents(t, w)
	if len(evs) == 0 {
		t.Fatal("nothing on the record")
	}
	for _, e := range evs {
		if e.Surface != api.SurfaceMCP || e.Agent != "claude-desktop" {
			t.Errorf("event %s: surface %q agent %q", e.ID, e.Surface, e.Agent)
		}
	}
}

// auditEvents reads the world's audit trail.
func auditEvents(t *testing.T, w *mcpWorld) []api.Event {
	t.Helper()
	exe, _ := exec.LookPath("gatehouse")
	cmd := exec.Command(exe, "audit", "list", "--json", "--limit", "100")
	cmd.Env = w.env()
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("audit list: %v", err)
	}
	var evs []api.Event
	if err := json.Unmarshal(b, &evs); err != nil {
		var wrapped struct{ Events []api.Event }
		if json.Unmarshal(b, &wrapped) != nil {
			t.Fatalf("audit list: %v\n%s", err, b)
		}
		evs = wrapped.Events
	}
	return evs
}

// Cancelling a call kills its command, which is recorded killed.
func TestMCPCancel(t *testing.T) {
	w := newMCPWorld(t, "")
	s := w.connect("canceller", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"command": "touch started; sleep 60; touch finished"}})
		done <- err
	}()
	started := filepath.Join(w.home, "src", "started")
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the command did not start")
		}
	}
	cancel()
	<-done
	waitKilled(t, w, 1)

	// A client that goes away (its end of the pipe closes) has its
	// commands killed too.
	s, hangUp := w.connectPipes("leaver")
	go s.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"command": "touch started2; sleep 60; touch finished"}})
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(w.home, "src", "started2")); err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the second command did not start")
		}
	}
	hangUp()
	waitKilled(t, w, 2)
	if _, err := os.Stat(filepath.Join(w.home, "src", "finished")); err == nil {
		t.Error("a killed command finished")
	}
}

// waitKilled waits for n executions recorded killed.
func waitKilled(t *testing.T, w *mcpWorld, n int) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(50 * time.Millisecond) {
		k := 0
		for _, e := range auditEvents(t, w) {
			if e.Status == "killed" {
				k++
			}
		}
		if k >= n {
			return
		}
	}
	t.Fatalf("%d executions were not recorded killed", n)
}

// Through the service the results are the same; two clients with
// different names get their own egress allowlists; a held call sends
// progress while it waits and runs when answered.
func TestMCPThroughService(t *testing.T) {
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	port := l.Addr().(*net.TCPAddr).Port
	w := newMCPWorld(t, fmt.Sprintf("policy:\n  egress_allowlist_by_agent:\n    alpha: [\"127.0.0.1:%d\"]\n  rules:\n    - {name: ask-held, action: ask, command: [echo], args: [{seq: [held]}]}\n", port))
	w.startService()

	progress := make(chan string, 8)
	alpha := w.connect("alpha", &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Message
	}})
	beta := w.connect("beta", nil)
	// NO_PROXY names the sandbox's own loopback: a service on the host's
	// loopback, allowlisted as its literal, is reached through the proxy
	// by naming it (--noproxy '').
	curl := map[string]any{"command": fmt.Sprintf("curl -sS --noproxy '' --max-time 10 http://127.0.0.1:%d/ 2>&1; echo", port)}
	if _, text, _ := call(t, alpha, curl); !strings.Contains(text, "reached") {
		t.Errorf("alpha: %q; want its allowlist to let it through", text)
	}
	if _, text, _ := call(t, beta, curl); strings.Contains(text, "reached") {
		t.Errorf("beta: %q; want no egress", text)
	}
	_, text, out := call(t, alpha, map[string]any{"command": "echo via service"})
	if text != "via service\n" || out.SandboxMode != "bubblewrap" {
		t.Errorf("via service: %q %+v", text, out)
	}
	evs, err := w.client().Events(context.Background(), 10)
	if err != nil || len(evs) == 0 || evs[0].Surface != api.SurfaceMCP || evs[0].Agent != "alpha" || evs[0].ID != out.EventID {
		t.Errorf("service events %+v %v", evs, err)
	}

	// Held: progress while it waits, then the answer runs it.
	type res struct {
		text string
		err  bool
	}
	got := make(chan res, 1)
	go func() {
		p := &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"command": "echo held ok"}}
		p.SetProgressToken("hold-1")
		r, err := alpha.CallTool(context.Background(), p)
		if err != nil {
			got <- res{err.Error(), true}
			return
		}
		got <- res{r.Content[0].(*mcp.TextContent).Text, r.IsError}
	}()
	var msg string
	select {
	case msg = <-progress:
	case <-time.After(20 * time.Second):
		t.Fatal("no progress while the call waited")
	}
	as, err := w.client().Approvals(context.Background())
	if err != nil || len(as) != 1 || !strings.Contains(msg, "waiting up to") || !strings.Contains(msg, as[0].ID) || as[0].Surface != api.SurfaceMCP || as[0].Agent != "alpha" {
		t.Fatalf("progress %q, approvals %+v %v", msg, as, err)
	}
	if _, err := w.client().Answer(context.Background(), api.AnswerRequest{ID: as[0].ID, Answer: api.AnswerOnce, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err || r.text != "held ok\n" {
		t.Errorf("held call: %+v", r)
	}
}

// With exec.enabled false there is no tool.
// A call that names no directory runs in the client's first root inside a
// workspace root, else in the directory gatehouse mcp started in when it
// is inside one, else in exec.default_cwd; a relative one from there. The
// description lists every root in force, trusted ones included.
func TestMCPDefaultCwd(t *testing.T) {
	w := newMCPWorld(t, "policy:\n  workspace_roots: [~/src, ~/work/api, ~/gone]\n")
	for _, d := range []string{"src/demo/sub", "work/api/pkg", "work/web", "work/team", "outside"} {
		if err := os.MkdirAll(filepath.Join(w.home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gatehouse := func(args ...string) {
		exe, _ := exec.LookPath("gatehouse")
		cmd := exec.Command(exe, args...)
		cmd.Env = w.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gatehouse %v: %v\n%s", args, err, out)
		}
	}
	gatehouse("workspace", "add", filepath.Join(w.home, "work", "web"))
	team := trust.Open(filepath.Join(w.home, ".local", "state", "gatehouse", trust.FileName))
	if _, err := team.AddFor(filepath.Join(w.home, "work", "team"), "someone-else", "approval", trust.GuardFor(nil, w.home, nil)); err != nil {
		t.Fatal(err)
	}
	pwd := func(s *mcp.ClientSession, args map[string]any) string {
		t.Helper()
		r, text, out := call(t, s, args)
		if r.IsError || out.ExitCode == nil || *out.ExitCode != 0 {
			t.Fatalf("%v: error %v, text %q", args, r.IsError, text)
		}
		return strings.TrimSpace(out.Stdout)
	}
	home, _ := filepath.EvalSymlinks(w.home)

	// Started in a workspace subdirectory, no client roots: there.
	s := w.connectIn("started", filepath.Join(w.home, "src", "demo", "sub"), "", nil)
	if got := pwd(s, map[string]any{"command": "touch here; pwd"}); got != filepath.Join(home, "src/demo/sub") {
		t.Errorf("started in src/demo/sub: ran in %q", got)
	}
	if _, err := os.Stat(filepath.Join(w.home, "src/demo/sub/here")); err != nil {
		t.Errorf("the file is not where the call ran: %v", err)
	}
	if got := pwd(s, map[string]any{"command": "pwd", "cwd": ".."}); got != filepath.Join(home, "src/demo") {
		t.Errorf("cwd ..: ran in %q", got)
	}
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := tools.Tools[0].Description
	for _, want := range []string{
		filepath.Join(w.home, "src") + ", ",
		filepath.Join(w.home, "work", "api") + ", ",
		filepath.Join(w.home, "work", "web"),
		filepath.Join(w.home, "work", "team") + " (for someone-else only)",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q: %q", want, d)
		}
	}
	if strings.Contains(d, "gone") {
		t.Errorf("description lists a root not in force: %q", d)
	}

	// The client's roots: the first inside a workspace root, over the
	// directory gatehouse mcp started in; a trusted root counts.
	// The roots arrive inside the call on the latest protocol, by a
	// request of the server's own on earlier ones.
	for _, proto := range []string{"", "2025-06-18"} {
		s = w.connectIn("rooted", filepath.Join(w.home, "src", "demo"), proto, nil,
			filepath.Join(w.home, "outside"), filepath.Join(w.home, "work", "api", "pkg"), filepath.Join(w.home, "work", "web"))
		if got := pwd(s, map[string]any{"command": "touch made" + proto + "; pwd"}); got != filepath.Join(home, "work/api/pkg") {
			t.Errorf("client roots (protocol %q): ran in %q", proto, got)
		}
		if _, err := os.Stat(filepath.Join(w.home, "work/api/pkg/made"+proto)); err != nil {
			t.Errorf("the file is not in the client's root (protocol %q): %v", proto, err)
		}
		if got := pwd(s, map[string]any{"command": "pwd"}); got != filepath.Join(home, "work/api/pkg") {
			t.Errorf("client roots, second call (protocol %q): ran in %q", proto, got)
		}
	}
	s = w.connectIn("rooted", w.home, "", nil, filepath.Join(w.home, "outside"), filepath.Join(w.home, "work", "web"))
	if got := pwd(s, map[string]any{"command": "pwd"}); got != filepath.Join(home, "work/web") {
		t.Errorf("trusted client root: ran in %q", got)
	}
	// A root trusted for another agent is not this client's.
	s = w.connectIn("rooted", w.home, "", nil, filepath.Join(w.home, "work", "team"))
	if got := pwd(s, map[string]any{"command": "pwd"}); got != filepath.Join(home, "src") {
		t.Errorf("root trusted for another agent: ran in %q", got)
	}

	// Started outside every root, no client roots: exec.default_cwd.
	s = w.connectIn("plain", filepath.Join(w.home, "outside"), "", nil)
	if got := pwd(s, map[string]any{"command": "pwd"}); got != filepath.Join(home, "src") {
		t.Errorf("started outside: ran in %q", got)
	}
}

// With exec.enabled false there is no shell tool; Claude Code's hook tool
// stays where the server serves it, as gatehouse hook claude does.
func TestMCPDisabled(t *testing.T) {
	w := newMCPWorld(t, "exec:\n  enabled: false\n")
	tools, err := w.connect("x", nil).ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 0 {
		t.Errorf("tools %+v %v", tools, err)
	}
	w.hookTool = true
	tools, err = w.connect("x", nil).ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != claude.MCPHookTool {
		t.Errorf("tools with --hook-tool %+v %v", tools, err)
	}
}

func TestAgentName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Claude Desktop": "claude-desktop", "cursor-vscode": "cursor", "Cursor": "cursor", "Codex CLI/1.0": "codex-cli-1-0", "codex-mcp-client": "codex",
		"gemini-cli-mcp-client": "gemini-cli", "gemini-cli-mcp-client-gatehouse": "gemini-cli",
		"": "mcp-client", "!!!": "mcp-client", "gemini_cli": "gemini_cli", strings.Repeat("a", 80): strings.Repeat("a", 64),
	} {
		if got := agentName(in); got != want {
			t.Errorf("agentName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The argument decoding never panics, and whatever it accepts it accepts
// whole: a command, and a timeout from 1.
func FuzzMCPArgs(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{"command":"ls","timeout_seconds":5,"env":{"A":"b"},"cwd":"x","stdin":"y"}`,
		`{"command":1}`, `{"timeout_seconds":1e99,"command":""}`, `null`, `[]`, `{"command":"a"} x`, `{"env":{"A":1},"command":"a"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		req, err := decodeMCPArgs(json.RawMessage(s))
		if err != nil {
			if _, ok := err.(*argError); !ok {
				t.Fatalf("%q: error %T %v, want an argError", s, err, err)
			}
			return
		}
		if req.TimeoutSeconds < 0 {
			t.Fatalf("%q: timeout %d", s, req.TimeoutSeconds)
		}
	})
}
