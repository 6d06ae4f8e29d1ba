// Package toolcache gives each agent's sandboxed commands their own
// writable tool caches (Go's build and module caches, npm, pip, cargo,
// Gradle, Maven, …) in the user's cache directory, kept across executions
// so that the second build is fast, while the host's own caches are never
// written from a sandbox: a poisoned build cache would run on the host
// later.
//
// One directory per agent, below Root:
//
//	~/.cache/gatehouse/sandbox/claude-code/{xdg,go-build,go-mod,npm,pip,…}
//
// The executor binds the agent's directory writable into the sandbox and
// hides the other agents' (see sandbox.Spec.ToolCache); Env points the
// tools' variables into it.
package toolcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/nofollow"
)

// A Cache is one agent's cache directory.
type Cache struct {
	// Root holds every agent's directory.
	Root string
	// Dir is this agent's: Root/<agent>.
	Dir string
}

// For returns agent's cache below root. An agent name that is not a plain
// file name ("claude-code", "cli", "my-mcp-client") is hashed, so that no
// name can lead out of root.
func For(root, agent string) Cache {
	return Cache{Root: root, Dir: filepath.Join(root, dirName(agent))}
}

// dirName is agent's directory name.
func dirName(agent string) string {
	if plainName(agent) {
		return agent
	}
	sum := sha256.Sum256([]byte(agent))
	return "agent-" + hex.EncodeToString(sum[:8])
}

// plainName reports whether s is 1 to 64 letters, digits, '.', '_' and
// '-', not starting with '.' or '-'.
func plainName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// A tool is one variable pointed into the agent's cache, at sub.
type tool struct {
	env, sub string
}

// tools are the variables Env sets to directories of the agent's cache.
// XDG_CACHE_HOME covers the many tools that follow it (uv, poetry,
// ccache, sccache, composer, node-gyp, Playwright, Cypress, torch, …);
// the others are named because their tools do not.
var tools = []tool{
	{"XDG_CACHE_HOME", "xdg"},
	{"GOCACHE", "go-build"},
	{"GOMODCACHE", "go-mod"},
	{"npm_config_cache", "npm"},
	{"YARN_CACHE_FOLDER", "yarn"},
	// pnpm's store; not as npm_config_store_dir, which npm warns about.
	{"pnpm_config_store_dir", "pnpm-store"},
	{"PIP_CACHE_DIR", "pip"},
	{"CARGO_HOME", "cargo"},
	{"GRADLE_USER_HOME", "gradle"},
	{"HF_HOME", "huggingface"},
	{"BUN_INSTALL_CACHE_DIR", "bun"},
	{"DENO_DIR", "deno"},
	{"NUGET_PACKAGES", "nuget"},
}

// Host is what Env takes from the host's tools: where they keep what the
// agent's caches are seeded from, read-only.
type Host struct {
	// Home is the user's home directory.
	Home string
	// GoModCache is the host's Go module cache ("" when there is none);
	// GoProxy is the host's GOPROXY ("" means Go's default).
	GoModCache, GoProxy string
}

// Env returns the variables that point the tools into c. Go modules are
// seeded from the host's module cache: its download directory is the
// first GOPROXY entry (file://), so a module the host has is copied into
// the agent's cache without the network and the host's cache is only read.
// Cargo reads the host's configuration and tools through links Prepare
// makes; RUSTUP_HOME stays the host's, read-only.
func (c Cache) Env(h Host) []string {
	var env []string
	for _, t := range tools {
		env = append(env, t.env+"="+filepath.Join(c.Dir, t.sub))
	}
	env = append(env, "MAVEN_OPTS=-Dmaven.repo.local="+filepath.Join(c.Dir, "m2", "repository"))
	if dl := filepath.Join(h.GoModCache, "cache", "download"); h.GoModCache != "" && isDir(dl) {
		proxy := h.GoProxy
		if proxy == "" {
			proxy = "https://proxy.golang.org,direct"
		}
		env = append(env, "GOPROXY=file://"+filepath.ToSlash(dl)+","+proxy)
	} else if h.GoProxy != "" {
		env = append(env, "GOPROXY="+h.GoProxy)
	}
	if h.Home != "" {
		if r := filepath.Join(h.Home, ".rustup"); isDir(r) {
			env = append(env, "RUSTUP_HOME="+r)
		}
	}
	return env
}

