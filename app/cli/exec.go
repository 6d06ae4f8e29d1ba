package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/shellclient"
)

var execCmd = &command{name: "exec",
	summary: "run one command through the governed shell",
	usage:   execUsage,
	flags:   runExec,
}

const execUsage = `usage: gatehouse exec [--cwd DIR] [--timeout S] [--stdin FILE] [--session ID] [--json] [--config FILE] -- COMMAND

Runs COMMAND (the arguments after --, joined by spaces) with the configured
shell inside the sandbox, in DIR (relative to the current directory) or
else in the current directory; a directory in no workspace root asks a
person (or is refused when no service runs). Output streams as it arrives. A command a rule
asks about waits for a person's approval (gatehouse approve, the tray) when
the service runs it; --session names the session an approve-for-session
answer covers. The exit status is the
command's own, 124 on timeout, 126 when it could not start, was denied or the
service running it was lost, 137 when it was killed, 130 when interrupted
(Ctrl-C) and 143 when terminated (SIGTERM).`

// execInitPath lets tests name the binary that implements the sandbox
// init's stages (the test binary) when exec.sandbox.init_path names none;
// empty, the executor finds gatehouse-init (pipeline.FindInit).
var execInitPath = ""

// TestOnlyInitPath sets execInitPath, for test binaries outside this
// package that carry the init's stages (sandboxinit.Stages).
func TestOnlyInitPath(path string) { execInitPath = path }

func runExec(fl *flag.FlagSet) runFunc {
	cwd := fl.String("cwd", "", "")
	timeout := fl.Int("timeout", 0, "")
	stdinFile := fl.String("stdin", "", "")
	asJSON := fl.Bool("json", false, "")
	configFile := fl.String("config", "", "")
	session := fl.String("session", "", "")
	printArgs := fl.Bool("print-bwrap-args", false, "") // hidden: for benchmarks
	return func(ctx context.Context, env *Env, args []string) error {
		if fl.NArg() == 0 {
			return usagef("exec: missing COMMAND; usage: gatehouse exec [flags] -- COMMAND")
		}
		timeoutSet := false
		fl.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
		if timeoutSet && *timeout < 1 {
			return usagef("exec: --timeout: %d is not allowed; use a whole number of seconds from 1", *timeout)
		}
		req, err := cliRequest("exec", args, *cwd, *stdinFile)
		if err != nil {
			return err
		}
		req.TimeoutSeconds = *timeout
		req.SessionID = *session
		// A person at this terminal can answer what the call asks (an
		// unknown destination under egress_unknown: ask).
		req.Interactive = !*asJSON && isTerminal(env.Stdin) && isTerminal(env.Stderr)

		// The user service runs it when one is running; otherwise the same
		// pipeline runs in this process (service/shellclient).
		cl, err := shellClient(env, *configFile, true, nil)
		if err != nil {
			return err
		}
		defer cl.Close()
		if *printArgs {
			ex, err := cl.Executor()
			if err != nil {
				return err
			}
			a, err := bwrapArgs(ex, ex.Config().Exec.Sandbox.BwrapPath, req)
			if err != nil {
				return err
			}
			for _, s := range a {
				fmt.Fprintf(env.Stdout, "%s\x00", s)
			}
			return nil
		}

		// SIGINT/SIGTERM to gatehouse terminate the command (recorded
		// killed) and end this process with 130 or 143.
		in := interruptContext(ctx)
		defer in.stop()
		call := shellclient.Call{Request: req, Capture: *asJSON, Notices: env.Stderr}
		if !*asJSON {
			call.Stdout, call.Stderr = env.Stdout, env.Stderr
			if f, ok := env.Stdout.(*os.File); ok {
				sandbox.GrowPipe(f)
			}
			// A first build in a cold tool cache is minutes of fetching
			// and compiling: after a silence, the terminal is told why.
			if s := coldCacheWatch(env.Stderr, cl.Paths.ToolCacheRoot, req.Agent, cl.Paths.Home); s != nil {
				call.Stdout, call.Stderr = s.writer(call.Stdout), s.writer(call.Stderr)
				tick, stop := time.NewTicker(time.Second), make(chan struct{})
				go s.watch(tick.C, stop)
				defer tick.Stop()
				defer close(stop)
			}
		}
		ended, err := cl.Execute(in, call)
		if err != nil {
			return err
		}
		if st, ok := in.ended(env); ok {
			warnProblem(env, ended.Problem, ended.ProblemHint)
			return st
		}
		return printEnd(env, ended.End, *asJSON, func() (string, string) { return ended.Problem, ended.ProblemHint })
	}
}

