package pipeline

// This file builds what a command runs with: its environment and its
// sandbox plan (sandbox.Spec).

import (
	"os/user"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// env constructs the command's environment: nothing of the launcher's but
// PATH is carried over.
func (e *Executor) env(req *api.ExecRequest, dir, id string, tools []string) []string {
	path := e.opts.HostPath
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	name := "user"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + e.opts.Home,
		"USER=" + name,
		"LOGNAME=" + name,
		"SHELL=" + e.cfg.Exec.Shell,
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=/tmp",
		"PWD=" + dir,
		"GATEHOUSE_EXECUTION_ID=" + id,
	}
	env = append(env, tools...)
	for k, v := range req.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// spec is the sandbox plan of req in dir, with roots (judged by j, whose
// step resolves the deny-read set too: denyReadBy).
func (e *Executor) spec(req *api.ExecRequest, dir string, roots []string, j *policy.RootJudge, id string, timeout int, c backendChoice) *sandbox.Spec {
	l := e.cfg.Exec.Limits
	writeDeny := e.WriteDeny()
	denyRead := e.denyReadBy(j)
	tc := e.toolCacheOf(req, denyRead) // toolcache.go
	// What of the roots is writable (a settings file may narrow it), and
	// under the workspace read posture what is readable (readset.go).
	writable := e.cfg.Settings.Writable(roots)
	read, hide, allow := e.readPlan(roots, writable)
	if e.cfg.Settings != nil {
		writeDeny = append(writeDeny, e.cfg.Settings.DenyWrite...)
	}
	tools, runtimeDir := e.toolEnv(tc, c.backend, read, hide, allow)
	s := &sandbox.Spec{
		ID:             id,
		Shell:          e.cfg.Exec.Shell,
		Command:        req.Command,
		Dir:            dir,
		Env:            e.env(req, dir, id, tools),
		Stdin:          []byte(req.Stdin),
		WorkspaceRoots: writable,
		DenyRead:       denyRead,
		WriteDeny:      writeDeny,
		Read:           read,
		ReadHide:       hide,
		ReadAllow:      allow,
		Seccomp:        sandbox.SeccompLevel(e.cfg.Exec.Sandbox.Seccomp),
		AllowPtrace:    e.cfg.Exec.Sandbox.AllowPtrace,
		Timeout:        time.Duration(timeout) * time.Second,
		TmpfsSize:      int64(l.TmpfsSize),
		FileSizeMax:    int64(l.FileSizeMax),
		MemoryMax:      int64(l.MemoryMax),
		PidsMax:        int64(l.PidsMax),
		OutputMax:      int64(l.OutputMaxBytes),
		InitPath:       c.initPath,
		HandOff:        e.opts.OneShot,
		BwrapPath:      c.bwrapPath,
		RuntimeDir:     runtimeDir,
	}
	if tc != nil {
		s.ToolCache = &sandbox.ToolCache{Root: tc.Root, Dir: tc.Dir}
	}
	return s
}
