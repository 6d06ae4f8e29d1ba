package pipeline

import (
	"archive/zip"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
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

// A command that points its cache directories at another directory (here
// ~/.ssh), before and while its agent's other commands run, gets nothing
// there written, replaced or removed: the host's preparation of the cache
// before each execution and warm refill, and the trim after, follow no
// link. The cache is whole again for the next command.
func TestCacheLinksACommandPlantsAreNotFollowed(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	f := newFixture(t, sandboxtest.Dir(t), func(c *policy.Config) { c.Exec.Sandbox.CacheMax = 1 })
	cargo := filepath.Join(f.home, ".cargo")
	os.MkdirAll(filepath.Join(cargo, "bin"), 0o755)
	for _, n := range []string{"config.toml", "config", "env"} {
		os.WriteFile(filepath.Join(cargo, n), []byte("[net]\n"), 0o644)
	}
	// ~/.ssh, with files of the names the preparation and the trim touch.
	ssh := filepath.Join(f.home, ".ssh")
	for name, body := range map[string]string{
		"config": "Host *\n", "id_ed25519": "key", "env": "e", "config.toml": "c", "bin/x": "x",
		"00/old": "precious", "repository/keep": "k",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(ssh, name)), 0o700)
		os.WriteFile(filepath.Join(ssh, name), []byte(body), 0o600)
	}
	before := hashTree(ssh)
	root := f.ex.opts.ToolCacheRoot
	// Each command below is followed by a trim that has work to do.
	trimNext := func() { os.Remove(filepath.Join(root, ".trimmed")) }
	run := func(command string) {
		t.Helper()
		trimNext()
		if o, err := f.try(command); err != nil {
			t.Errorf("%q: %v", command, err)
		} else if o.Event.Status != "completed" {
			t.Errorf("%q: %s %s %s", command, o.Event.Status, o.Event.Reason, o.Result.Stderr)
		}
	}
	dirs := `"$CARGO_HOME" "$GOCACHE" "$npm_config_cache" "$(dirname "${MAVEN_OPTS#*=}")" "${MAVEN_OPTS#*=}"`
	plant := `for d in ` + dirs + `; do rm -rf "$d"; ln -s ~/.ssh "$d"; done`
	fill := `mkdir -p "$GOCACHE/00" && echo cached > "$GOCACHE/00/old"`

	// Between commands: the links are there when the next two start.
	run(fill + " && " + plant)
	run(fill)
	run("true")
	if after := hashTree(ssh); after != before {
		t.Fatalf("~/.ssh changed after the links were planted between commands:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// During a command: one re-plants the links as fast as it can while
	// others of its agent are prepared, run and trimmed, until it has
	// done so twenty times.
	started, stop, count := filepath.Join(f.ws, "racer-started"), filepath.Join(f.ws, "racer-stop"), filepath.Join(f.ws, "racer-count")
	racer := `C="$CARGO_HOME" M="$(dirname "${MAVEN_OPTS#*=}")" G="$GOCACHE"; touch ` + started + `; i=0; ` +
		`while [ ! -e ` + stop + ` ] && [ $i -lt 100000 ]; do ` +
		`rm -rf "$C" "$M" "$G"; ln -s ~/.ssh "$C"; ln -s ~/.ssh "$M"; ln -s ~/.ssh "$G"; ` +
		`rm -f "$C" "$M" "$G"; mkdir -p "$C" "$M/repository" "$G"; i=$((i+1)); echo $i > ` + count + `; done; ` +
		plant + `; echo $i`
	done := make(chan error, 1)
	go func() {
		o, err := f.try(racer)
		if err == nil && o.Event.Status != "completed" {
			err = fmt.Errorf("racer: %s %s", o.Event.Status, o.Result.Stderr)
		}
		if err == nil {
			t.Logf("the racer re-planted its links %s times", strings.TrimSpace(o.Result.Stdout))
		}
		done <- err
	}()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			t.Fatalf("the racer ended before it started racing: %v", err)
		default:
			if _, err := os.Stat(started); err == nil {
				waiting = false
			} else {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	beside, failed := 0, 0
	for ; beside < 500; beside++ {
		if b, _ := os.ReadFile(count); len(b) > 0 {
			if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n >= 20 && beside >= 5 {
				break
			}
		}
		trimNext()
		// The racer may win a race for the cache's directories: the
		// command then fails, or does not start; nothing is followed.
		if o, err := f.try(fill); err != nil || o.Event.Status != "completed" {
			failed++
		}
	}
	t.Logf("%d commands ran beside the racer, %d of them failed", beside, failed)
	if failed == beside {
		t.Errorf("no command beside the racer completed")
	}
	os.WriteFile(stop, nil, 0o644)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The racer ended with its links planted: two more commands.
	run(fill)
	run("true")
	if after := hashTree(ssh); after != before {
		t.Fatalf("~/.ssh changed while a command raced links in:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, sub := range []string{"cargo", "go-build", "npm", "m2", "m2/repository"} {
		if fi, err := os.Lstat(filepath.Join(root, "cli", sub)); err != nil || !fi.IsDir() {
			t.Errorf("the cache's %s: %v %v, want a directory again", sub, fi, err)
		}
	}
}

// hashTree is every entry below dir: its type, mode and content hash.
func hashTree(dir string) string {
	var s strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&s, "%s: %v\n", p, err)
			return nil
		}
		fi, _ := d.Info()
		var sum [32]byte
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			sum = sha256.Sum256(b)
		}
		fmt.Fprintf(&s, "%s %v %x\n", p, fi.Mode(), sum[:8])
		return nil
	})
	return s.String()
}
