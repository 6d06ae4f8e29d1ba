package service

// This file decides the access of an agent's own file tools (Claude Code's
// Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep), which run in the
// agent's process, outside every sandbox. Its rules:
//
//   - every path is resolved as the kernel would open it: symlinks
//     followed element by element, ".." taken after them; from the first
//     element that does not exist, the rest is appended as written. The
//     path cleaned first (as a tool that normalises it would open it) is
//     resolved too, and both must pass;
//   - no path may be in, or be, the deny-read set or Gatehouse's own
//     config, state, relay and socket directories (the executor's one
//     list, DenyRead, with the socket's directory), the directories the
//     executions' credential files are made in, or another agent's tool
//     cache (a command may have left a token there);
//   - no path may lead into a process's directory in /proc (/proc/<pid>,
//     /proc/self, /proc/thread-self, and /dev/fd, /dev/stdin and the
//     like, which are links there): its environ holds the credentials a
//     running command was given, its mem, cmdline and fd what the process
//     holds, and its root, cwd, exe, fd and map_files are links into
//     another process's view of the file system, which Gatehouse cannot
//     judge from its own. Resolution stops there: those links are never
//     followed;
//   - a search (Glob, Grep) may not start above one of those either: it
//     would read what is inside;
//   - a write must land inside the effective workspace roots, and not in
//     the write-deny set there (.git/hooks, .claude/, rc files, …: where a
//     write becomes code that runs later outside any sandbox), matched at
//     any depth below a root;
//   - a path that cannot be resolved (permission denied, a symlink loop)
//     is refused;
//   - every decision is an audit event, action type file:read or
//     file:write.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

// Blocked_by codes of file-tool denials.
const (
	DenyPathDenied           = "path_denied"
	DenyPathOutsideWorkspace = "path_outside_workspace"
	DenyPathWriteDenied      = "path_write_denied"
)

// maxFilePaths bounds the paths of one file-tool request.
const maxFilePaths = 16

// FileAccess decides req and records the decision.
func (s *Service) FileAccess(ctx context.Context, req api.FileAccessRequest) (*api.DecideResponse, error) {
	g := s.gen.Load()
	resp := &api.DecideResponse{Routing: g.ex.Config().Policy.BuiltinExecRouting}
	if code, reason := checkFileRequest(&req); code != "" {
		resp.Decision, resp.BlockedBy, resp.Reason = api.DecisionDeny, code, reason
		return resp, nil
	}
	ev := api.Event{
		ID:            pipeline.NewID(),
		Time:          time.Now().UTC(),
		Agent:         req.Agent,
		Surface:       req.Surface,
		SessionID:     req.SessionID,
		ActionType:    api.ActionFileRead,
		Decision:      api.DecisionAllow,
		Cwd:           req.Cwd,
		Tool:          req.Tool,
		Paths:         req.Paths,
		ResolvedCmds:  []string{},
		PinnedScripts: []api.Pin{},
		Credentials:   []string{},
		Egress:        api.Egress{DeniedHosts: []string{}},
	}
	if req.Access == api.FileWrite {
		ev.ActionType = api.ActionFileWrite
	}
	scope := fileScope{
		denied:    fileDenied(g.ex, s.opts),
		roots:     g.ex.WorkspaceRootsFor(req.Agent),
		writeDeny: g.ex.WriteDeny(),
	}
	if root := g.ex.ToolCacheRoot(); root != "" {
		scope.cacheRoot, scope.ownCache = root, toolcache.For(root, req.Agent).Dir
	}
	if code, reason := scope.decide(&req); code != "" {
		ev.Decision, ev.BlockedBy, ev.Reason = api.DecisionDeny, code, reason
	}
	resp.Decision, resp.BlockedBy, resp.Reason, resp.EventID = ev.Decision, ev.BlockedBy, ev.Reason, ev.ID
	// On the record before the answer (auditgate.go): a call that cannot
	// be recorded is refused unless policy.audit_required is false.
	return s.recordDecision(g.ex, ev, resp), nil
}

