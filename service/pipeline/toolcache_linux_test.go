package pipeline

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
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

// A module the host's cache holds builds in the sandbox without the
// network: the agent's module cache is seeded from the host's, which is
// only read.
func TestGoModulesSeededFromTheHostCache(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	f := newFixture(t, sandboxtest.Dir(t), nil)
	hostMod := filepath.Join(f.home, "go", "pkg", "mod")

	// A module proxy that only the host ever sees, holding example.com/dep.
	proxy := filepath.Join(f.dir, "proxy")
	v := filepath.Join(proxy, "example.com", "dep", "@v")
	os.MkdirAll(v, 0o755)
	os.WriteFile(filepath.Join(v, "list"), []byte("v1.0.0\n"), 0o644)
	os.WriteFile(filepath.Join(v, "v1.0.0.info"), []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`), 0o644)
	os.WriteFile(filepath.Join(v, "v1.0.0.mod"), []byte("module example.com/dep\n\ngo 1.22\n"), 0o644)
	zf, _ := os.Create(filepath.Join(v, "v1.0.0.zip"))
	zw := zip.NewWriter(zf)
	for name, body := range map[string]string{
		"go.mod": "module example.com/dep\n\ngo 1.22\n",
		"dep.go": "package dep\n\nconst Word = \"seeded\"\n",
	} {
		w, _ := zw.Create("example.com/dep@v1.0.0/" + name)
		w.Write([]byte(body))
	}
	zw.Close()
	zf.Close()

	// The project, resolved on the host into the host's module cache.
	proj := filepath.Join(f.ws, "app")
	f.write("home/src/app/go.mod", "module example.com/app\n\ngo 1.22\n\nrequire example.com/dep v1.0.0\n")
	f.write("home/src/app/main.go", "package main\n\nimport \"example.com/dep\"\n\nfunc main() { println(dep.Word) }\n")
	tidy := exec.Command(goBin, "mod", "tidy")
	tidy.Dir = proj
	tidy.Env = append(os.Environ(), "HOME="+f.home, "GOMODCACHE="+hostMod, "GOPROXY=file://"+proxy,
		"GONOSUMDB=example.com", "GOFLAGS=-modcacherw", "GOCACHE="+filepath.Join(f.dir, "gocache"), "GOTOOLCHAIN=local")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy on the host: %v\n%s", err, out)
	}
	os.RemoveAll(proxy)
	before := listTree(hostMod)

	ex, err := New(f.cfg, Options{
		Home: f.home, InitPath: f.ex.opts.InitPath, PrivatePaths: f.ex.opts.PrivatePaths,
		HostPath:      filepath.Dir(goBin) + ":/usr/local/bin:/usr/bin:/bin",
		ToolCacheRoot: f.ex.opts.ToolCacheRoot,
		ToolHost:      toolcache.Host{Home: f.home, GoModCache: hostMod},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.ex = ex
	// go list resolves the import as a build would (fetching, checking
	// go.sum, extracting) without compiling the standard library.
	o := f.run(`GOTOOLCHAIN=local go list -f '{{.Dir}}' example.com/dep`, func(r *api.ExecRequest) { r.Cwd = proj })
	agentMod := filepath.Join(f.ex.opts.ToolCacheRoot, "cli", "go-mod", "example.com", "dep@v1.0.0")
	if exitOf(o) != 0 || strings.TrimSpace(o.Result.Stdout) != agentMod {
		t.Fatalf("go list in the sandbox: exit %d, want %s\n%s%s", exitOf(o), agentMod, o.Result.Stdout, o.Result.Stderr)
	}
	if _, err := os.Stat(filepath.Join(agentMod, "dep.go")); err != nil {
		t.Errorf("the agent's module cache: %v", err)
	}
	if after := listTree(hostMod); !slices.Equal(before, after) {
		t.Errorf("the host's module cache changed:\nbefore %v\nafter  %v", before, after)
	}
}

// listTree is every path below dir with its size and time.
func listTree(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			if fi, err := d.Info(); err == nil {
				out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
			}
		}
		return nil
	})
	return out
}