// cargoLinks are what CARGO_HOME holds that the agent's cache takes from
// the host's ~/.cargo, read-only: configuration and installed tools, not
// the registry (which the agent fills itself) and never credentials.
var cargoLinks = []string{"config.toml", "config", "bin", "env"}

// Prepare creates c's directories (private to the user) and the links to
// the host's cargo configuration; it is cheap when they exist.
//
// The agent's commands write c.Dir, so a command may have replaced any
// directory in it with a link (to ~/.ssh, say), and may be doing so
// while Prepare runs. Nothing below c.Dir is followed (nofollow): a link
// or file standing where one of Gatehouse's directories belongs is
// removed as an entry and a directory made in its place; a cargo entry
// that is not Gatehouse's link is replaced by it, except a directory the
// agent made, which is left as the agent's own. Root is the user's, not
// the sandbox's, and is created by path.
func (c Cache) Prepare(home string) error {
	if filepath.Dir(c.Dir) != filepath.Clean(c.Root) {
		return fmt.Errorf("tool cache %s is not directly in %s", c.Dir, c.Root)
	}
	if err := os.MkdirAll(c.Root, 0o700); err != nil {
		return err
	}
	root, err := nofollow.Open(c.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	dir, err := root.MakeDir(filepath.Base(c.Dir), 0o700)
	if err != nil {
		return err
	}
	defer dir.Close()
	subs := []string{"m2/repository"}
	for _, t := range tools {
		subs = append(subs, t.sub)
	}
	for _, sub := range subs {
		d, err := dir.MakeDir(sub, 0o700)
		if err != nil {
			return err
		}
		d.Close()
	}
	if home == "" {
		return nil
	}
	cargo, err := dir.OpenDir("cargo")
	if err != nil {
		return err
	}
	defer cargo.Close()
	for _, name := range cargoLinks {
		host := filepath.Join(home, ".cargo", name)
		if _, err := os.Lstat(host); err != nil {
			continue
		}
		if cur, err := cargo.Readlink(name); err == nil && cur == host {
			continue
		}
		if fi, err := cargo.Lstat(name); err == nil && fi.IsDir() {
			continue // the agent's own (cargo install into a directory it made)
		}
		if err := cargo.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := cargo.Symlink(host, name); err != nil {
			return err
		}
	}
	return nil
}

// HostGo returns the host's Go module cache and GOPROXY as the go command
// would see them, without running it: getenv, then Go's environment file
// ($XDG_CONFIG_HOME/go/env, or ~/Library/Application Support/go/env on
// macOS: configDir), then Go's defaults.
func HostGo(home, configDir string, getenv func(string) string) (modCache, proxy string) {
	file := map[string]string{}
	if configDir != "" {
		if b, err := os.ReadFile(filepath.Join(configDir, "go", "env")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
					file[k] = v
				}
			}
		}
	}
	get := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return file[k]
	}
	proxy = get("GOPROXY")
	if modCache = get("GOMODCACHE"); modCache != "" {
		return modCache, proxy
	}
	gopath := get("GOPATH")
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	if first, _, _ := strings.Cut(gopath, string(os.PathListSeparator)); first != "" {
		modCache = filepath.Join(first, "pkg", "mod")
	}
	return modCache, proxy
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Cold reports whether c holds nothing yet: no directory, or none of its
// tools' directories has an entry (cargo's links to the host's
// configuration are not a cache). A command's first build there fetches
// and compiles everything. Nothing in c.Dir is followed: the agent's
// commands write it.
func (c Cache) Cold() bool {
	dir, err := nofollow.Open(c.Dir)
	if err != nil {
		return true
	}
	defer dir.Close()
	for _, t := range tools {
		entries, err := dir.ReadDir(t.sub)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if t.sub == "cargo" && slices.Contains(cargoLinks, e.Name) {
				continue
			}
			return false
		}
	}
	return true
}
