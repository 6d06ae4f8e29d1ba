package pipeline

// The read posture and the settings file in the real sandbox: what a
// command can read, write and reach, as the command sees it.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Under read: workspace a file elsewhere in the home directory is gone,
// a file in the workspace and one in read_allow are readable, the system
// is; under host the same file is readable, as before.
func TestReadPostureWorkspace(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, func(c *policy.Config) {
		c.Exec.Sandbox.Read = policy.ReadWorkspace
		c.Exec.Sandbox.ReadAllow = []string{filepath.Join(filepath.Dir(c.Exec.DefaultCWD), ".allowed")}
	})
	f.write("home/notes/planted.txt", "planted\n")
	f.write("home/.allowed/ok.txt", "allowed\n")
	f.write("home/src/in.txt", "workspace\n")

	o := f.run(`cat ~/notes/planted.txt; echo "exit $?"; ls -A ~`)
	if strings.Contains(o.Result.Stdout, "planted\n") || !strings.Contains(o.Result.Stdout, "exit 1") {
		t.Errorf("the planted file was readable: %q %q", o.Result.Stdout, o.Result.Stderr)
	}
	if strings.Contains(o.Result.Stdout, "notes") {
		t.Errorf("ls ~ shows the hidden directory: %q", o.Result.Stdout)
	}
	if o.Event.ReadPosture != "workspace" {
		t.Errorf("event read_posture %q, want workspace", o.Event.ReadPosture)
	}

	o = f.run(`cat in.txt ~/.allowed/ok.txt && test -r /etc/passwd && test -x /bin/sh && echo system`)
	if exitOf(o) != 0 || o.Result.Stdout != "workspace\nallowed\nsystem\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	// read_allow is read-only; the workspace stays writable; the home
	// directory is no place to write.
	o = f.run(`echo x > ~/.allowed/ok.txt; echo x > ~/new.txt; echo written > out.txt && cat out.txt`)
	if o.Result.Stdout != "written\n" || strings.Count(o.Result.Stderr, "Read-only file system") != 2 {
		t.Errorf("stdout %q, stderr %q", o.Result.Stdout, o.Result.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(f.home, ".allowed", "ok.txt")); string(b) != "allowed\n" {
		t.Errorf("read_allow file changed: %q", b)
	}
	// Other users' and root's home directories are emptied too.
	o = f.run(`ls -A /root /home | grep -v '^/' | grep -v '^$'; true`)
	if o.Result.Stdout != "" {
		t.Errorf("/root or /home show %q", o.Result.Stdout)
	}

	// The same file under host.
	h := bwrapFixture(t, nil)
	h.write("home/notes/planted.txt", "planted\n")
	o = h.run(`cat ~/notes/planted.txt`)
	if exitOf(o) != 0 || o.Result.Stdout != "planted\n" || o.Event.ReadPosture != "host" {
		t.Errorf("host posture: exit %d, stdout %q, read_posture %q", exitOf(o), o.Result.Stdout, o.Event.ReadPosture)
	}
}

