package cli

// gatehouse mcp: the governed shell as one MCP tool, shell__execute, over
// stdio (github.com/modelcontextprotocol/go-sdk). A call runs through the
// user service when one runs and in-process otherwise, the same pipeline
// either way (docs/mcp.md).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/hook/codex"
	"github.com/gatehouse-dev/gatehouse/hook/cursor"
	"github.com/gatehouse-dev/gatehouse/hook/gemini"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/shellclient"
)

var mcpCmd = &command{name: "mcp",
	summary: "serve the governed shell to MCP clients over stdio (tool shell__execute)",
	usage: `usage: gatehouse mcp [--config FILE]

Serves the Model Context Protocol on stdin and stdout with one tool,
shell__execute: every call is analysed, decided and run in the sandbox
through the running service (in this process when none runs), and put on
the record with surface mcp and the client's name as the agent. A call
that names no cwd runs in the client's first root (MCP roots) inside a
workspace root, else in the directory gatehouse mcp was started in when it
is inside one, else in exec.default_cwd. Register it
with 'gatehouse install --mcp' (Claude Code), 'gatehouse install --agent
cursor' (Cursor, whose calls are recorded as agent cursor) or in another
client's MCP configuration (docs/mcp.md).`,
	flags: runMCP,
}

// ToolName is the one tool gatehouse mcp serves.
const ToolName = "shell__execute"

func runMCP(fl *flag.FlagSet) runFunc {
	configFile := fl.String("config", "", "")
	hookTool := fl.Bool("hook-tool", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("mcp: unexpected argument %q", args[0])
		}
		s, err := newMCPServer(env, *configFile, *hookTool)
		if err != nil {
			return err
		}
		defer s.close()
		in, _ := env.Stdin.(io.ReadCloser)
		out, _ := env.Stdout.(io.WriteCloser)
		if in == nil || out == nil {
			return errors.New("mcp: stdin and stdout must be the client's pipes")
		}
		// The client closing the pipe, or a signal, ends the session: the
		// calls in flight are then cancelled, their commands killed.
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		ended, endCalls := context.WithCancel(ctx)
		s.ended = ended
		err = s.srv.Run(ctx, &mcp.IOTransport{Reader: eofReader{in, endCalls}, Writer: out})
		endCalls()
		if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled)) {
			return nil // the client went away
		}
		return err
	}
}

// eofReader calls end when its reader ends: the client closed the pipe,
// and the calls it made are over. (The server waits for its handlers
// before it returns, so the end cannot wait for it.)
type eofReader struct {
	io.ReadCloser
	end func()
}

func (r eofReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil {
		r.end()
	}
	return n, err
}

// mcpServer is one gatehouse mcp process: the MCP server, and the
// in-process pipeline it falls back on when no service runs.
type mcpServer struct {
	env        *Env
	configFile string
	cfg        *policy.Config
	srv        *mcp.Server
	calls      sync.WaitGroup  // calls in flight
	ended      context.Context // done when the session is over
	startDir   string          // the directory gatehouse mcp was started in
	// session is this connection's session id when the transport has
	// none (stdio: one process, one connection): its calls share a
	// network, which ends with it.
	session string
	agents  sync.Map // the agents its calls named (ended with it)

	// clientRoots are the client's roots (MCP roots capability) as it
	// last listed them, while gen is rootsGen's value then: the client
	// saying they changed moves rootsGen on (without a lock: that
	// notification may arrive while a listing waits for its answer).
	clientRoots struct {
		sync.Mutex
		known bool
		gen   int64
		dirs  []string
	}
	rootsGen atomic.Int64

	// shell runs the calls: through the service, else in this process.
	shell *shellclient.Client
}