// fileDenied are the places no file tool may touch: the executor's
// deny-read set, the relay's and the socket's directories, and the
// credential directories (where this executor makes them, and the
// default, should another process of the user's make them there).
func fileDenied(ex *pipeline.Executor, o Options) []string {
	return append(ex.DenyRead(), o.RelayDir, filepath.Dir(o.SocketPath), ex.CredentialDir(), broker.DefaultDir(os.Getenv("XDG_RUNTIME_DIR")))
}

// checkFileRequest checks the request's form and makes its paths absolute;
// it returns a blocked_by code and reason when it is malformed.
func checkFileRequest(req *api.FileAccessRequest) (string, string) {
	bad := func(msg string) (string, string) { return "invalid_argument", msg }
	switch {
	case req.Access != api.FileRead && req.Access != api.FileWrite:
		return bad(fmt.Sprintf("access %q: want read or write", req.Access))
	case len(req.Paths) == 0:
		return bad("the request names no path")
	case len(req.Paths) > maxFilePaths:
		return bad(fmt.Sprintf("the request names %d paths, more than %d", len(req.Paths), maxFilePaths))
	}
	for i, p := range req.Paths {
		switch {
		case p == "" || strings.ContainsRune(p, 0):
			return bad(fmt.Sprintf("path %q is empty or holds a NUL byte", p))
		case filepath.IsAbs(p):
		case filepath.IsAbs(req.Cwd):
			req.Paths[i] = req.Cwd + string(filepath.Separator) + p
		default:
			return bad(fmt.Sprintf("path %q is relative and cwd %q is not absolute", p, req.Cwd))
		}
	}
	return "", ""
}

// fileScope is what file tools may touch under one configuration.
type fileScope struct {
	denied    []string // no access at all
	roots     []string // writable
	writeDeny []string // not writable in a root: names relative to it, a directory's with a final "/"
	// cacheRoot holds every agent's tool cache; only ownCache, the
	// asking agent's, is open to it.
	cacheRoot, ownCache string
}

// decide returns a blocked_by code and a reason for the model, or "" when
// req may go ahead.
func (f fileScope) decide(req *api.FileAccessRequest) (string, string) {
	denied := resolveEach(f.denied)
	verb := "read"
	if req.Access == api.FileWrite {
		verb = "change"
	}
	for _, p := range req.Paths {
		real, err := resolvedForms(p)
		if err != nil {
			return DenyPathDenied, fmt.Sprintf("%s may not %s %s: Gatehouse cannot tell where it leads (%v); use a path that resolves plainly.", req.Tool, verb, p, err)
		}
		for _, r := range real {
			if procPrivate(r) || (req.Search && within(procDir, r)) {
				return DenyPathDenied, fmt.Sprintf("%s may not %s %s: a process's directory in /proc holds its environment (the credentials a running command was given), its memory and its open files, "+
					"and links into its view of the file system; Gatehouse keeps file tools out of it.", req.Tool, verb, describe(p, r))
			}
			if root := f.otherCache(r, req.Search); root != "" {
				return DenyPathDenied, fmt.Sprintf("%s may not %s %s: it is in another agent's tool cache (below %s), where that agent's commands may have left credentials; "+
					"use this agent's own cache (%s) or files outside.", req.Tool, verb, describe(p, r), root, f.ownCache)
			}
			for _, d := range denied {
				if within(r, d) || (req.Search && within(d, r)) {
					return DenyPathDenied, fmt.Sprintf("%s may not %s %s: %s is kept from agents by Gatehouse (its own configuration and state, and the deny-read set); "+
						"work with files outside it, and ask the user to do anything there in a terminal.", req.Tool, verb, describe(p, r), d)
				}
			}
			if req.Access == api.FileWrite && !withinAny(r, f.roots) {
				return DenyPathOutsideWorkspace, fmt.Sprintf("%s may not change %s: it is outside Gatehouse's workspace roots (%s); "+
					"write inside them, or ask the user to add the directory to policy.workspace_roots.", req.Tool, describe(p, r), strings.Join(f.roots, ", "))
			}
			if req.Access != api.FileWrite {
				continue
			}
			for _, root := range f.roots {
				rel, err := filepath.Rel(root, r)
				if err != nil || !within(r, root) {
					continue
				}
				if e := writeDenied(filepath.ToSlash(rel), f.writeDeny); e != "" {
					return DenyPathWriteDenied, fmt.Sprintf("%s may not change %s: %s is in Gatehouse's write-deny set, where a write becomes code or settings that take effect outside any sandbox; "+
						"ask the user to make this change in a terminal.", req.Tool, describe(p, r), e)
				}
			}
		}
	}
	return "", ""
}

