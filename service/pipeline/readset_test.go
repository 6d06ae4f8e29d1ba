package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

// A settings file that tries every key that could only widen plans the
// same execution as no file at all.
func TestSettingsFileWideningPlansNothingNew(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, "src"), 0o755)
	srt := filepath.Join(dir, "srt.json")
	os.WriteFile(srt, []byte(`{
  "network": {"allowedDomains": [], "allowUnixSockets": ["/run/docker.sock"], "allowAllUnixSockets": true,
              "allowLocalBinding": true, "httpProxyPort": 3128, "socksProxyPort": 1080},
  "filesystem": {"denyRead": [], "allowRead": ["~/.ssh"], "allowWrite": ["~/src"], "denyWrite": [],
                 "disabled": true, "allowGitConfig": true},
  "enableWeakerNestedSandbox": true, "enableWeakerNetworkIsolation": true, "allowAppleEvents": true
}`), 0o644)
	plan := func(settings bool) *Executor {
		user := filepath.Join(dir, "plain.yaml")
		body := "policy:\n  egress_allowlist: [github.com]\n"
		if settings {
			user = filepath.Join(dir, "settings.yaml")
			body += "exec:\n  sandbox:\n    settings_file: " + srt + "\n"
		}
		os.WriteFile(user, []byte(body), 0o644)
		l, err := policy.Load(policy.LoadOptions{Home: home, UserFile: user})
		if err != nil {
			t.Fatal(err)
		}
		if settings && len(l.Config.Settings.Ignored) != 12 {
			t.Errorf("ignored %d entries, want 12: %+v", len(l.Config.Settings.Ignored), l.Config.Settings.Ignored)
		}
		ex, err := New(&l.Config, Options{Home: home, ToolCacheRoot: filepath.Join(home, ".cache", "gatehouse", "sandbox")})
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	plain, widened := plan(false), plan(true)
	roots, err := plain.workspaceRoots("")
	if err != nil {
		t.Fatal(err)
	}
	req := &api.ExecRequest{Command: "true", Agent: "cli"}
	c := backendChoice{backend: "bubblewrap", initPath: "/init", bwrapPath: "/bwrap"}
	a := plain.spec(req, roots[0], roots, plain.rootJudge(), "id", 10, c)
	b := widened.spec(req, roots[0], roots, widened.rootJudge(), "id", 10, c)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the widening file changed the plan:\n%+v\nwant\n%+v", b, a)
	}
	if !reflect.DeepEqual(plain.cfg.Policy, widened.cfg.Policy) {
		t.Errorf("the widening file changed the policy")
	}
}

// Under read: workspace the agent's Go module cache is seeded from the
// host's only when read_allow shows it; under host it always is.
func TestReadPostureSeedsOnlyWhatIsShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	hostMod := filepath.Join(home, "go", "pkg", "mod")
	os.MkdirAll(filepath.Join(hostMod, "cache", "download"), 0o755)
	os.MkdirAll(filepath.Join(home, "src"), 0o755)
	seeded := func(read string, allow []string) bool {
		l, err := policy.Load(policy.LoadOptions{Home: home})
		if err != nil {
			t.Fatal(err)
		}
		l.Config.Exec.Sandbox.Read, l.Config.Exec.Sandbox.ReadAllow = read, allow
		ex, err := New(&l.Config, Options{Home: home, ToolCacheRoot: filepath.Join(home, ".cache", "gatehouse", "sandbox"),
			ToolHost: toolcache.Host{Home: home, GoModCache: hostMod}})
		if err != nil {
			t.Fatal(err)
		}
		roots, err := ex.workspaceRoots("")
		if err != nil {
			t.Fatal(err)
		}
		s := ex.spec(&api.ExecRequest{Command: "true", Agent: "cli"}, roots[0], roots, ex.rootJudge(), "id", 10, backendChoice{backend: "bubblewrap"})
		return slices.ContainsFunc(s.Env, func(kv string) bool { return strings.HasPrefix(kv, "GOPROXY=file://"+hostMod) })
	}
	if !seeded(policy.ReadHost, nil) {
		t.Error("host: not seeded")
	}
	if seeded(policy.ReadWorkspace, nil) {
		t.Error("workspace without read_allow: seeded from a hidden cache")
	}
	if !seeded(policy.ReadWorkspace, []string{filepath.Join(home, "go")}) {
		t.Error("workspace with ~/go in read_allow: not seeded")
	}
}