// newMCPServer makes the server; hookTool adds Claude Code's hook as a
// tool (mcp_hook.go), served only where the mcp_tool hook's configuration
// starts the server with --hook-tool: an agent's ordinary registration
// (install --mcp) never lists it to a model.
func newMCPServer(env *Env, configFile string, hookTool bool) (*mcpServer, error) {
	loaded, _, err := loadConfig(env, configFile)
	if err != nil {
		return nil, err
	}
	shell, err := shellClient(env, configFile, false, nil)
	if err != nil {
		return nil, err
	}
	s := &mcpServer{env: env, configFile: configFile, cfg: &loaded.Config, shell: shell}
	s.startDir, _ = os.Getwd()
	s.session = "mcp-" + pipeline.NewID()[:16]
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "gatehouse", Title: "Gatehouse governed shell", Version: Version},
		//lint:ignore SA1019 the roots capability is how an MCP client names its directories
		&mcp.ServerOptions{RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { s.rootsGen.Add(1) }})
	if s.cfg.Exec.Enabled {
		s.srv.AddTool(mcpTool(s.cfg, s.rootsInForce()), s.call)
	}
	if hookTool {
		s.srv.AddTool(claudeHookTool(), s.hook) // mcp_hook.go
	}
	return s, nil
}

// An inForceRoot is a workspace root a command may write in now: a
// policy root, or a trusted directory (for agents alone when it names
// them), with the path it resolves to.
type inForceRoot struct {
	path, real string
	agents     []string
}

// rootsInForce are the workspace roots in force now, as gatehouse
// workspace list shows them: the policy's, then the trusted ones, each
// left out when it is not in force.
func (s *mcpServer) rootsInForce() []inForceRoot {
	l, opts, err := loadConfig(s.env, s.configFile)
	if err != nil {
		return nil
	}
	ws, err := workspaces(s.env, l, opts)
	if err != nil {
		return nil
	}
	var roots []inForceRoot
	for _, w := range ws {
		if w.Problem != "" {
			continue
		}
		real, err := filepath.EvalSymlinks(w.Path)
		if err != nil {
			continue
		}
		roots = append(roots, inForceRoot{path: w.Path, real: real, agents: w.Agents})
	}
	return roots
}

// inRoot returns dir resolved when it lies in one of the roots in force
// for agent, else "".
func inRoot(dir string, roots []inForceRoot, agent string) string {
	if dir == "" {
		return ""
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	for _, r := range roots {
		if (len(r.agents) == 0 || slices.Contains(r.agents, agent)) && sandbox.Within(real, r.real) {
			return real
		}
	}
	return ""
}

// defaultCwd is where a call that names no directory runs: the client's
// first root (dirs) that lies in a workspace root; else the directory
// gatehouse mcp was started in, when it lies in one; else ""
// (exec.default_cwd).
func (s *mcpServer) defaultCwd(dirs []string, agent string) string {
	roots := s.rootsInForce()
	for _, d := range dirs {
		if real := inRoot(d, roots, agent); real != "" {
			return real
		}
	}
	return inRoot(s.startDir, roots, agent)
}

// rootsInput names the client's roots among a call's input requests.
const rootsInput = "gatehouse-roots"

// clientRootDirs returns the client's roots (file URIs, as paths) when it
// offers roots: as it last listed them, or asked now. A client on a
// protocol that carries server requests inside the call (2026-07-28 on)
// is asked by the call's result: ask is then true, and the call returns
// that request and is made again with the answer.
func (s *mcpServer) clientRootDirs(ctx context.Context, req *mcp.CallToolRequest) (dirs []string, ask bool) {
	ss := req.Session
	p := ss.InitializeParams()
	//lint:ignore SA1019 the roots capability is how a client names its directories
	if p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return nil, false
	}
	s.clientRoots.Lock()
	defer s.clientRoots.Unlock()
	gen := s.rootsGen.Load()
	//lint:ignore SA1019 the roots capability is how an MCP client names its directories
	if r, ok := req.Params.InputResponses[rootsInput].(*mcp.ListRootsResult); ok {
		s.clientRoots.known, s.clientRoots.gen, s.clientRoots.dirs = true, gen, rootDirs(r)
		return s.clientRoots.dirs, false
	}
	if s.clientRoots.known && s.clientRoots.gen == gen {
		return s.clientRoots.dirs, false
	}
	if p.ProtocolVersion >= "2026-07-28" {
		return nil, true
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	//lint:ignore SA1019 the roots capability is how a client names its directories
	r, err := ss.ListRoots(ctx, nil)
	if err != nil {
		return nil, false // asked again at the next call
	}
	s.clientRoots.known, s.clientRoots.gen, s.clientRoots.dirs = true, gen, rootDirs(r)
	return s.clientRoots.dirs, false
}

// rootDirs are the directories of the file roots in r.
//
//lint:ignore SA1019 the roots capability is how an MCP client names its directories
func rootDirs(r *mcp.ListRootsResult) []string {
	var dirs []string
	for _, root := range r.Roots {
		u, err := url.Parse(root.URI)
		if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) {
			continue
		}
		dirs = append(dirs, filepath.Clean(u.Path))
	}
	return dirs
}

