package pipeline

// This file says, in the command's own output, what the sandbox and the
// egress proxy refused while it ran (exec.output.explain_refusals). A
// refused connection reaches the agent as curl's "CONNECT tunnel failed,
// response 403", a hidden file as "No such file or directory", a
// write-protected one as "Device or resource busy": the record knows the
// reason, and the agent, which decides what to do next, should too. The
// lines end the command's stderr, after its own output, on every face
// (exec, the relay, MCP): at most maxRefusalLines, and never a host or
// path the command did not itself reach or name. A failed command whose
// words name a host daemon's client or socket (docker, a *.sock path,
// DOCKER_HOST=unix://...) is told that no Unix socket reaches the host:
// the seccomp stage refuses socket(AF_UNIX) and leaves no trace of it
// beyond the command's own "operation not permitted".

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/approvals"
)

// blockedSuffix marks a write-deny file a command made, moved aside
// (sandbox.Result.Blocked).
const blockedSuffix = ".gatehouse-blocked-"

// maxRefusalLines bounds the lines one command gets; the last says how
// many more the record has.
const maxRefusalLines = 4

// refusalFacts are what one run was refused, as the lines need them.
type refusalFacts struct {
	home, cwd string
	roots     []string
	// allowlistField names the egress allowlist the agent's calls use.
	allowlistField string
	deniedHosts    []string             // host:port the proxy refused
	approved       []api.EgressApproval // the answers people gave
	blocked        []string             // write-deny files the command made, moved aside
	// failed says the command did not end with status 0: only then are
	// the paths its words name taken to be what it tripped on.
	failed    bool
	named     []string // absolute paths the command's words name
	denyRead  []string
	writeDeny []string
	// daemons are the host daemons' clients and sockets the command's
	// words name (failed only): seccomp refuses socket(AF_UNIX).
	daemons []string
}

// refusalLines returns the lines that explain f's refusals, each ending
// in a newline; none when nothing was refused.
func refusalLines(f refusalFacts) []string {
	var lines []string
	for _, h := range f.deniedHosts {
		why := "not in " + f.allowlistField
		if a, ok := f.answerFor(h); ok {
			switch a.Answer {
			case api.AnswerDeny, api.AnswerDenyAlways:
				why += fmt.Sprintf("; a person denied it, approval %s", a.ID)
			case approvals.AnswerTimeout:
				why += fmt.Sprintf("; nobody answered approval %s in time", a.ID)
			}
		}
		lines = append(lines, fmt.Sprintf("gatehouse: egress to %s refused (%s)", h, why))
	}
	for _, b := range f.blocked {
		orig := b
		if i := strings.LastIndex(b, blockedSuffix); i > 0 {
			orig = b[:i]
		}
		lines = append(lines, fmt.Sprintf("gatehouse: %s may not be written here (write-deny); what the command made there was moved aside to %s", f.show(orig), f.show(b)))
		f.blocked = append(f.blocked, orig)
	}
	if f.failed {
		seen := map[string]bool{}
		for _, p := range f.named {
			if d := under(p, f.denyRead); d != "" && !seen[d] {
				seen[d] = true
				lines = append(lines, fmt.Sprintf("gatehouse: %s is hidden from commands (deny-read)", f.show(d)))
				continue
			}
			if w := f.writeDenied(p); w != "" && !seen[w] && !slices.Contains(f.blocked, w) {
				seen[w] = true
				lines = append(lines, fmt.Sprintf("gatehouse: %s is read-only here (write-deny)", f.show(w)))
			}
		}
	}
	if f.failed && len(f.daemons) > 0 {
		lines = append(lines, fmt.Sprintf("gatehouse: host daemons over Unix sockets (%s) are unreachable from the sandbox; run that step outside the agent", strings.Join(f.daemons, ", ")))
	}
	if len(lines) > maxRefusalLines {
		more := len(lines) - (maxRefusalLines - 1)
		lines = append(lines[:maxRefusalLines-1], fmt.Sprintf("gatehouse: and %d more refusals (gatehouse audit show has them)", more))
	}
	for i := range lines {
		lines[i] += "\n"
	}
	return lines
}

// answerFor returns the answer a person gave about dest (host:port).
func (f refusalFacts) answerFor(dest string) (api.EgressApproval, bool) {
	for _, a := range f.approved {
		if net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) == dest {
			return a, true
		}
	}
	return api.EgressApproval{}, false
}

// show writes p as the person reads it: relative to the working directory
// inside it, under ~ in the home directory.
func (f refusalFacts) show(p string) string {
	if f.cwd != "" && sandbox.Within(p, f.cwd) && p != f.cwd {
		if rel, err := filepath.Rel(f.cwd, p); err == nil {
			return rel
		}
	}
	return fspath.Tilde(p, f.home)
}

// under returns the entry of set that p lies in (or is), "" for none.
func under(p string, set []string) string {
	for _, d := range set {
		if sandbox.Within(p, d) {
			return d
		}
	}
	return ""
}

