package workflow

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/app/cli"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// gatehouseBin names a gatehouse binary for the exec side to run instead of
// this test binary (make bench passes bin/gatehouse: statically linked, it
// starts faster than a test binary).
var gatehouseBin = flag.String("gatehouse", "", "gatehouse binary for the exec side (default: this test binary)")

// asGatehouse, set in the environment of a re-executed test binary, makes
// it the gatehouse command line.
const asGatehouse = "GATEHOUSE_WORKFLOW_AS_GATEHOUSE"

func TestMain(m *testing.M) {
	// Inside the sandbox this test binary is Gatehouse's init: its stages
	// are gatehouse-init's, and gatehouse (this binary again) is told so.
	sandboxtest.Stage(sandboxinit.Stages)
	if exe, err := os.Executable(); err == nil {
		cli.TestOnlyInitPath(exe)
	}
	if os.Getenv(asGatehouse) == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// systemPath is the PATH both sides give commands: the one make test's
// unprivileged run has, and what a developer's shell has at least.
const systemPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/go/bin"

// side is one way of running a session: plain bash, or gatehouse exec.
// Each side has its own HOME (root/NAME/home) whose src/ is the workspace
// (Gatehouse's default root, ~/src), and its own TMPDIR.
type side struct {
	name string // "bash" or "exec"
	root string
	home string
	tmp  string
	path string // PATH of the session's commands
}

func (s *side) ws() string { return filepath.Join(s.home, "src") }

// newSides makes the two sides of a test under one directory visible inside
// the sandbox.
func newSides(t testing.TB, path string) (bash, gh *side) {
	t.Helper()
	dir := sandboxtest.Dir(t)
	mk := func(name string) *side {
		s := &side{name: name, root: filepath.Join(dir, name), path: path}
		s.home = filepath.Join(s.root, "home")
		s.tmp = filepath.Join(s.root, "tmp")
		for _, d := range []string{s.ws(), s.tmp} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	bash, gh = mk("bash"), mk("exec")
	// A session's builds are real (go build, cargo, pip): on a loaded
	// machine the first one may take minutes, longer than the default
	// 120 s a command may run. The test's own deadline bounds them.
	conf := filepath.Join(gh.home, ".config", "gatehouse", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("policy:\n  exec_timeout_seconds: 3600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bash, gh
}

func userName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "user"
}

// env is the environment of the process the side starts: for plain bash
// the one Gatehouse constructs for its commands (service/pipeline env()),
// with the side's own TMPDIR; for gatehouse exec its own environment,
// whose PATH it passes on to commands.
func (s *side) env() []string {
	u := userName()
	env := []string{
		"PATH=" + s.path,
		"HOME=" + s.home,
		"USER=" + u,
		"LOGNAME=" + u,
		"LANG=C.UTF-8",
		"TMPDIR=" + s.tmp,
	}
	if s.name == "bash" {
		return append(env, "SHELL=/bin/bash", "TERM=dumb")
	}
	return append(env,
		"XDG_CONFIG_HOME="+filepath.Join(s.home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(s.home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(s.home, ".cache"),
		asGatehouse+"=1",
	)
}

// command returns the command that runs script with cwd dir on this side.
func (s *side) command(ctx context.Context, dir, script string) *exec.Cmd {
	var cmd *exec.Cmd
	if s.name == "bash" {
		cmd = exec.CommandContext(ctx, "/bin/bash", "--noprofile", "--norc", "-c", script)
		cmd.Dir = dir
	} else {
		exe := *gatehouseBin
		if exe == "" {
			var err error
			if exe, err = os.Executable(); err != nil {
				exe = os.Args[0]
			}
		}
		cmd = exec.CommandContext(ctx, exe, "exec", "--cwd", dir, "--", script)
		cmd.Dir = s.ws()
	}
	cmd.Env = s.env()
	cmd.Stdin = nil
	return cmd
}

type result struct {
	code           int
	stdout, stderr string
}

func (s *side) run(t testing.TB, dir, script string) result {
	t.Helper()
	cmd := s.command(context.Background(), dir, script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	return result{code, out.String(), errb.String()}
}

// copyProject copies testdata/projects/NAME to the side's workspace and
// returns the copy's path.
func (s *side) copyProject(t testing.TB, name string) string {
	t.Helper()
	dst := filepath.Join(s.ws(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", "projects", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

var (
	// Gatehouse's per-agent cache directory and the user's own cache
	// directory are one place to a command.
	cacheRE = regexp.MustCompile(`<HOME>/\.cache(/gatehouse/sandbox/[^/\s'"]+)?`)
	// Inside the sandbox TMPDIR is a private /tmp.
	sandboxTmpRE = regexp.MustCompile(`(^|[^\w./<>-])/tmp\b`)
	tempNameRE   = regexp.MustCompile(`<TMP>/[^\s/'"]+`)
	goBuildRE    = regexp.MustCompile(`go-build\d+`)
	durationRE   = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m)\b`)
	sizeRE       = regexp.MustCompile(`\bsize=\d+`)
	hexRE        = regexp.MustCompile(`\b[0-9a-f]{16,}\b`)
	// pip's wheel cache: wheels/ab/cd/ef/<rest of the hash of the link>.
	pipHashDirRE = regexp.MustCompile(`(/[0-9a-f]{2}){3}/<HEX>`)
)

// normalise replaces in out what differs between two runs of the same
// session for reasons that are not the sandbox's: the side's home (and so
// its workspace), cache and temporary directories, temporary names,
// durations, and the sizes and hashes of built archives.
func (s *side) normalise(out string) string {
	out = strings.ReplaceAll(out, s.home, "<HOME>")
	out = strings.ReplaceAll(out, s.tmp, "<TMP>")
	out = strings.ReplaceAll(out, s.root, "<ROOT>")
	out = cacheRE.ReplaceAllString(out, "<CACHE>")
	if s.name == "exec" {
		out = sandboxTmpRE.ReplaceAllString(out, "$1<TMP>")
	}
	out = tempNameRE.ReplaceAllString(out, "<TMP>/<NAME>")
	out = goBuildRE.ReplaceAllString(out, "go-build<N>")
	out = durationRE.ReplaceAllString(out, "<T>")
	out = sizeRE.ReplaceAllString(out, "size=<N>")
	out = hexRE.ReplaceAllString(out, "<HEX>")
	out = pipHashDirRE.ReplaceAllString(out, "/<HEX>")
	return out
}

// need skips t when a prerequisite is missing, or fails it under
// REQUIRE_SANDBOX=1, naming the Debian package that provides it.
func need(t testing.TB, ok bool, what, pkg string) {
	t.Helper()
	if ok {
		return
	}
	if sandboxtest.Required() {
		t.Fatalf("REQUIRE_SANDBOX=1 but %s is missing: install the Debian package %s (.ci/test-deps.sh does)", what, pkg)
	}
	t.Skipf("%s is missing: install the Debian package %s", what, pkg)
}

// lookPath finds name in path, as a command started with that PATH would.
func lookPath(name, path string) (string, bool) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// sessionPath is systemPath, with the directory of the go running the
// tests appended when it is elsewhere.
func sessionPath() string {
	path := systemPath
	if _, ok := lookPath("go", path); !ok {
		if p, err := exec.LookPath("go"); err == nil {
			path += ":" + filepath.Dir(p)
		}
	}
	return path
}

// runs reports whether name, with args, exits 0 (with PATH path).
func runs(path string, name string, args ...string) bool {
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"PATH=" + path, "HOME=/nonexistent", "LANG=C.UTF-8"}
	return cmd.Run() == nil
}