// close waits for the calls in flight — a client that went away has its
// commands killed, and they must reach the record — then closes the
// audit trail.
func (s *mcpServer) close() {
	done := make(chan struct{})
	go func() { s.calls.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
	s.agents.Range(func(agent, _ any) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.shell.EndSession(ctx, agent.(string), s.session)
		return true
	})
	s.shell.Close()
}

// mcpArgs are shell__execute's arguments (DESIGN §4).
type mcpArgs struct {
	Command        *string           `json:"command"`
	Cwd            string            `json:"cwd,omitempty"`
	TimeoutSeconds json.RawMessage   `json:"timeout_seconds,omitempty"`
	Stdin          string            `json:"stdin,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
}

// An argError is a bad argument of the tool, named.
type argError struct{ arg, msg string }

func (e *argError) Error() string { return "argument " + e.arg + ": " + e.msg }

// decodeMCPArgs reads the tool's arguments strictly: unknown arguments,
// wrong types and a missing command are errors naming the argument. The
// pipeline checks the values (checkArgs) as for every surface.
func decodeMCPArgs(raw json.RawMessage) (api.ExecRequest, error) {
	var req api.ExecRequest
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return req, &argError{"command", "missing; shell__execute needs the command to run"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var a mcpArgs
	if err := dec.Decode(&a); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case errors.As(err, &ute) && ute.Field != "":
			return req, &argError{ute.Field, fmt.Sprintf("want %s, got a JSON %s", jsonKind(ute.Type.Kind().String()), ute.Value)}
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return req, &argError{name, "not an argument of shell__execute; it takes command, cwd, timeout_seconds, stdin and env"}
		}
		return req, &argError{"arguments", "not a JSON object of shell__execute's arguments: " + err.Error()}
	}
	if dec.More() {
		return req, &argError{"arguments", "data follows the JSON object"}
	}
	if a.Command == nil {
		return req, &argError{"command", "missing; shell__execute needs the command to run"}
	}
	req.Command, req.Cwd, req.Stdin, req.Env = *a.Command, a.Cwd, a.Stdin, a.Env
	if t := bytes.TrimSpace(a.TimeoutSeconds); len(t) > 0 && string(t) != "null" {
		n, err := strconv.ParseInt(string(t), 10, 32)
		if err != nil || n < 1 {
			return req, &argError{"timeout_seconds", fmt.Sprintf("%s is not allowed; use a whole number of seconds from 1", analysis.Abbrev(string(t), 40))}
		}
		req.TimeoutSeconds = int(n)
	}
	return req, nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string", "ptr":
		return "a string"
	case "map":
		return "an object of strings"
	}
	return goKind
}

// agentName is an MCP client's name as policy names an agent: the
// agent's own name for a client clientAgents knows, else lower case,
// [a-z0-9_-], at most 64 characters.
func agentName(client string) string {
	if a, ok := clientAgents[client]; ok {
		return a
	}
	// Gemini CLI names its MCP client after the server it talks to
	// (gemini-cli-mcp-client-SERVER in later versions).
	if strings.HasPrefix(client, geminiMCPClient) {
		return gemini.Agent
	}
	s := strings.ToLower(client)
	s = nonAgent().ReplaceAllString(s, "-")
	s = strings.Trim(s, "-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	if s == "" {
		return "mcp-client"
	}
	return s
}

var nonAgent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9_-]+`) })