// writeDenied returns the write-deny path p is or lies in, "" for none. A
// relative entry is a name under a workspace root or a repository in one
// (a directory entry ends in "/"); an absolute one is a path.
func (f refusalFacts) writeDenied(p string) string {
	for _, w := range f.writeDeny {
		if filepath.IsAbs(w) {
			if sandbox.Within(p, filepath.Clean(w)) {
				return filepath.Clean(w)
			}
			continue
		}
		for _, r := range f.roots {
			if !sandbox.Within(p, r) || p == r {
				continue
			}
			rel := filepath.ToSlash(strings.TrimPrefix(p, r+"/"))
			name := strings.TrimSuffix(w, "/")
			dir := strings.HasSuffix(w, "/")
			// The entry at the root, or in a repository below it.
			for _, at := range []string{"", "/"} {
				var i int
				if at == "" {
					if !strings.HasPrefix(rel, name) {
						continue
					}
				} else if i = strings.Index(rel, "/"+name); i < 0 {
					continue
				} else {
					i++
				}
				rest := rel[i+len(name):]
				if rest == "" || dir && strings.HasPrefix(rest, "/") {
					return filepath.Join(r, rel[:i+len(name)])
				}
			}
		}
	}
	return ""
}

// namedPaths are the absolute paths the words of tree's commands name
// statically: arguments that are paths (resolved against dir) and the
// files of redirections.
func namedPaths(tree *analysis.Tree, dir, home string) []string {
	if tree == nil {
		return nil
	}
	var out []string
	add := func(v string) {
		switch {
		case v == "~" || strings.HasPrefix(v, "~/"):
			v = filepath.Join(home, strings.TrimPrefix(v, "~"))
		case filepath.IsAbs(v):
		case strings.Contains(v, "/") || strings.HasPrefix(v, "."):
			v = filepath.Join(dir, v)
		default:
			return
		}
		out = append(out, filepath.Clean(v))
	}
	for _, n := range tree.Nodes {
		for i, a := range n.Argv {
			if i == 0 || a.Dynamic || a.Glob || strings.HasPrefix(a.Value, "-") {
				continue
			}
			add(a.Value)
		}
		for _, r := range n.Redirs {
			if !r.Dynamic && r.Target != "" && !strings.HasPrefix(r.Target, "&") {
				add(r.Target)
			}
		}
	}
	return out
}

// daemonClients are programs whose work is done by a host daemon they
// reach over a Unix socket: container engines and builders.
var daemonClients = []string{"docker", "docker-compose", "podman", "podman-compose", "nerdctl", "ctr", "crictl", "buildctl"}

// socketWord finds a Unix socket in a word: a unix:// address
// (DOCKER_HOST=unix:///run/docker.sock) or a path ending in .sock (its
// first group).
var socketWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`unix://[^\s"'<>;|&)]*|([\w./~@+-]*\.sock)(?:$|[^\w./~@+-])`)
})

// socketIn returns the socket w names, "" for none.
func socketIn(w string) string {
	m := socketWord().FindStringSubmatch(w)
	switch {
	case m == nil:
		return ""
	case m[1] != "":
		return m[1]
	}
	return m[0]
}

// unixDaemons names what the static words of tree's commands reach a
// host daemon through: a daemon's client (docker), a socket address or
// path. At most three, in the order the words come.
func unixDaemons(tree *analysis.Tree) []string {
	if tree == nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, n := range tree.Nodes {
		if slices.Contains(daemonClients, n.Name) {
			add(n.Name)
		}
		for _, a := range n.Assigns {
			_, v, _ := strings.Cut(a, "=")
			add(socketIn(v))
		}
		for _, a := range n.Argv {
			if !a.Dynamic {
				add(socketIn(a.Value))
			}
		}
		for _, r := range n.Redirs {
			if !r.Dynamic {
				add(socketIn(r.Target))
			}
		}
	}
	return out[:min(len(out), 3)]
}

// explainRefusals writes the lines that explain what ev's run was refused
// to w, the caller's stderr, after the command's own output.
func (e *Executor) explainRefusals(w io.Writer, d *Admitted, spec *sandbox.Spec, raw *sandbox.Result, ev *api.Event) {
	if !e.cfg.Exec.Output.ExplainRefusals || w == nil {
		return
	}
	_, field := e.cfg.Policy.EgressAllowlistFor(d.req.Agent)
	f := refusalFacts{
		home: e.opts.Home, cwd: d.dir, roots: spec.WorkspaceRoots, allowlistField: field,
		deniedHosts: ev.Egress.DeniedHosts, approved: ev.Egress.Approved, blocked: raw.Blocked,
		failed:   raw.Status != sandbox.StatusCompleted || raw.ExitCode != 0,
		denyRead: spec.DenyRead, writeDeny: spec.WriteDeny,
	}
	if f.failed {
		f.named = namedPaths(d.plan.tree(), d.dir, e.opts.Home)
		f.daemons = unixDaemons(d.plan.tree())
	}
	for _, l := range refusalLines(f) {
		w.Write([]byte(l))
	}
}
