package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gatehouse-dev/gatehouse/app/cli/execface"
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
	f := execface.Define(fl)
	return func(ctx context.Context, env *Env, args []string) error {
		if fl.NArg() == 0 {
			return usagef("exec: missing COMMAND; usage: gatehouse exec [flags] -- COMMAND")
		}
		if err := f.CheckTimeout(fl); err != nil {
			return usagef("%v", err)
		}
		req, err := cliRequest("exec", args, *f.Cwd, *f.StdinFile)
		if err != nil {
			return err
		}
		req.TimeoutSeconds = *f.Timeout
		req.SessionID = *f.Session
		// A person at this terminal can answer what the call asks (an
		// unknown destination under egress_unknown: ask).
		req.Interactive = !*f.JSON && isTerminal(env.Stdin) && isTerminal(env.Stderr)

		// The user service runs it when one is running; otherwise the same
		// pipeline runs in this process (service/shellclient). Without a
		// terminal on stderr and without --config, the front program
		// (app/gatehouse) sends the same call to the service itself
		// (execface.Front) and hands it here only when none answers.
		cl, err := shellClient(env, *f.Config, true, nil)
		if err != nil {
			return err
		}
		defer cl.Close()
		if *f.PrintArgs {
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
		in := execface.Interruptible(ctx)
		defer in.Stop()
		call := shellclient.Call{Request: req, Capture: *f.JSON, Notices: env.Stderr}
		if !*f.JSON {
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
		if st, ok := in.Ended(env.Stderr); ok {
			execface.WarnProblem(env.Stderr, ended.Problem, ended.ProblemHint)
			return ExitStatus(st)
		}
		return ExitStatus(execface.Print(env.Stdout, env.Stderr, ended.End, *f.JSON, ended.Problem, ended.ProblemHint))
	}
}

// cliRequest is the request of exec or explain (cmd): the words of the
// command, its directory and the file its standard input is read from.
func cliRequest(cmd string, words []string, cwd, stdinFile string) (api.ExecRequest, error) {
	req, err := execface.Request(cmd, words, cwd, stdinFile)
	if err != nil {
		return req, usagef("%v", err)
	}
	return req, nil
}

func writeJSON(w io.Writer, v any) { execface.WriteJSON(w, v) }

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
