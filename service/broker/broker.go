// Package broker hands credentials from the OS keychain to one execution:
// it decides which credentials a request gets (the operator's mappings,
// the agent's references, the grants), reads their values, and
// materialises file credentials in a private directory that lives only
// as long as the execution.
//
// # Rules
//
// A value never leaves the keychain except into the command's environment,
// a 0400 file in the execution's directory, the output redactor, and —
// for a masked credential, whose command gets a placeholder instead — the
// egress proxy that puts it on the wire to the credential's hosts. No
// error, log line or event of this package holds one: errors name the
// credential id, the variable or the file, and say what to do.
package broker

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/broker/placeholder"
	"github.com/gatehouse-dev/gatehouse/service/dlp"
)

// Denial codes (blocked_by) of the broker. Each means nothing ran.
const (
	// CodeNotGranted: the request names a credential its agent is not
	// granted.
	CodeNotGranted = "credential_not_granted"
	// CodeUnknown: a reference names no valid id, or the keychain holds no
	// credential of that id.
	CodeUnknown = "credential_unknown"
	// CodeInvalid: the stored value cannot be used (too short, a NUL byte).
	CodeInvalid = "credential_invalid"
	// CodeUnavailable: the keychain could not be read.
	CodeUnavailable = "credential_unavailable"
	// CodeMaskRequired: the request references a credential that is not
	// masked, under policy.credential_mode: mask.
	CodeMaskRequired = "credential_mask_required"
)

// An Error is a request the broker refused. Its text is safe to show to
// the agent: it names ids, variables and files, never a value.
type Error struct {
	Code   string
	ID     string
	Reason string
	// Hint says how to fix it, when the agent's user can.
	Hint string
}

func (e *Error) Error() string { return e.Reason }

// Config is the credential configuration, as plain data.
type Config struct {
	// Env maps a variable name to the id of the credential it carries
	// (exec.credentials.env).
	Env map[string]string
	// Files maps a file name to the id of the credential it holds
	// (exec.credentials.files).
	Files map[string]string
	// Grants maps an id to the agents it is for (policy.credential_grants).
	// An id it does not list reaches every agent when Env or Files maps
	// it, and no agent when neither does.
	Grants map[string][]string
	// Masked maps the id of each masked credential to the hosts it is
	// bound to (egress allowlist entries): wherever the credential
	// reaches a command — a mapped variable or file, or a reference — the
	// command gets a placeholder, and the egress proxy swaps in the value
	// for those hosts only.
	Masked map[string][]string
	// Auto maps the id of each credential of mode auto (mapped with no
	// hosts and no mode) to the field that maps it, for messages: whether
	// it is masked, and to which hosts, is decided by its value's shape
	// when the lease reads it (ShapeOf).
	Auto map[string]string
	// RequireMask refuses a reference to a credential that is not masked
	// (policy.credential_mode: mask), and a credential of mode auto whose
	// value's shape leaves it injected.
	RequireMask bool
	// SSHKeys are the names among Files that hold an SSH private key
	// (kind ssh_key): written ending in a newline, which OpenSSH needs
	// and a value read from standard input has lost.
	SSHKeys []string
}

// Granted reports whether the credential id may reach agent.
func (c *Config) Granted(id, agent string) bool {
	if agents, ok := c.Grants[id]; ok {
		return slices.Contains(agents, agent)
	}
	return c.mapped(id)
}

func (c *Config) mapped(id string) bool {
	for _, v := range c.Env {
		if v == id {
			return true
		}
	}
	for _, v := range c.Files {
		if v == id {
			return true
		}
	}
	return false
}

// A Request is what the broker needs of one shell:execute call.
type Request struct {
	Agent string
	// Command is the judged text, with references already rewritten
	// (Rewrite).
	Command string
	// Env are the variables the agent sets; their values may hold
	// references.
	Env map[string]string
}

// A Grant says which credentials one execution gets, and how. It holds no
// value.
type Grant struct {
	// Env maps a variable to the id it carries: the operator's mappings
	// granted to the agent, and GATEHOUSE_CRED_<ID> for each reference.
	Env map[string]string
	// Files maps a file name to the id it holds.
	Files map[string]string
	// Agent are the agent's variables whose values hold references.
	Agent map[string]string
	// IDs are every credential the execution gets, sorted.
	IDs []string
	// Masked maps each masked credential among IDs to its hosts.
	Masked map[string][]string
	// Auto maps each credential of mode auto among IDs to the field that
	// maps it: the lease masks or injects it by its value's shape.
	Auto map[string]string
	// RequireMask refuses, at the lease, a credential of mode auto whose
	// value's shape leaves it injected.
	RequireMask bool
	// SSHKeys are the names among Files that hold an SSH private key,
	// sorted.
	SSHKeys []string
}

