package toolcache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestForKeepsAgentsInsideRoot(t *testing.T) {
	root := "/c/sandbox"
	for agent, want := range map[string]string{
		"claude-code":   "/c/sandbox/claude-code",
		"cli":           "/c/sandbox/cli",
		"my.mcp_client": "/c/sandbox/my.mcp_client",
	} {
		if got := For(root, agent).Dir; got != want {
			t.Errorf("For(%q) = %s, want %s", agent, got, want)
		}
	}
	seen := map[string]bool{}
	for _, agent := range []string{"", ".", "..", "../x", "a/b", "-rf", ".hidden", strings.Repeat("a", 65), "é"} {
		d := For(root, agent).Dir
		if filepath.Dir(d) != root || !strings.HasPrefix(filepath.Base(d), "agent-") || seen[d] {
			t.Errorf("For(%q) = %s: want a distinct hashed name in %s", agent, d, root)
		}
		seen[d] = true
	}
}

func TestEnvPointsIntoTheCache(t *testing.T) {
	home := t.TempDir()
	mod := filepath.Join(home, "go", "pkg", "mod")
	c := For(filepath.Join(home, ".cache", "gatehouse", "sandbox"), "cli")
	vars := func(env []string) map[string]string {
		m := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := m[k]; dup {
				t.Errorf("%s set twice", k)
			}
			m[k] = v
		}
		return m
	}
	// No host module cache: no seeding, and no GOPROXY unless the host
	// has one.
	m := vars(c.Env(Host{Home: home, GoModCache: mod}))
	for _, k := range []string{"XDG_CACHE_HOME", "GOCACHE", "GOMODCACHE", "npm_config_cache", "PIP_CACHE_DIR", "CARGO_HOME", "YARN_CACHE_FOLDER", "GRADLE_USER_HOME", "HF_HOME"} {
		if !strings.HasPrefix(m[k], c.Dir+"/") {
			t.Errorf("%s=%q, want inside %s", k, m[k], c.Dir)
		}
	}
	if m["MAVEN_OPTS"] != "-Dmaven.repo.local="+c.Dir+"/m2/repository" {
		t.Errorf("MAVEN_OPTS=%q", m["MAVEN_OPTS"])
	}
	if _, ok := m["GOPROXY"]; ok {
		t.Errorf("GOPROXY=%q without a host module cache or proxy", m["GOPROXY"])
	}
	if _, ok := m["RUSTUP_HOME"]; ok {
		t.Error("RUSTUP_HOME set without ~/.rustup")
	}
	// With one, its download directory is the first proxy, then the host's.
	os.MkdirAll(filepath.Join(mod, "cache", "download"), 0o755)
	os.MkdirAll(filepath.Join(home, ".rustup"), 0o755)
	m = vars(c.Env(Host{Home: home, GoModCache: mod}))
	if want := "file://" + mod + "/cache/download,https://proxy.golang.org,direct"; m["GOPROXY"] != want {
		t.Errorf("GOPROXY=%q, want %q", m["GOPROXY"], want)
	}
	if m["RUSTUP_HOME"] != filepath.Join(home, ".rustup") {
		t.Errorf("RUSTUP_HOME=%q", m["RUSTUP_HOME"])
	}
	m = vars(c.Env(Host{Home: home, GoModCache: mod, GoProxy: "off"}))
	if want := "file://" + mod + "/cache/download,off"; m["GOPROXY"] != want {
		t.Errorf("GOPROXY=%q, want %q", m["GOPROXY"], want)
	}
}

