package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Commands write their tools' caches into their agent's own directory;
// the host's caches stay unwritable, and one agent's cache is not seen by
// another's commands.
func TestToolCachesAreTheAgentsOwn(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	f := newFixture(t, sandboxtest.Dir(t), nil)
	host := []string{".cache/go-build", ".npm", ".cache/pip"}
	for _, d := range host {
		os.MkdirAll(filepath.Join(f.home, d), 0o755)
	}
	agent := func(a string) func(*api.ExecRequest) { return func(r *api.ExecRequest) { r.Agent = a } }

	// The host's caches: every write is refused.
	for _, d := range host {
		o := f.run(`echo poison > ~/` + d + `/planted`)
		if exitOf(o) == 0 || !strings.Contains(o.Result.Stderr, "Read-only file system") {
			t.Errorf("writing ~/%s: exit %d, stderr %q", d, exitOf(o), o.Result.Stderr)
		}
		if _, err := os.Stat(filepath.Join(f.home, d, "planted")); err == nil {
			t.Errorf("~/%s/planted exists on the host", d)
		}
	}

	// The variables point into the agent's directory, which is writable
	// and kept.
	cli := filepath.Join(f.home, ".cache", "gatehouse", "sandbox", "cli")
	o := f.run(`printf '%s\n' "$GOCACHE" "$npm_config_cache" "$PIP_CACHE_DIR" "$XDG_CACHE_HOME" && echo planted > "$GOCACHE/planted" && test -d "$XDG_RUNTIME_DIR"`, agent("cli"))
	want := strings.Join([]string{cli + "/go-build", cli + "/npm", cli + "/pip", cli + "/xdg"}, "\n") + "\n"
	if exitOf(o) != 0 || o.Result.Stdout != want {
		t.Fatalf("cli: exit %d, stdout %q, stderr %q; want %q", exitOf(o), o.Result.Stdout, o.Result.Stderr, want)
	}
	if b, err := os.ReadFile(filepath.Join(cli, "go-build", "planted")); err != nil || string(b) != "planted\n" {
		t.Errorf("the cli agent's cache on the host: %q %v", b, err)
	}
	if o.Event.ToolCache != cli {
		t.Errorf("event tool_cache %q, want %s", o.Event.ToolCache, cli)
	}

	// Another agent sees neither the file nor the cli agent's directory,
	// and cannot write there.
	o = f.run(`ls -a `+filepath.Dir(cli)+`; cat `+cli+`/go-build/planted; ls "$GOCACHE"; echo x > `+cli+`/go-build/other`, agent("claude-code"))
	if strings.Contains(o.Result.Stdout, "planted") || strings.Contains(o.Result.Stdout, "cli\n") {
		t.Errorf("claude-code sees the cli agent's cache: %q", o.Result.Stdout)
	}
	if !strings.Contains(o.Result.Stdout, "claude-code") {
		t.Errorf("claude-code does not see its own cache: %q", o.Result.Stdout)
	}
	if _, err := os.Stat(filepath.Join(cli, "go-build", "other")); err == nil {
		t.Error("claude-code wrote into the cli agent's cache")
	}
}
