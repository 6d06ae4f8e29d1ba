package pipeline

// This file is the credential stage of the pipeline and its output DLP:
//
//  1. decide, before analysis: ${credential:ID} in the command becomes
//     ${GATEHOUSE_CRED_<ID>}, so the judged text never holds a value, and
//     the agent's variables are checked (rewriteCredentials);
//  2. decide, after policy: a credential-bearing variable on a command
//     line, in the judged text or a pinned script, is the hard denial
//     credential_in_argv (argvcred.Find); then which
//     credentials the request gets, under the grants (planCredentials): an
//     ungranted one is denied, naming it;
//  3. run, before the start: the values are read from the keychain, the
//     variables set, the files written 0400 into a directory bound at
//     /run/gatehouse/cred (leaseCredentials); the directory is removed
//     when the run ends, however it ends;
//  4. run: stdout and stderr go through the redactor before anything else
//     sees them (redactOutput): the caps, hashes, the audit's copy and the
//     caller all get the redacted stream.
//
// No value is ever put in an event, an error or a log line: they name ids.

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/analysis/argvcred"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/dlp"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// CredDirInSandbox is where a command finds its credential files under a
// backend that binds paths ($GATEHOUSE_CRED_DIR).
const CredDirInSandbox = sandbox.CredDirInSandbox

// Denials of the credential stage; each names the credential.
// credential_in_argv is a hard denial no knob relaxes.
const (
	DenyCredInArgv       = argvcred.Code
	DenyCredNotGranted   = broker.CodeNotGranted
	DenyCredUnknown      = broker.CodeUnknown
	DenyCredInvalid      = broker.CodeInvalid
	DenyCredUnavailable  = broker.CodeUnavailable
	DenyCredMaskRequired = broker.CodeMaskRequired
)

// rewriteCredentials rewrites the credential references in req's command
// and checks its variables. It runs before analysis.
func (e *Executor) rewriteCredentials(req *api.ExecRequest, ev *api.Event) error {
	text, _, err := broker.Rewrite(req.Command)
	if err != nil {
		return deny(ev, DenyCredUnknown, err.Error()+"; nothing ran")
	}
	req.Command = text
	ev.CommandHash = hashHex([]byte(text))
	mapped := e.cfg.Exec.Credentials.Env
	for k := range req.Env {
		if _, ok := mapped[k]; ok {
			return &ArgError{"env." + k, "is set from the keychain by exec.credentials.env; agents may not set it"}
		}
	}
	return nil
}

// planCredentials denies a credential on a command line
// (credential_in_argv, in the judged text or a pinned script), then
// decides which credentials req gets. It runs after the policy allowed
// the command.
func (e *Executor) planCredentials(req *api.ExecRequest, plan *execPlan, ev *api.Event) (*broker.Grant, error) {
	var scripts []*analysis.Script
	if plan != nil {
		scripts = plan.scripts
	}
	use := argvcred.Find(req.Command, scripts, argvcred.Options{
		Dialect: ev.Dialect, Vars: e.credentialVars(req), Stdin: req.Stdin, Tree: plan.tree(),
	})
	if use != nil {
		return nil, deny(ev, DenyCredInArgv, use.Reason())
	}
	p, err := e.cfg.CredentialConfig().Plan(broker.Request{Agent: req.Agent, Command: req.Command, Env: req.Env})
	if err != nil {
		return nil, credDenial(err, ev)
	}
	return p, nil
}

// credDenial turns a broker error into a recorded denial; another error
// is returned as it is.
func credDenial(err error, ev *api.Event) error {
	var be *broker.Error
	if !errors.As(err, &be) {
		return err
	}
	return deny(ev, be.Code, be.Reason).withHint(be.Hint)
}

