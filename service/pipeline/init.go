package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/program"

	"github.com/gatehouse-dev/gatehouse/internal/buildid"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// InitName is the sandbox init's file name (app/gatehouse-init).
const InitName = "gatehouse-init"

// InitDirs are where the init is looked for after the directory of the
// gatehouse executable.
var InitDirs = []string{"/usr/lib/gatehouse", "/usr/local/lib/gatehouse"}

// InitRemedy is the remedy for an init of another build.
const InitRemedy = "reinstall gatehouse and gatehouse-init from the same build"

// Init is where the sandbox init was found, or why it was not.
type Init struct {
	Path   string   // the init; "" when none was found
	Where  string   // how it was found: "exec.sandbox.init_path", "next to gatehouse", ...
	Looked []string // the paths tried, in order
	Err    error    // why none was found (with the remedy); nil when Path is set
}

// FindInit finds the sandbox init: exec.sandbox.init_path when set, else
// the executor's Options.InitPath (tests), else gatehouse-init next to the
// running executable (symlinks resolved), else in each of InitDirs. It is
// looked up per execution: an init installed or removed while the service
// runs is seen at the next command.
func (e *Executor) FindInit() Init {
	exe := ""
	if e.cfg.Exec.Sandbox.InitPath == "" && e.opts.InitPath == "" {
		if p, err := program.Executable(); err == nil {
			exe = p
		}
	}
	return findInit(e.cfg.Exec.Sandbox.InitPath, e.opts.InitPath, exe)
}

func findInit(configured, explicit, exe string) Init {
	if configured != "" {
		if err := isProgram(configured); err != nil {
			return Init{Looked: []string{configured}, Err: fmt.Errorf(
				"the sandbox init exec.sandbox.init_path %s %v; install gatehouse-init there from the same build as gatehouse, or set exec.sandbox.init_path to where it is", configured, err)}
		}
		return Init{Path: configured, Where: "exec.sandbox.init_path", Looked: []string{configured}}
	}
	if explicit != "" {
		return Init{Path: explicit, Where: "set by the caller", Looked: []string{explicit}}
	}
	var looked []string
	try := func(dir, where string) (Init, bool) {
		p := filepath.Join(dir, InitName)
		looked = append(looked, p)
		if isProgram(p) == nil {
			return Init{Path: p, Where: where}, true
		}
		return Init{}, false
	}
	if exe != "" {
		if in, ok := try(filepath.Dir(exe), "next to "+exe); ok {
			in.Looked = looked
			return in
		}
	}
	for _, d := range InitDirs {
		if in, ok := try(d, "in "+d); ok {
			in.Looked = looked
			return in
		}
	}
	return Init{Looked: looked, Err: fmt.Errorf(
		"the sandbox init %s was not found (looked at %s); install it next to gatehouse from the same build (make build puts both in bin/), or set exec.sandbox.init_path",
		InitName, strings.Join(looked, ", "))}
}

// isProgram is nil when p is an executable regular file.
func isProgram(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("is not a regular file")
	case fi.Mode()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}

// initFailed is the result of an execution whose init was not found.
func initFailed(mode sandbox.Mode, in Init) *sandbox.Result {
	return &sandbox.Result{Mode: mode, Status: sandbox.StatusFailedToStart, StatusReason: api.StatusReasonInitMissing, Error: in.Err.Error()}
}

// explainMismatch turns an init's refusal of this build's plan into a
// failed_to_start that names both binaries and the remedy.
func explainMismatch(res *sandbox.Result, initPath string) {
	if res.Status != sandbox.StatusFailedToStart || !sandboxinit.BuildMismatch(res.Error) {
		return
	}
	exe, err := program.Executable()
	if err != nil {
		exe = "gatehouse"
	}
	res.StatusReason = api.StatusReasonInitMismatch
	res.Error = fmt.Sprintf("%s (init %s, gatehouse %s); %s", res.Error, initPath, exe, InitRemedy)
}

// CheckInit runs the init found (its build-id stage) and returns its build
// id, and an error with the remedy when it does not run or is of another
// build than this gatehouse. It is for gatehouse doctor: an execution
// learns the same from the init's refusal.
func CheckInit(ctx context.Context, in Init) (string, error) {
	if in.Err != nil {
		return "", in.Err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.Path, "build-id")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("the sandbox init %s does not run (%v); %s", in.Path, err, InitRemedy)
	}
	id := strings.TrimSpace(string(out))
	if id != buildid.ID() {
		exe, err := program.Executable()
		if err != nil {
			exe = "gatehouse"
		}
		return id, fmt.Errorf("the sandbox init %s is build %s, %s is build %s: every command would fail to start; %s",
			in.Path, id, exe, buildid.ID(), InitRemedy)
	}
	return id, nil
}