// cliRequest is the request of exec or explain (cmd): the words of the
// command, its directory and the file its standard input is read from.
func cliRequest(cmd string, words []string, cwd, stdinFile string) (api.ExecRequest, error) {
	// Without --cwd the command runs where the terminal is: the pipeline
	// resolves it like any named directory, so a directory in no workspace
	// root asks (or is refused) rather than running in exec.default_cwd.
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return api.ExecRequest{}, usagef("%s: the current directory: %v; name one with --cwd", cmd, err)
		}
		cwd = wd
	}
	// A relative --cwd is the terminal's: relative to the directory
	// gatehouse runs in, as every other command's paths are. The request
	// itself would read it against exec.default_cwd.
	if !filepath.IsAbs(cwd) && cwd != "~" && !strings.HasPrefix(cwd, "~/") {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return api.ExecRequest{}, usagef("%s: --cwd: %v", cmd, err)
		}
		cwd = abs
	}
	req := api.ExecRequest{
		Command: strings.Join(words, " "),
		Cwd:     cwd,
		Agent:   "cli",
		Surface: api.SurfaceCLI,
	}
	if stdinFile != "" {
		b, err := readLimited(stdinFile, 64<<20)
		if err != nil {
			return req, usagef("%s: --stdin: %v", cmd, err)
		}
		req.Stdin = string(b)
	}
	return req, nil
}

// argFlag names a request argument the way the CLI spells it.
func argFlag(arg string) string {
	switch arg {
	case "command":
		return "COMMAND"
	case "timeout_seconds":
		return "--timeout"
	case "cwd":
		return "--cwd"
	case "stdin":
		return "--stdin"
	}
	return arg
}

// denialAnswer is the --json answer of a denied request: the stage's
// hint (or the CLI's for the code) is its own field.
func denialAnswer(code, reason, hint string, event any) map[string]any {
	e := map[string]string{"blocked_by": code, "reason": reason}
	if hint != "" {
		e["hint"] = hint
	}
	return map[string]any{"error": e, "event": event}
}

// printDenial reports a denied request on stderr, with a hint when there is
// one.
func printDenial(env *Env, code, reason, hint string) {
	fmt.Fprintf(env.Stderr, "gatehouse: denied: %s: %s\n", code, reason)
	if hint != "" {
		fmt.Fprintf(env.Stderr, "gatehouse: hint: %s\n", hint)
	}
}

func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// bwrapArgs returns the bubblewrap arguments req would run with, without
// running anything (exec --print-args, for benchmarks and debugging).
func bwrapArgs(ex *pipeline.Executor, bwrapPath string, req api.ExecRequest) ([]string, error) {
	spec, err := ex.PlanSpec(req)
	if err != nil {
		return nil, err
	}
	plan, err := bwrap.Discover(spec.WorkspaceRoots, spec.DenyRead, spec.WriteDeny)
	if err != nil {
		return nil, err
	}
	defer plan.Close()
	a := bwrap.Args(spec, &plan.Mounts, bwrap.Options{DisableUserns: probe.BwrapAtLeast(probe.Gather(bwrapPath), 0, 8, 0)})
	return append(a, bwrap.InitCommand...), nil
}
