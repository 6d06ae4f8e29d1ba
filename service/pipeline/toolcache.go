package pipeline

// This file gives each execution its agent's tool caches (service/toolcache):
// the directory bound writable, the variables pointed into it, and the
// size cap kept after the run.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

// toolCacheOf returns req's agent's tool cache, or nil when the executor
// has none or its root is inside a deny-read path (the sandbox cannot bind
// into a hidden directory; the tools then see the host's caches
// read-only).
func (e *Executor) toolCacheOf(req *api.ExecRequest, denyRead []string) *toolcache.Cache {
	root := e.opts.ToolCacheRoot
	if root == "" {
		return nil
	}
	for _, d := range denyRead {
		if sandbox.Within(root, d) {
			return nil
		}
	}
	c := toolcache.For(root, req.Agent)
	return &c
}

// toolEnv is the variables of the tool cache c (none for nil) and, under a
// backend that binds paths, the private runtime directory.
func (e *Executor) toolEnv(c *toolcache.Cache, backend sandbox.Backend, read sandbox.ReadPosture, hide, allow []string) (env []string, runtimeDir string) {
	if c == nil {
		return nil, ""
	}
	// Under the workspace posture the host's module cache and rustup
	// are seeded from only where read_allow shows them.
	host := e.opts.ToolHost
	if read == sandbox.ReadWorkspace {
		shown := func(p string) bool { return readable(p, hide, allow) }
		if host.GoModCache != "" && !shown(host.GoModCache) {
			host.GoModCache = ""
		}
		if host.Home != "" && !shown(filepath.Join(host.Home, ".rustup")) {
			host.Home = ""
		}
	}
	env = c.Env(host)
	if backend.BindsPaths() {
		runtimeDir = "/run/user/" + strconv.Itoa(os.Getuid())
		env = append(env, "XDG_RUNTIME_DIR="+runtimeDir)
	}
	return env, runtimeDir
}

// prepareToolCache creates the directories of the tool cache dir.
func (e *Executor) prepareToolCache(dir string) error {
	if dir == "" {
		return nil
	}
	c := toolcache.Cache{Root: e.opts.ToolCacheRoot, Dir: dir}
	if err := c.Prepare(e.opts.Home); err != nil {
		return fmt.Errorf("preparing the tool cache %s: %w", c.Dir, err)
	}
	return nil
}

// trimToolCaches keeps the tool caches under exec.sandbox.cache_max,
// measuring them at most every toolcache.TrimEvery.
func (e *Executor) trimToolCaches() {
	root := e.opts.ToolCacheRoot
	if root == "" {
		return
	}
	if _, err := toolcache.MaybeTrim(root, int64(e.cfg.Exec.Sandbox.CacheMax), time.Now()); err != nil {
		e.opts.Logger.Warn("trimming the tool caches", "root", root, "err", err)
	}
}