// go build, npm and python3 work under read: workspace with their caches
// in the agent's tool cache.
func TestReadPostureWorkspaceTools(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	f := bwrapFixture(t, func(c *policy.Config) { c.Exec.Sandbox.Read = policy.ReadWorkspace })
	ex, err := New(f.cfg, Options{
		Home: f.home, InitPath: f.ex.opts.InitPath, PrivatePaths: f.ex.opts.PrivatePaths,
		HostPath:      filepath.Dir(goBin) + ":/usr/local/bin:/usr/bin:/bin",
		ToolCacheRoot: f.ex.opts.ToolCacheRoot,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.ex = ex
	f.write("home/src/app/go.mod", "module example.com/app\n\ngo 1.22\n")
	f.write("home/src/app/main.go", "package main\n\nfunc main() { println(\"built\") }\n")
	f.write("home/src/lib/package.json", `{"name": "lib", "version": "1.0.0"}`+"\n")
	f.write("home/src/web/package.json", `{"name": "web", "version": "1.0.0"}`+"\n")
	f.write("home/src/py/helper.py", "WORD = 'python'\n")
	f.write("home/src/py/main.py", "import helper\nprint(helper.WORD)\n")
	in := func(sub string) func(*api.ExecRequest) {
		return func(r *api.ExecRequest) { r.Cwd = filepath.Join(f.ws, sub); r.TimeoutSeconds = 300 }
	}

	o := f.run(`GOTOOLCHAIN=local go build -o app . && ./app`, in("app"))
	if exitOf(o) != 0 || o.Result.Stderr != "built\n" {
		t.Errorf("go build: exit %d\n%s%s", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	// (npm install would pin web/package.json, which runs its scripts:
	// the analysis keeps it read-only, whatever the posture.)
	o = f.run(`npm pack ../lib >/dev/null && npm cache add ./lib-1.0.0.tgz && test -d "$npm_config_cache/_cacache" && echo cached`, in("web"))
	if exitOf(o) != 0 || o.Result.Stdout != "cached\n" {
		t.Errorf("npm: exit %d\n%s%s", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	o = f.run(`python3 main.py && test -d __pycache__ && echo cached`, in("py"))
	if exitOf(o) != 0 || o.Result.Stdout != "python\ncached\n" {
		t.Errorf("python3: exit %d\n%s%s", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	cache := filepath.Join(f.ex.opts.ToolCacheRoot, "cli")
	for _, d := range []string{"go-build", "npm"} {
		if _, err := os.Stat(filepath.Join(cache, d)); err != nil {
			t.Errorf("the agent's %s cache: %v", d, err)
		}
	}
}

// A settings file that denies a path, denies a domain and allows a write
// outside the workspace: the path is hidden, the domain refused by the
// proxy with the file named, the write still refused, and the warning
// names the ignored entry.
func TestSettingsFileInTheSandbox(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireBwrap(t)
	dir := sandboxtest.Dir(t)
	home := filepath.Join(dir, "home")
	srt := filepath.Join(dir, "srt.json")
	if err := os.MkdirAll(filepath.Join(home, "outside"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(srt, []byte(`{
  "filesystem": {"denyRead": ["~/private"], "allowWrite": [".", "~/outside"], "denyWrite": []},
  "network": {"allowedDomains": ["*.example.test", "denied.test"], "deniedDomains": ["denied.test"], "allowLocalBinding": true}
}`), 0o644)
	user := filepath.Join(dir, "config.yaml")
	os.WriteFile(user, []byte("exec:\n  sandbox:\n    settings_file: "+srt+"\npolicy:\n  egress_allowlist: [\"*\"]\n"), 0o644)
	var loaded *policy.Loaded
	f := newFixture(t, dir, func(c *policy.Config) {
		l, err := policy.Load(policy.LoadOptions{Home: home, UserFile: user})
		if err != nil {
			t.Fatal(err)
		}
		loaded = l
		cwd := c.Exec.DefaultCWD
		*c = l.Config
		c.Exec.Sandbox.Backend, c.Exec.DefaultCWD = "bubblewrap", cwd
	})
	egressTest.Store(f.ex, &egressTestOptions{resolver: testResolver{"allowed.test": "127.0.0.1"}, loopbackNames: []string{"allowed.test"}})
	t.Cleanup(func() { egressTest.Delete(f.ex) })
	warnings := strings.Join(loaded.Config.Settings.Warnings(), "\n")
	if !strings.Contains(warnings, `filesystem.allowWrite[1]: ignored: "~/outside" is outside the workspace roots`) ||
		!strings.Contains(warnings, "network.allowLocalBinding: ignored") {
		t.Errorf("warnings:\n%s", warnings)
	}
	f.write("home/private/secret.txt", "secret\n")

	o := f.run(`cat ~/private/secret.txt; echo x > ~/outside/y; echo ok > in.txt && cat in.txt`)
	if strings.Contains(o.Result.Stdout, "secret") || o.Result.Stdout != "ok\n" || !strings.Contains(o.Result.Stderr, "Read-only file system") {
		t.Errorf("stdout %q, stderr %q", o.Result.Stdout, o.Result.Stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "outside", "y")); err == nil {
		t.Error("the write outside the workspace reached the host")
	}
	if got := strings.Join(f.cfg.Policy.EgressAllowlist, ","); got != "*.example.test,denied.test" {
		t.Errorf("egress allowlist %q, want it narrowed to the file's", got)
	}

	o = f.run(`curl -sS http://denied.test/ ; echo; curl -sS http://other.example/`)
	if !strings.Contains(o.Result.Stdout, "denied.test:80: denied.test is denied by "+srt+" network.deniedDomains entry \"denied.test\"") {
		t.Errorf("the denied domain's refusal: %q %q", o.Result.Stdout, o.Result.Stderr)
	}
	if !strings.Contains(o.Result.Stdout, "other.example is not on policy.egress_allowlist") {
		t.Errorf("a domain outside allowedDomains: %q", o.Result.Stdout)
	}
	if got := strings.Join(o.Event.Egress.DeniedHosts, ","); got != "denied.test:80,other.example:80" {
		t.Errorf("egress.denied_hosts %q", got)
	}
}