func TestPrepareLinksCargoConfigNotCredentials(t *testing.T) {
	home := t.TempDir()
	cargo := filepath.Join(home, ".cargo")
	os.MkdirAll(filepath.Join(cargo, "bin"), 0o755)
	os.WriteFile(filepath.Join(cargo, "config.toml"), []byte("[net]\n"), 0o644)
	os.WriteFile(filepath.Join(cargo, "credentials.toml"), []byte("token"), 0o600)
	c := For(filepath.Join(home, "cache"), "cli")
	for range 2 { // again: nothing changes
		if err := c.Prepare(home); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(c.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache dir: %v %v", fi, err)
	}
	for _, sub := range []string{"go-build", "go-mod", "npm", "pip", "xdg", "m2/repository"} {
		if fi, err := os.Stat(filepath.Join(c.Dir, sub)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", sub, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(c.Dir, "cargo", "config.toml")); err != nil || l != filepath.Join(cargo, "config.toml") {
		t.Errorf("config.toml link: %q %v", l, err)
	}
	if l, err := os.Readlink(filepath.Join(c.Dir, "cargo", "bin")); err != nil || l != filepath.Join(cargo, "bin") {
		t.Errorf("bin link: %q %v", l, err)
	}
	if _, err := os.Lstat(filepath.Join(c.Dir, "cargo", "credentials.toml")); err == nil {
		t.Error("credentials.toml is linked into the cache")
	}
}

func TestHostGo(t *testing.T) {
	home, conf := t.TempDir(), t.TempDir()
	none := func(string) string { return "" }
	if mod, proxy := HostGo(home, conf, none); mod != filepath.Join(home, "go", "pkg", "mod") || proxy != "" {
		t.Errorf("defaults: %q %q", mod, proxy)
	}
	os.MkdirAll(filepath.Join(conf, "go"), 0o755)
	os.WriteFile(filepath.Join(conf, "go", "env"), []byte("GOPROXY=https://corp.example/go\nGOPATH=/gp:/other\n"), 0o644)
	if mod, proxy := HostGo(home, conf, none); mod != "/gp/pkg/mod" || proxy != "https://corp.example/go" {
		t.Errorf("go env file: %q %q", mod, proxy)
	}
	env := map[string]string{"GOMODCACHE": "/mc", "GOPROXY": "direct"}
	if mod, proxy := HostGo(home, conf, func(k string) string { return env[k] }); mod != "/mc" || proxy != "direct" {
		t.Errorf("environment: %q %q", mod, proxy)
	}
}

// writeAged writes n bytes at p, last used age ago.
func writeAged(t *testing.T, p string, n int, age time.Duration) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	os.Chtimes(p, when, when)
}

func TestTrimRemovesLeastRecentlyUsedAcrossAgents(t *testing.T) {
	root := t.TempDir()
	writeAged(t, filepath.Join(root, "cli", "go-build", "00", "old"), 400, 3*time.Hour)
	writeAged(t, filepath.Join(root, "claude-code", "npm", "older"), 300, 4*time.Hour)
	writeAged(t, filepath.Join(root, "cli", "pip", "new"), 200, time.Minute)
	// An extracted module goes as a whole, read-only as Go leaves it.
	mod := filepath.Join(root, "claude-code", "go-mod", "example.com", "m@v1.0.0")
	writeAged(t, filepath.Join(mod, "a.go"), 100, 2*time.Hour)
	writeAged(t, filepath.Join(mod, "sub", "b.go"), 100, 2*time.Hour)
	when := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(mod, "sub"), when, when)
	os.Chtimes(mod, when, when)
	os.Chmod(filepath.Join(mod, "sub"), 0o555)
	os.Chmod(mod, 0o555)
	t.Cleanup(func() { RemoveAll(root) })

	if n, _ := Size(root); n != 1100 {
		t.Fatalf("size %d, want 1100", n)
	}
	freed, err := Trim(root, 300)
	if err != nil {
		t.Fatal(err)
	}
	// The oldest (older, old), then the module, until 200 are left.
	if freed != 900 {
		t.Errorf("freed %d, want 900", freed)
	}
	var left []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, strings.TrimPrefix(p, root+"/"))
		}
		return nil
	})
	if !slices.Equal(left, []string{"cli/pip/new"}) {
		t.Errorf("left %v, want only the newest", left)
	}
	if _, err := os.Stat(mod); err == nil {
		t.Error("the module directory is still there")
	}
	// Under the cap nothing goes.
	if freed, _ := Trim(root, 300); freed != 0 {
		t.Errorf("freed %d under the cap", freed)
	}
}

func TestMaybeTrimMeasuresAtMostEveryInterval(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	writeAged(t, filepath.Join(root, "cli", "a"), 100, time.Hour)
	if did, err := MaybeTrim(root, 1<<20, now); !did || err != nil {
		t.Fatalf("first: %v %v", did, err)
	}
	writeAged(t, filepath.Join(root, "cli", "b"), 100, time.Minute)
	if did, _ := MaybeTrim(root, 150, now.Add(TrimEvery/2)); did {
		t.Error("measured again within the interval")
	}
	if did, _ := MaybeTrim(root, 150, now.Add(TrimEvery+time.Second)); !did {
		t.Error("did not measure after the interval")
	}
	if _, err := os.Stat(filepath.Join(root, "cli", "a")); err == nil {
		t.Error("the older file survived a trim to 150 bytes")
	}
	if _, err := os.Stat(filepath.Join(root, "cli", "b")); err != nil {
		t.Error("the newer file was trimmed")
	}
}

func TestCleanOneAgentOrAll(t *testing.T) {
	root := t.TempDir()
	writeAged(t, filepath.Join(root, "cli", "go-mod", "x@v1", "f"), 10, 0)
	os.Chmod(filepath.Join(root, "cli", "go-mod", "x@v1"), 0o555)
	writeAged(t, filepath.Join(root, "claude-code", "npm", "g"), 20, 0)
	if freed, err := Clean(root, "cli"); err != nil || freed != 10 {
		t.Errorf("clean cli: %d %v", freed, err)
	}
	if names, _ := Agents(root); !slices.Equal(names, []string{"claude-code"}) {
		t.Errorf("agents left %v", names)
	}
	if freed, err := Clean(root, ""); err != nil || freed != 20 {
		t.Errorf("clean all: %d %v", freed, err)
	}
	if names, _ := Agents(root); len(names) != 0 {
		t.Errorf("agents left %v", names)
	}
}

// A cache is cold until a tool's directory holds something: absent,
// prepared (empty directories and cargo's links to the host's
// configuration), then warm once a build wrote to it. A link the agent
// planted as a tool's directory is not followed to find entries.
func TestCold(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, ".cargo", "config.toml"), nil, 0o644)
	c := For(filepath.Join(t.TempDir(), "sandbox"), "cli")
	if !c.Cold() {
		t.Error("an absent cache is not cold")
	}
	if err := c.Prepare(home); err != nil {
		t.Fatal(err)
	}
	if !c.Cold() {
		t.Error("a prepared, empty cache is not cold")
	}
	// A link planted where a tool's directory is, pointing at a full one.
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	os.RemoveAll(filepath.Join(c.Dir, "npm"))
	if err := os.Symlink(full, filepath.Join(c.Dir, "npm")); err != nil {
		t.Fatal(err)
	}
	if !c.Cold() {
		t.Error("a link to a full directory made the cache warm: it was followed")
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "go-build", "README"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.Cold() {
		t.Error("a cache with a build's entry is cold")
	}
}
