package execface

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/gatehouse-dev/gatehouse/hook/decide"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/svccall"
)

// Front runs 'gatehouse exec' (args after the program's name) through the
// user's service, as the full program would, and returns its exit
// status. ok is false when it did not: the arguments are not a call it
// takes (another command, a usage error, --config or --print-bwrap-args,
// stderr a terminal, where a person may be told and asked more), or no
// service answered. Nothing ran then, and the full program takes the same
// arguments.
func Front(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) (code int, ok bool) {
	if len(args) == 0 || args[0] != "exec" || IsTerminal(stderr) {
		return 0, false
	}
	fl := flag.NewFlagSet("exec", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	f := Define(fl)
	if fl.Parse(args[1:]) != nil || fl.NArg() == 0 || *f.Config != "" || *f.PrintArgs {
		return 0, false
	}
	if f.CheckTimeout(fl) != nil {
		return 0, false
	}
	p, err := decide.Paths(getenv)
	if err != nil {
		return 0, false
	}
	svc := svccall.Service(p.Socket)
	if svc == nil {
		return 0, false
	}
	req, err := Request("exec", fl.Args(), *f.Cwd, *f.StdinFile)
	if err != nil {
		return 0, false
	}
	req.TimeoutSeconds = *f.Timeout
	req.SessionID = *f.Session

	in := Interruptible(ctx)
	defer in.Stop()
	call := svccall.Call{Request: req, Capture: *f.JSON, Notices: stderr}
	if !*f.JSON {
		call.Stdout, call.Stderr = stdout, stderr
		if f, ok := stdout.(*os.File); ok {
			sandbox.GrowPipe(f)
		}
	}
	ended, ok := svccall.Run(in, svc, call)
	if !ok {
		return 0, false
	}
	if st, ok := in.Ended(stderr); ok {
		WarnProblem(stderr, ended.Problem, ended.ProblemHint)
		return st, true
	}
	return Print(stdout, stderr, ended.End, *f.JSON, ended.Problem, ended.ProblemHint), true
}