// Vars returns the variables that carry a credential, sorted: the mapped
// and reference variables, and the agent's variables that hold a
// reference.
func (p *Grant) Vars() []string {
	var out []string
	for k := range p.Env {
		out = append(out, k)
	}
	for k := range p.Agent {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Plan decides which credentials req gets. A credential the request
// names (a reference in the command or an agent variable, or a mapped
// variable the command uses) that its agent is not granted is an *Error;
// mapped credentials the agent is not granted are left out.
func (c *Config) Plan(req Request) (*Grant, error) {
	p := &Grant{Env: map[string]string{}, Files: map[string]string{}, Agent: map[string]string{}}
	var ids []string
	need := func(id, how string) error {
		if !c.Granted(id, req.Agent) {
			return notGranted(id, req.Agent, how)
		}
		_, masked := c.Masked[id]
		if _, auto := c.Auto[id]; c.RequireMask && !masked && !auto {
			return &Error{Code: CodeMaskRequired, ID: id,
				Reason: fmt.Sprintf("credential %q is not bound to hosts, and policy.credential_mode is mask: it may only reach a command masked (%s); nothing ran", id, how),
				Hint:   fmt.Sprintf("an operator can bind it in exec.credentials: {credential: %s, hosts: [...]}", id)}
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		return nil
	}
	for _, id := range Named(req.Command) {
		if err := need(id, "the command references it"); err != nil {
			return nil, err
		}
		p.Env[EnvName(id)] = id
	}
	for _, k := range sortedKeys(req.Env) {
		refs, err := Refs(req.Env[k])
		if err != nil {
			return nil, &Error{Code: CodeUnknown, Reason: "env." + k + ": " + err.Error()}
		}
		for _, id := range refs {
			if err := need(id, "env."+k+" references it"); err != nil {
				return nil, err
			}
		}
		if len(refs) > 0 {
			p.Agent[k] = req.Env[k]
		}
	}
	for _, name := range sortedKeys(c.Env) {
		id := c.Env[name]
		if !c.Granted(id, req.Agent) {
			if usesVar(req.Command, name) {
				return nil, notGranted(id, req.Agent, "the command uses $"+name+", which exec.credentials.env maps to it")
			}
			continue
		}
		need(id, "")
		p.Env[name] = id
	}
	for _, name := range sortedKeys(c.Files) {
		id := c.Files[name]
		if !c.Granted(id, req.Agent) {
			continue
		}
		need(id, "")
		p.Files[name] = id
		if slices.Contains(c.SSHKeys, name) {
			p.SSHKeys = append(p.SSHKeys, name)
		}
	}
	sort.Strings(ids)
	p.IDs = ids
	for _, id := range ids {
		if hosts, ok := c.Masked[id]; ok {
			if p.Masked == nil {
				p.Masked = map[string][]string{}
			}
			p.Masked[id] = slices.Clone(hosts)
		}
		if field, ok := c.Auto[id]; ok {
			if p.Auto == nil {
				p.Auto = map[string]string{}
			}
			p.Auto[id] = field
		}
	}
	p.RequireMask = c.RequireMask
	return p, nil
}

func notGranted(id, agent, how string) *Error {
	return &Error{
		Code: CodeNotGranted, ID: id,
		Reason: fmt.Sprintf("credential %q is not granted to agent %q (%s); nothing ran", id, agent, how),
		Hint:   fmt.Sprintf("an operator can add %q to policy.credential_grants.%s", agent, id),
	}
}

// usesVar reports whether text expands the variable name: $NAME or
// ${NAME...}.
func usesVar(text, name string) bool {
	re := regexp.MustCompile(`\$(?:` + regexp.QuoteMeta(name) + `\b|\{[#!]?` + regexp.QuoteMeta(name) + `\b)`)
	return re.MatchString(text)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// A Broker reads credentials from a keychain and materialises them for
// executions. It is safe for concurrent use.
type Broker struct {
	// Store is the keychain. Must be non-nil.
	Store keyring.Store
	// Dir is the private directory the executions' directories are made
	// in; "" means DefaultDir("").
	Dir string
}

// LeaseOptions describe the execution a lease is for.
type LeaseOptions struct {
	// ExecID names the execution's directory.
	ExecID string
	// DirInSandbox is where the command sees the directory (the bind's
	// target); "" means the host path.
	DirInSandbox string
}

// A Lease is the credentials of one execution. Release ends it.
type Lease struct {
	// Env are the variables to add to the command's environment,
	// KEY=VALUE, sorted by key; GATEHOUSE_CRED_DIR among them when there
	// are files.
	Env []string
	// Dir is the host directory holding the files; "" when there are
	// none.
	Dir string
	// Secrets are the values, for the output redactor: the masked
	// credentials' too, which the command should never see.
	Secrets []dlp.Secret
	// IDs are the credentials injected (the command got their values),
	// sorted.
	IDs []string
	// Masked are the masked credentials, sorted by id: the command got
	// their placeholders, and the egress proxy swaps in their values.
	Masked []Masked
	// Auto are the decisions made for the credentials of mode auto,
	// sorted by id.
	Auto []AutoDecision
	// SSHKeys are the files holding an SSH private key, as the command
	// sees their paths, sorted.
	SSHKeys []string
}

// An AutoDecision is how one credential of mode auto reached the command,
// as its value's shape decided.
type AutoDecision struct {
	ID string
	// Field is the mapping that made it auto:
	// "exec.credentials.env.GITHUB_TOKEN".
	Field string
	Shape Shape
}

// A Masked credential is what the egress proxy needs to put a value on
// the wire for its hosts only.
type Masked struct {
	ID string
	// Value is the credential; Placeholder what the command got instead,
	// fresh for each execution.
	Value, Placeholder string
	// Hosts are the destinations the value is for, written as egress
	// allowlist entries.
	Hosts []string
}

// MaskedIDs returns the ids of the masked credentials, sorted.
func (l *Lease) MaskedIDs() []string {
	var out []string
	for _, m := range l.Masked {
		out = append(out, m.ID)
	}
	return out
}

// Lease reads the values p needs and materialises its files. An *Error
// means nothing may run: a credential missing from the keychain, a value
// that cannot be used, a keychain that cannot be read. Other errors are
// failures to make the directory.
func (b *Broker) Lease(p *Grant, opts LeaseOptions) (*Lease, error) {
	l := &Lease{}
	values := map[string]string{}
	for _, id := range p.IDs {
		v, err := b.Store.Get(id)
		if err != nil {
			return nil, readError(id, err)
		}
		if err := CheckValue(v); err != nil {
			return nil, &Error{Code: CodeInvalid, ID: id,
				Reason: fmt.Sprintf("credential %q cannot be used: %v; nothing ran", id, err),
				Hint:   fmt.Sprintf("store it again with 'gatehouse cred set %s'", id)}
		}
		l.Secrets = append(l.Secrets, dlp.Secret{ID: id, Value: v})
		hosts, masked := p.Masked[id]
		if field, ok := p.Auto[id]; ok && !masked {
			s := ShapeOf(v)
			if !s.Masked && p.RequireMask {
				return nil, &Error{Code: CodeMaskRequired, ID: id,
					Reason: fmt.Sprintf("credential %q (%s) would be injected (%s), and policy.credential_mode is mask; nothing ran", id, field, s.Why),
					Hint:   fmt.Sprintf("an operator can bind it to its hosts in %s: {credential: %s, hosts: [...]}", field, id)}
			}
			l.Auto = append(l.Auto, AutoDecision{ID: id, Field: field, Shape: s})
			hosts, masked = s.Hosts, s.Masked
		}
		if masked {
			ph, err := placeholder.New(v)
			if err != nil {
				return nil, fmt.Errorf("making the placeholder of credential %q: %w", id, err)
			}
			l.Masked = append(l.Masked, Masked{ID: id, Value: v, Placeholder: ph, Hosts: slices.Clone(hosts)})
			v = ph
		} else {
			l.IDs = append(l.IDs, id)
		}
		values[id] = v
	}
	env := map[string]string{}
	for name, id := range p.Env {
		env[name] = values[id]
	}
	for name, tmpl := range p.Agent {
		env[name] = Expand(tmpl, func(id string) string { return values[id] })
	}
	if len(p.Files) > 0 {
		// A key file ends with a newline: OpenSSH reads no key without.
		contents := map[string]string{}
		for name, id := range p.Files {
			contents[name] = values[id]
			if slices.Contains(p.SSHKeys, name) && !strings.HasSuffix(contents[name], "\n") {
				contents[name] += "\n"
			}
		}
		dir, err := b.materialise(contents, opts.ExecID)
		if err != nil {
			return nil, err
		}
		l.Dir = dir
		env[DirEnv] = dir
		if opts.DirInSandbox != "" {
			env[DirEnv] = opts.DirInSandbox
		}
		for _, name := range p.SSHKeys {
			l.SSHKeys = append(l.SSHKeys, filepath.Join(env[DirEnv], name))
		}
	}
	for _, k := range sortedKeys(env) {
		l.Env = append(l.Env, k+"="+env[k])
	}
	return l, nil
}

// readError turns a keychain error into an *Error that names id.
func readError(id string, err error) *Error {
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return &Error{Code: CodeUnknown, ID: id,
			Reason: fmt.Sprintf("credential %q is not in the keychain; nothing ran", id),
			Hint:   fmt.Sprintf("store it with 'gatehouse cred set %s'", id)}
	case errors.Is(err, keyring.ErrUnavailable):
		return &Error{Code: CodeUnavailable, ID: id,
			Reason: fmt.Sprintf("credential %q could not be read: %v; nothing ran", id, err),
			Hint:   keyring.Hint(err)}
	}
	// keyring errors carry no value.
	return &Error{Code: CodeUnavailable, ID: id,
		Reason: fmt.Sprintf("credential %q could not be read: %v; nothing ran", id, err)}
}

// Release removes the lease's files. It is safe to call more than once,
// and on a nil Lease.
func (l *Lease) Release() error {
	if l == nil || l.Dir == "" {
		return nil
	}
	err := removeDir(l.Dir)
	if err == nil {
		l.Dir = ""
	}
	return err
}

// materialise writes each file 0400 into a new directory of its own
// (files.go).
func (b *Broker) materialise(contents map[string]string, execID string) (string, error) {
	parent := b.Dir
	if parent == "" {
		parent = DefaultDir("")
	}
	return materialiseFiles(parent, contents, execID)
}

func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, s)
	if s == "" {
		s = "x"
	}
	return s
}
