package seatbelt

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

// SandboxExec is the program that confines a command with a profile. It is
// named by its absolute path, never looked up in PATH.
const SandboxExec = "/usr/bin/sandbox-exec"

// Runner runs executions under Seatbelt: the sandbox.Runner of the
// seatbelt backend (darwin; elsewhere it refuses). It is safe for
// concurrent use.
type Runner struct{}

// Prepared is one execution made ready for sandbox-exec: the spec as the
// init gets it and the profile that confines it.
type Prepared struct {
	Spec    *sandbox.Spec
	Profile string
	// Rewritten are the pinned scripts the command line now runs from
	// their copies.
	Rewritten []string
}

// Prepare returns spec made ready for Seatbelt with tmp as the execution's
// private temporary directory: the command rewritten to the pinned copies
// (Rewrite), TMPDIR set to tmp, the proxy variables pointing at the egress
// proxy's loopback port, and the profile. protect, when not nil, is the
// write-deny set as the host survey found it (absolute paths: the names
// at each root and each repository below one, .git's only where .git is
// a directory) and replaces spec.WriteDeny's names, so that a root
// without a repository may still get one (git init; the sweep after the
// run looks at what it holds). spec is not changed.
func Prepare(spec *sandbox.Spec, tmp string, protect []string) (*Prepared, error) {
	plan, err := PlanFor(spec, tmp)
	if err != nil {
		return nil, err
	}
	s := *spec
	if protect != nil {
		s.WriteDeny = slices.Clone(protect)
	}
	dialect := filepath.Base(spec.Shell)
	cmd, rewritten, err := Rewrite(spec.Command, spec.Dir, dialect, spec.Pins)
	if err != nil {
		return nil, err
	}
	s.Command = cmd
	env := setEnv(slices.Clone(spec.Env), "TMPDIR", tmp)
	if plan.ProxyPort > 0 {
		env = (&sandboxinit.Bridge{Listen: []string{spec.Egress.Addr}}).ProxyEnv(env)
	}
	s.Env = env
	profile, err := Profile(&s, plan)
	if err != nil {
		return nil, err
	}
	return &Prepared{Spec: &s, Profile: profile, Rewritten: rewritten}, nil
}

// setEnv returns env with KEY=value, replacing an earlier value.
func setEnv(env []string, key, value string) []string {
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	if value == "" {
		return out
	}
	return append(out, key+"="+value)
}

// resolved returns spec with the paths Seatbelt matches as they are on
// disk: a profile names resolved paths (/private/var, not /var), and a
// rule on a path through a symlink would match nothing. The deny-read set
// keeps each path as given and adds where it leads; the credential
// directory and the tool cache are replaced by where they lead. The
// pipeline resolves the workspace roots itself.
func resolved(spec *sandbox.Spec, eval func(string) (string, error)) *sandbox.Spec {
	s := *spec
	real := func(p string) string {
		if r, err := eval(p); err == nil {
			return r
		}
		return p
	}
	s.DenyRead = nil
	for _, p := range spec.DenyRead {
		s.DenyRead = append(s.DenyRead, p)
		if r := real(p); r != p && !slices.Contains(spec.DenyRead, r) {
			s.DenyRead = append(s.DenyRead, r)
		}
	}
	if s.CredDir != "" {
		s.CredDir = real(s.CredDir)
	}
	if tc := spec.ToolCache; tc != nil {
		s.ToolCache = &sandbox.ToolCache{Root: real(tc.Root), Dir: real(tc.Dir)}
	}
	return &s
}
