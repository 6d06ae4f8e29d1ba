package pipeline

// This file prepares an execution that holds masked credentials
// (docs/credentials.md, "Masked credentials"): the command got their
// placeholders (the broker's lease), and the egress proxy gets what it
// needs to put the values on the wire to their hosts alone:
//
//   - the install's CA (service/egressca, from the keychain; made on first
//     use), which signs the certificates it presents for those hosts;
//   - the roots it verifies those hosts with: the system's, plus
//     exec.egress.upstream_ca_files;
//   - inside the sandbox, a bundle of the system roots and the CA, bound
//     read-only at CABundleInSandbox, which the usual variables point at
//     (egressca.BundleVars), so that curl, git, Python, Node.js and pip
//     trust the proxy's certificates for those hosts.
//
// Executions without masked credentials get none of it: their TLS is
// never terminated, and their environment names no bundle.

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/egressca"
)

// CABundleInSandbox is where a command with masked credentials finds the
// CA bundle it trusts, under a backend that binds paths.
const CABundleInSandbox = sandbox.RunDir + "/ca-bundle.pem"

// masking returns the proxy's masking options for lease, and writes the
// sandbox's CA bundle into dir, binding it and pointing the variables at
// it in spec.
func (e *Executor) masking(lease *broker.Lease, spec *sandbox.Spec, ev *api.Event, dir string, backend sandbox.Backend) (*egress.Masking, error) {
	ca, err := egressca.Load(e.opts.Keyring, time.Now())
	if err != nil {
		return nil, denyNeverRan(ev, DenyCredUnavailable,
			fmt.Sprintf("the egress CA of masked credentials (%s) could not be read or made: %v; nothing ran", lease.MaskedIDs(), err),
			DenyCredUnavailable).withHint("check the keychain with 'gatehouse doctor'")
	}
	upstream, err := e.upstreamRoots()
	if err != nil {
		return nil, err
	}
	roots, _, err := egressca.SystemRoots()
	if err != nil {
		return nil, fmt.Errorf("masked credentials: %w", err)
	}
	bundle := filepath.Join(dir, "ca-bundle.pem")
	if err := os.WriteFile(bundle, egressca.Bundle(roots, ca), 0o644); err != nil {
		return nil, fmt.Errorf("masked credentials: writing the CA bundle: %w", err)
	}
	inSandbox := bundle
	if backend.BindsPaths() {
		inSandbox = CABundleInSandbox
		spec.ExtraBinds = append(spec.ExtraBinds, sandbox.Bind{Source: bundle, Target: CABundleInSandbox})
	}
	var env []string
	for _, k := range egressca.BundleVars {
		env = append(env, k+"="+inSandbox)
	}
	spec.Env = mergeEnv(spec.Env, env)

	m := &egress.Masking{CA: ca.Cert, CAKey: ca.Key, UpstreamRoots: upstream}
	for _, c := range lease.Masked {
		hosts, err := egress.ParseAllowlist(c.Hosts, e.cfg.Exec.Egress.AllowedPorts)
		if err != nil {
			return nil, fmt.Errorf("exec.credentials: the hosts of %s: %w", c.ID, err)
		}
		m.Credentials = append(m.Credentials, egress.MaskedCredential{ID: c.ID, Value: c.Value, Placeholder: c.Placeholder, Hosts: hosts})
	}
	return m, nil
}

// upstreamRoots returns the system roots plus exec.egress.upstream_ca_files.
func (e *Executor) upstreamRoots() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for i, f := range e.cfg.Exec.Egress.UpstreamCAFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("exec.egress.upstream_ca_files[%d]: %w", i, err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("exec.egress.upstream_ca_files[%d]: %s holds no PEM certificate", i, f)
		}
	}
	return pool, nil
}