// clientAgents are the MCP clients whose clientInfo name is not the name
// their hook puts on the record: Cursor's MCP client says cursor-vscode,
// Codex's codex-mcp-client (openai/codex, codex-rs rmcp client's
// Implementation), Gemini CLI's gemini-cli-mcp-client.
var clientAgents = map[string]string{cursor.ClientName: cursor.Agent, "codex-mcp-client": codex.Agent, geminiMCPClient: gemini.Agent}

const geminiMCPClient = "gemini-cli-mcp-client"

// mcpOutput is the tool's structured result. It carries the output too:
// a client that shows the model the structured result in place of the
// text (Claude Code does) must not lose it.
type mcpOutput struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr,omitempty"`
	// Error says why nothing ran (or it could not start).
	Error          string `json:"error,omitempty"`
	ExitCode       *int   `json:"exit_code"`
	DurationMS     int64  `json:"duration_ms"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	TimedOut       bool   `json:"timed_out"`
	Truncated      bool   `json:"truncated"`
	SandboxMode    string `json:"sandbox_mode"`
	RedactionCount int    `json:"redaction_count"`
	EventID        string `json:"event_id"`
}

// call handles tools/call.
func (s *mcpServer) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.calls.Add(1)
	defer s.calls.Done()
	if s.ended != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.ended, cancel)()
	}
	x, err := decodeMCPArgs(req.Params.Arguments)
	if err != nil {
		return toolError(err.Error()), nil
	}
	x.Surface = api.SurfaceMCP
	x.Agent = "mcp-client"
	if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
		x.Agent = agentName(p.ClientInfo.Name)
	}
	x.SessionID = req.Session.ID()
	if x.SessionID == "" {
		x.SessionID = s.session
		s.agents.Store(x.Agent, true)
	}
	// A call that names no directory, or a relative one, runs in (or
	// from) the session's directory when there is one in a workspace root.
	if x.Cwd == "" || !filepath.IsAbs(x.Cwd) && x.Cwd != "~" && !strings.HasPrefix(x.Cwd, "~/") {
		dirs, ask := s.clientRootDirs(ctx, req)
		if ask {
			//lint:ignore SA1019 the roots capability is how an MCP client names its directories
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{rootsInput: &mcp.ListRootsParams{}}}, nil
		}
		if def := s.defaultCwd(dirs, x.Agent); def != "" {
			x.Cwd = filepath.Join(def, x.Cwd)
		}
	}
	progress := s.progress(ctx, req)
	end := s.run(ctx, x, progress)
	return toolResult(end), nil
}

// progress returns what tells the client a held call waits: a progress
// notification carrying the waiting line, when the call asked for
// progress.
func (s *mcpServer) progress(ctx context.Context, req *mcp.CallToolRequest) func(string) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return func(string) {}
	}
	n := 0.0
	return func(msg string) {
		n++
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: strings.TrimSpace(msg)})
	}
}

// run executes x through the service when one runs, else in-process.
func (s *mcpServer) run(ctx context.Context, x api.ExecRequest, progress func(string)) *api.End {
	ended, err := s.shell.Execute(ctx, shellclient.Call{Request: x, Capture: true, Notices: noticeWriter{progress}})
	if err != nil {
		return pipeline.InternalEnd(err)
	}
	return ended.End
}

// noticeWriter passes each line a held call writes on to progress.
type noticeWriter struct{ fn func(string) }

func (w noticeWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if l != "" {
			w.fn(l)
		}
	}
	return len(p), nil
}

// toolError is a result the model reads as an error.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// toolResult turns how a call ended into the tool's result: the output as
// text (stderr labelled), the figures and the call's card (service/card)
// as structured content; an error only when it was denied or could not
// start.
func toolResult(end *api.End) *mcp.CallToolResult {
	if end.Error != nil && (end.Result == nil || end.Error.Kind != api.ErrFailedToStart) {
		e := end.Error
		var msg string
		switch e.Kind {
		case api.ErrDenied:
			msg = fmt.Sprintf("Gatehouse denied this command (%s): %s", e.BlockedBy, e.Message)
			if e.Hint != "" {
				msg += "\nRemedy (for the user): " + e.Hint
			}
		case api.ErrArgument:
			msg = fmt.Sprintf("argument %s: %s; nothing ran", e.Arg, e.Message)
		default:
			msg = "Gatehouse could not run this command: " + e.Message
		}
		r := toolError(msg)
		o := mcpOutput{Error: msg}
		if end.Event != nil {
			o.TimeoutSeconds, o.EventID, o.SandboxMode = end.Event.TimeoutSeconds, end.Event.ID, end.Event.SandboxMode
		}
		r.StructuredContent = withCard(o, end.Event)
		return r
	}
	res := end.Result
	if res == nil {
		res = &api.Result{}
	}
	var text strings.Builder
	text.WriteString(res.Stdout)
	if res.Stderr != "" {
		if text.Len() > 0 && !strings.HasSuffix(text.String(), "\n") {
			text.WriteString("\n")
		}
		text.WriteString("stderr:\n" + res.Stderr)
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&text, "\n(timed out after %d s)", res.TimeoutSeconds)
	case res.ExitCode != nil && *res.ExitCode != 0:
		fmt.Fprintf(&text, "\n(exit code %d)", *res.ExitCode)
	}
	out := mcpOutput{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, DurationMS: res.DurationMS, TimeoutSeconds: res.TimeoutSeconds, TimedOut: res.TimedOut,
		Truncated: res.Truncated, SandboxMode: res.SandboxMode, RedactionCount: res.RedactionCount}
	if end.Event != nil {
		out.EventID = end.Event.ID
	}
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text.String()}}, StructuredContent: withCard(out, end.Event)}
	if end.Error != nil { // it failed to start
		msg := "Gatehouse could not start this command: " + end.Error.Message
		r.IsError = true
		r.Content = []mcp.Content{&mcp.TextContent{Text: msg}}
		out.Error = msg
		r.StructuredContent = withCard(out, end.Event)
	}
	return r
}

// mcpTool describes shell__execute under cfg: the input schema states the
// constraints of DESIGN §4, the description what the sandbox allows.
func mcpTool(cfg *policy.Config, roots []inForceRoot) *mcp.Tool {
	ceiling := cfg.TimeoutCeiling()
	envKey := map[string]any{"type": "string"}
	if len(cfg.Exec.Env.AgentSettable) > 0 {
		envKey["enum"] = cfg.Exec.Env.AgentSettable
	}
	props := map[string]any{
		"command": map[string]any{"type": "string", "maxLength": api.MaxCommandBytes,
			"description": "The shell command line (bash, as exec.shell says), at most 64 KiB, no NUL bytes."},
		"cwd": map[string]any{"type": "string",
			"description": "Working directory: absolute, or relative to the default one (the client's first root inside a workspace root, else the directory gatehouse mcp started in when it is inside one, else " + cfg.Exec.DefaultCWD + "); it must resolve inside a workspace root."},
		"timeout_seconds": map[string]any{"type": "integer", "minimum": 1,
			"description": fmt.Sprintf("Seconds before the command is killed; default %d, at most %d (larger is clamped).", cfg.Policy.ExecTimeoutSeconds, ceiling)},
		"stdin": map[string]any{"type": "string", "maxLength": int64(cfg.Exec.Limits.StdinMaxBytes),
			"description": fmt.Sprintf("Standard input, at most %d bytes.", int64(cfg.Exec.Limits.StdinMaxBytes))},
		"env": map[string]any{"type": "object", "maxProperties": api.MaxEnvKeys, "propertyNames": envKey,
			"additionalProperties": map[string]any{"type": "string"},
			"description": "Environment variables to set (at most 32, each one exec.env.agent_settable lists: " + listOrNone(cfg.Exec.Env.AgentSettable) +
				"); a value may carry ${credential:ID}."},
	}
	in := map[string]any{"type": "object", "properties": props, "required": []string{"command"}, "additionalProperties": false}
	out := map[string]any{"type": "object", "properties": map[string]any{
		"stdout":          map[string]any{"type": "string", "description": "standard output, redacted and truncated"},
		"stderr":          map[string]any{"type": "string", "description": "standard error, when there was any"},
		"error":           map[string]any{"type": "string", "description": "why nothing ran, when it was denied or could not start"},
		"exit_code":       map[string]any{"type": []string{"integer", "null"}},
		"duration_ms":     map[string]any{"type": "integer"},
		"timeout_seconds": map[string]any{"type": "integer"},
		"timed_out":       map[string]any{"type": "boolean"},
		"truncated":       map[string]any{"type": "boolean"},
		"sandbox_mode":    map[string]any{"type": "string"},
		"redaction_count": map[string]any{"type": "integer"},
		"event_id":        map[string]any{"type": "string"},
	}}
	return &mcp.Tool{
		Name:         ToolName,
		Title:        "Run a shell command in Gatehouse's sandbox",
		Description:  toolDescription(cfg, roots),
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  &mcp.ToolAnnotations{Title: "Gatehouse shell", OpenWorldHint: ptr(len(cfg.Policy.EgressAllowlist) > 0)},
	}
}

func ptr[T any](v T) *T { return &v }

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// toolDescription tells the model what the sandbox allows, so that it
// does not spend calls finding out.
// roots are the workspace roots in force (rootsInForce).
func toolDescription(cfg *policy.Config, roots []inForceRoot) string {
	var b strings.Builder
	b.WriteString("Runs a shell command through Gatehouse: it is analysed and checked against the user's policy, then run in a sandbox, and its output is returned with secrets redacted. ")
	var names []string
	for _, r := range roots {
		n := r.path
		if len(r.agents) > 0 {
			n += " (for " + strings.Join(r.agents, ", ") + " only)"
		}
		names = append(names, n)
	}
	fmt.Fprintf(&b, "Only the workspace roots are writable (%s); the rest of the file system is read-only, and credential stores such as ~/.ssh are hidden. ", listOrNone(names))
	if len(cfg.Policy.EgressAllowlist) == 0 && len(cfg.Policy.EgressAllowlistByAgent) == 0 {
		b.WriteString("There is no network access. ")
	} else {
		fmt.Fprintf(&b, "Network access goes only to the allowlisted destinations (%s) through a proxy (HTTPS_PROXY is set). ", listOrNone(cfg.Policy.EgressAllowlist))
	}
	var creds []string
	for k := range cfg.Exec.Credentials.Env {
		creds = append(creds, "$"+k)
	}
	if len(creds) > 0 {
		slices.Sort(creds)
		fmt.Fprintf(&b, "Credentials are available as environment variables by name (%s); never put their values on a command line. ", strings.Join(creds, ", "))
	}
	b.WriteString("A command a rule asks about waits for the user's approval. A non-zero exit code is a result, not an error; a denied command did not run, and the reason says why.")
	return b.String()
}
