package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/buildid"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// buildInit builds app/gatehouse-init with build id id, or skips where the
// module is not at hand (the unprivileged run copies this package alone).
func buildInit(t *testing.T, id string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	mod, err := exec.Command(gobin, "env", "GOMOD").Output()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(mod)), "go.mod") {
		t.Skip("the module's source is not here to build gatehouse-init from")
	}
	out := filepath.Join(t.TempDir(), "gatehouse-init")
	cmd := exec.Command(gobin, "build", "-o", out,
		"-ldflags", "-X github.com/gatehouse-dev/gatehouse/internal/buildid.id="+id,
		"github.com/gatehouse-dev/gatehouse/app/gatehouse-init")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(mod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building gatehouse-init: %v\n%s", err, b)
	}
	return out
}

// The real init, built as make build builds it, runs the command when it
// is of the executor's build (the test binary's id, buildid.ID()) and
// refuses it otherwise, in both modes that run it.
func TestInitBuild(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	same, other := buildInit(t, buildid.ID()), buildInit(t, "another-build")
	for _, backend := range []string{"bubblewrap", "none"} {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
				c.Exec.Sandbox.Backend = backend
				c.Policy.SandboxRequired = backend != "none"
				c.Exec.Sandbox.InitPath = same
			})
			o := f.run(`grep '^Seccomp:' /proc/self/status; echo ran`)
			if o.Raw.Status != sandbox.StatusCompleted || !strings.Contains(o.Result.Stdout, "ran") {
				t.Fatalf("with gatehouse-init of this build: %s %s %q %q", o.Raw.Status, o.Raw.Error, o.Result.Stdout, o.Result.Stderr)
			}
			if backend == "bubblewrap" && (o.Event.SandboxMode != string(sandbox.ModeBubblewrap) || !strings.Contains(o.Result.Stdout, "Seccomp:\t2")) {
				t.Errorf("mode %s, %q: want bubblewrap with the filter installed by gatehouse-init", o.Event.SandboxMode, o.Result.Stdout)
			}

			f.cfg.Exec.Sandbox.InitPath = other
			marker := filepath.Join(f.ws, "ran")
			o = f.run("touch " + marker)
			if o.Raw.Status != sandbox.StatusFailedToStart || o.Event.Status != string(sandbox.StatusFailedToStart) || o.Event.StatusReason != "init_mismatch" {
				t.Fatalf("with gatehouse-init of another build: status %s (%s), want failed_to_start (init_mismatch)", o.Event.Status, o.Event.StatusReason)
			}
			for _, s := range []string{"build another-build", "gatehouse is build " + buildid.ID(), other, InitRemedy} {
				if !strings.Contains(o.Raw.Error, s) || !strings.Contains(o.Event.Reason, s) {
					t.Errorf("the error %q (event reason %q) does not say %q", o.Raw.Error, o.Event.Reason, s)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the command ran under an init of another build")
			}
		})
	}
}

func TestInitMissing(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"bubblewrap", "none"} {
		f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) {
			c.Exec.Sandbox.Backend = backend
			c.Policy.SandboxRequired = backend != "none"
			c.Exec.Sandbox.InitPath = "/nonexistent/gatehouse-init"
		})
		if backend == "bubblewrap" {
			sandboxtest.RequireBwrap(t)
		}
		o := f.run("true")
		if o.Event.Status != string(sandbox.StatusFailedToStart) || o.Event.StatusReason != "init_missing" {
			t.Fatalf("%s: status %s (%s), want failed_to_start (init_missing)", backend, o.Event.Status, o.Event.StatusReason)
		}
		for _, s := range []string{"exec.sandbox.init_path /nonexistent/gatehouse-init does not exist", "install gatehouse-init"} {
			if !strings.Contains(o.Raw.Error, s) {
				t.Errorf("%s: the error %q does not say %q", backend, o.Raw.Error, s)
			}
		}
	}
}