// otherCache returns the tool cache root when the resolved path r is in
// another agent's cache there, or (for a search) holds one; "" when not.
func (f fileScope) otherCache(r string, search bool) string {
	if f.cacheRoot == "" {
		return ""
	}
	for _, own := range resolveEach([]string{f.ownCache}) {
		if within(r, own) {
			return ""
		}
	}
	for _, root := range resolveEach([]string{f.cacheRoot}) {
		if within(r, root) || search && within(root, r) {
			return root
		}
	}
	return ""
}

// writeDenied returns the write-deny entry the slash-separated path rel
// (relative to a workspace root) falls under, at any depth: a directory
// entry ("a/b/") covers the directory and everything in it, a file entry
// ("a/b") the path that ends with it.
func writeDenied(rel string, entries []string) string {
	parts := strings.Split(rel, "/")
	for _, e := range entries {
		dir := strings.HasSuffix(e, "/")
		ep := strings.Split(strings.Trim(e, "/"), "/")
		for i := 0; i+len(ep) <= len(parts); i++ {
			if slices.Equal(parts[i:i+len(ep)], ep) && (dir || i+len(ep) == len(parts)) {
				return e
			}
		}
	}
	return ""
}

// describe names path p, and where it resolves when that differs.
func describe(p, real string) string {
	if filepath.Clean(p) == real {
		return real
	}
	return fmt.Sprintf("%s (which resolves to %s)", p, real)
}

// resolvedForms returns where p leads as written and as cleaned first.
func resolvedForms(p string) ([]string, error) {
	a, err := resolvePath(p)
	if err != nil {
		return nil, err
	}
	b, err := resolvePath(filepath.Clean(p)) // cleaned first as well, not instead: a tool that normalises the path opens this one
	if err != nil {
		return nil, err
	}
	if a == b {
		return []string{a}, nil
	}
	return []string{a, b}, nil
}

// resolveEach returns each path cleaned and, where it differs, resolved
// too: a denied directory is denied under either name.
func resolveEach(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		out = append(out, filepath.Clean(p))
		if r, err := resolvePath(p); err == nil && r != filepath.Clean(p) {
			out = append(out, r)
		}
	}
	return out
}

// procDir is where the kernel shows processes.
const procDir = "/proc"

// procPrivate reports whether the absolute, clean path p is a process's
// directory in /proc or inside one: /proc/<pid>, /proc/self,
// /proc/thread-self and what is below them.
func procPrivate(p string) bool {
	rest, ok := strings.CutPrefix(filepath.ToSlash(p), procDir+"/")
	if !ok {
		return false
	}
	name, _, _ := strings.Cut(rest, "/")
	if name == "self" || name == "thread-self" {
		return true
	}
	if name == "" {
		return false
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// resolvePath returns where the absolute path p leads (fspath.Walk: each
// element that exists resolved as the kernel would, ".." taken from where
// a symlink leads; from the first element that does not exist, the rest
// appended cleaned). A process's directory in /proc (procPrivate) is not
// entered: its links lead into that process's view of the file system, or
// are this process's own (/proc/self), so the path is returned as it
// stands there, which the caller refuses.
func resolvePath(p string) (string, error) { return fspath.Walk(p, procPrivate) }

// within reports whether p is dir or under it.
func within(p, dir string) bool { return sandbox.Within(p, filepath.Clean(dir)) }

func withinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}