// credentialVars returns the variables that carry a credential into a
// command: every mapped name (whether or not this agent gets it), and the
// agent's variables that reference one. GATEHOUSE_CRED_* variables carry
// one by their name. A masked mapping's variable carries a placeholder,
// worthless off its hosts' wire, so it may ride a command line
// (curl -H "Authorization: Bearer $GITHUB_TOKEN").
func (e *Executor) credentialVars(req *api.ExecRequest) []string {
	var out []string
	for k, m := range e.cfg.Exec.Credentials.Env {
		if m.EffectiveMode() != policy.ModeMask {
			out = append(out, k)
		}
	}
	for k, v := range req.Env {
		if ids, err := broker.Refs(v); err == nil && len(ids) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// credBroker returns the broker over the configured keychain.
func (e *Executor) credBroker() *broker.Broker {
	return &broker.Broker{Store: e.opts.Keyring, Dir: e.opts.CredentialDir}
}

// leaseCredentials reads the decision's credentials and puts them into
// spec: variables, and the files' directory bound read-only at
// CredDirInSandbox (a backend that binds paths) or named by its host path
// (spec.CredDir). The caller releases the lease when the run ends. A *Denial
// means nothing may run.
func (e *Executor) leaseCredentials(d *Admitted, spec *sandbox.Spec, backend sandbox.Backend, ev *api.Event) (*broker.Lease, error) {
	p := d.creds
	if p == nil || len(p.IDs) == 0 {
		return nil, nil
	}
	if e.opts.Keyring == nil {
		return nil, denyNeverRan(ev, DenyCredUnavailable, "no keychain is configured for the governed shell; nothing ran", DenyCredUnavailable)
	}
	opts := broker.LeaseOptions{ExecID: ev.ID}
	if backend.BindsPaths() {
		opts.DirInSandbox = CredDirInSandbox
	}
	l, err := e.credBroker().Lease(p, opts)
	if err != nil {
		var be *broker.Error
		if errors.As(err, &be) {
			return nil, denyNeverRan(ev, be.Code, be.Reason, be.Code).withHint(be.Hint)
		}
		return nil, fmt.Errorf("credentials: %w", err)
	}
	spec.Env = mergeEnv(spec.Env, l.Env)
	if l.Dir != "" {
		spec.CredDir = l.Dir
		binds := backend.BindsPaths()
		if binds {
			spec.ExtraBinds = append(spec.ExtraBinds, sandbox.Bind{Source: l.Dir, Target: CredDirInSandbox})
		}
		// Other executions must not see this one's files: the parent is
		// hidden from them (the backend lets this one read its own,
		// spec.CredDir), unless it is on a mount a binding sandbox
		// replaces anyway.
		if parent := filepath.Dir(l.Dir); !binds || !sandbox.Within(parent, "/tmp") && !sandbox.Within(parent, "/run") {
			spec.DenyRead = append(spec.DenyRead, parent)
		}
	}
	ev.Credentials = append([]string{}, l.IDs...)
	ev.CredentialsMasked = l.MaskedIDs()
	ev.CredentialNotes = e.credentialNotes(l, d.req.Agent)
	return l, nil
}

// credentialNotes says on the card how each credential of mode auto
// reached the command, and which masked credential's hosts agent's egress
// allowlist does not allow (its placeholder reaches none of them).
func (e *Executor) credentialNotes(l *broker.Lease, agent string) []api.CredentialNote {
	var out []api.CredentialNote
	for _, a := range l.Auto {
		n := api.CredentialNote{ID: a.ID, Field: a.Field, Mode: "injected", Reason: "mode auto, " + a.Shape.Describe()}
		if a.Shape.Masked {
			n.Mode = "masked"
		}
		out = append(out, n)
	}
	for _, m := range l.Masked {
		no := e.cfg.HostsNotAllowed(m.Hosts, agent)
		i := slices.IndexFunc(out, func(n api.CredentialNote) bool { return n.ID == m.ID })
		if i < 0 {
			if len(no) == 0 {
				continue
			}
			out = append(out, api.CredentialNote{ID: m.ID, Mode: "masked"})
			i = len(out) - 1
		}
		out[i].Hosts = slices.Clone(m.Hosts)
		out[i].Unusable = no
	}
	slices.SortFunc(out, func(a, b api.CredentialNote) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// mergeEnv returns env with each KEY=VALUE of add set, replacing any
// earlier value of KEY.
func mergeEnv(env, add []string) []string {
	keys := map[string]bool{}
	for _, kv := range add {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(env)+len(add))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

// plainRedactor keeps the redactor of a run with no credential values: it
// is made of the configured patterns alone (and the built-in ones), whose
// regular expressions would otherwise be compiled again for every run.
// dlp.Redactor is immutable, so one serves runs at once.
type plainRedactor struct {
	mu   sync.Mutex
	pats []dlp.Pattern // what red was made of
	red  *dlp.Redactor
}

// redactor returns the redactor for secrets under the configured
// patterns: a new one when there are values to redact, else the one kept
// for these patterns.
func (e *Executor) redactor(secrets []dlp.Secret) (*dlp.Redactor, error) {
	pats := e.cfg.DLP()
	if len(secrets) > 0 {
		return dlp.New(secrets, pats)
	}
	p := &e.plain
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.red == nil || !slices.Equal(p.pats, pats) {
		red, err := dlp.New(nil, pats)
		if err != nil {
			return nil, err
		}
		p.pats, p.red = pats, red
	}
	return p.red, nil
}

// redaction is the output stage of one run: each stream goes through the
// redactor, then the cap, then to where it was going.
type redaction struct {
	out, err       *dlp.Writer
	capOut, capErr *sandbox.CapWriter
	red            *dlp.Redactor
}

// redactOutput puts the redactor in front of streams, and takes the output
// caps over from the backend so that they apply to what the agent sees.
func (e *Executor) redactOutput(lease *broker.Lease, spec *sandbox.Spec, streams sandbox.Streams) (*redaction, sandbox.Streams, error) {
	var secrets []dlp.Secret
	if lease != nil {
		secrets = lease.Secrets
	}
	red, err := e.redactor(secrets)
	if err != nil {
		return nil, streams, fmt.Errorf("output redaction: %w", err)
	}
	r := &redaction{
		red:    red,
		capOut: &sandbox.CapWriter{W: streams.Stdout, Max: spec.OutputMax},
		capErr: &sandbox.CapWriter{W: streams.Stderr, Max: spec.OutputMax},
	}
	r.out, r.err = red.Writer(r.capOut), red.Writer(r.capErr)
	spec.OutputMax = 0
	return r, sandbox.Streams{Stdout: r.out, Stderr: r.err}, nil
}

// finish flushes what the redactor held back, ends the capped streams
// (truncation markers) and reports the redacted streams in raw, whose
// error text is redacted too. It returns the number of redactions.
func (r *redaction) finish(raw *sandbox.Result) int {
	r.out.Close()
	r.err.Close()
	r.capOut.Finish()
	r.capErr.Finish()
	raw.Stdout, raw.Stderr = r.capOut.Stats(), r.capErr.Stats()
	n := r.out.Count() + r.err.Count()
	if raw.Error != "" {
		var m int
		raw.Error, m = r.red.RedactString(raw.Error)
		n += m
	}
	return n
}
