package pipeline

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
)

// resolvConf is the resolver configuration inside the sandbox: its network
// namespace has only loopback, where nothing answers on port 53, so a
// direct lookup fails at once (the proxy resolves names on the host).
const resolvConf = "# Gatehouse: no resolver inside the sandbox; the egress proxy resolves names.\n" +
	"nameserver 127.0.0.1\noptions attempts:1 timeout:1\n"

// egressTest holds test-only options of the proxy, per Executor; production
// never sets any.
var egressTest sync.Map // *Executor → *egressTestOptions

type egressTestOptions struct {
	resolver      egress.Resolver
	loopbackNames []string
}

// TestOnlyEgressNames makes e's egress proxies resolve names through
// names (name → IP address) and lets those names reach loopback, so that
// tests outside this package reach the servers they start by name. Only
// tests call it.
func (e *Executor) TestOnlyEgressNames(names map[string]string) {
	var loop []string
	for n := range names {
		loop = append(loop, n)
	}
	egressTest.Store(e, &egressTestOptions{resolver: nameMap(names), loopbackNames: loop})
}

// nameMap resolves the names it maps, and nothing else.
type nameMap map[string]string

func (m nameMap) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, err := netip.ParseAddr(m[host])
	if err != nil {
		return nil, fmt.Errorf("no such host %s (test names)", host)
	}
	return []netip.Addr{a}, nil
}

// startEgress starts the execution's egress proxy and puts it into spec:
// for a backend with a network of its own, its unix socket (bound in, and
// reached through the init's bridge); for one sharing the host's network,
// a loopback TCP port. The proxy swaps the placeholders of lease's masked
// credentials (mask.go). The returned stop function ends the proxy and
// fills ev.Egress; it is safe to call twice.
func (e *Executor) startEgress(ctx context.Context, req *api.ExecRequest, spec *sandbox.Spec, backend sandbox.Backend, ev *api.Event, into string, lease *broker.Lease) (stop func(), err error) {
	list, field := e.cfg.Policy.EgressAllowlistFor(req.Agent)
	// The destinations approvals allowed always (egresshold.go).
	list = append(slices.Clone(list), e.cfg.EgressSavedFor(req.Agent)...)
	allow, err := egress.ParseAllowlist(list, e.cfg.Exec.Egress.AllowedPorts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	var cidrs []netip.Prefix
	for i, s := range e.cfg.Exec.Egress.DeniedCIDRs {
		c, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("exec.egress.denied_cidrs[%d]: %w", i, err)
		}
		cidrs = append(cidrs, c.Masked())
	}
	denylist, denyFields, err := e.egressDenylist()
	if err != nil {
		return nil, err
	}
	// A settings file's deniedDomains (policy/settings.go).
	denyField := ""
	if st := e.cfg.Settings; st != nil {
		denyField = st.File + " network.deniedDomains"
		for _, s := range st.DeniedDomains {
			d, err := egress.ParseEntry(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %q %w", denyField, s, err)
			}
			denylist = append(denylist, d)
		}
	}
	opts := egress.Options{
		Allowlist:      allow,
		AllowlistField: field,
		DeniedCIDRs:    cidrs,
		Denylist:       denylist,
		DenylistField:  denyField,
		DenylistFields: denyFields,
		MaxLifetime:    spec.Timeout,
		Logger:         e.opts.Logger.With("execution", ev.ID),
	}
	answers := &egressAnswers{}
	if e.egressAsking(req) {
		opts.Ask = e.egressAsk(ctx, req, spec.Dir, field, ev, answers)
	}
	if t, ok := egressTest.Load(e); ok {
		t := t.(*egressTestOptions)
		opts.Resolver, opts.TestLoopbackNames = t.resolver, t.loopbackNames
	}
	// The socket lives in a fresh 0700 directory: only this user reaches it
	// on the host, and inside the sandbox only the init does (the seccomp
	// filter refuses unix sockets to the command).
	// into is a warm sandbox's directory, bound already (egressDir made
	// it); else the proxy gets a directory of its own.
	dir := into
	if dir == "" {
		if dir, err = egressDir(); err != nil {
			return nil, fmt.Errorf("starting the egress proxy: %w", err)
		}
	}
	if lease != nil && len(lease.Masked) > 0 {
		m, err := e.masking(lease, spec, ev, dir, backend)
		if err != nil {
			if into == "" {
				os.RemoveAll(dir)
			}
			return nil, err
		}
		opts.Masking = m
	}
	// ssh and git reach hosts through the proxy too (ssh.go).
	if backend.OwnNetwork() && backend.BindsPaths() {
		if err := e.sshConfig(spec, dir, lease); err != nil {
			if into == "" {
				os.RemoveAll(dir)
			}
			return nil, err
		}
	}
	proxy, err := egress.New(opts)
	if err != nil {
		if into == "" {
			os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("starting the egress proxy: %w", err)
	}
	spec.Egress = egressSpec(dir)
	var ln net.Listener
	if backend.OwnNetwork() {
		ln, err = egress.ListenUnix(dir)
	} else {
		ln, err = egress.ListenLoopback()
		if err == nil {
			spec.Egress = &sandbox.Egress{Addr: ln.Addr().String()}
		}
	}
	if err != nil {
		proxy.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the egress proxy: %w", err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		proxy.Serve(ln)
	}()

	var once sync.Once
	return func() {
		once.Do(func() {
			proxy.Close()
			<-served
			st := proxy.Stats()
			ev.Egress = api.Egress{Allowed: st.Allowed, Denied: st.Denied, DeniedHosts: st.DeniedHosts, AllowedHosts: st.AllowedHosts, Approved: answers.all()}
			for id, u := range st.Placeholders {
				if ev.Egress.Placeholders == nil {
					ev.Egress.Placeholders = map[string]api.PlaceholderUse{}
				}
				ev.Egress.Placeholders[id] = api.PlaceholderUse{Bound: u.Bound, Elsewhere: u.Elsewhere}
			}
			os.RemoveAll(dir)
		})
	}, nil
}

// egressDir makes the directory of an execution's proxy socket, with the
// resolver configuration the sandbox gets.
func egressDir() (string, error) {
	dir, err := os.MkdirTemp("", "gatehouse-egress-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte(resolvConf), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// egressSpec is the sandbox's side of the proxy whose directory is dir.
func egressSpec(dir string) *sandbox.Egress {
	eg := &sandbox.Egress{Socket: filepath.Join(dir, sandbox.ProxySocketName)}
	if target := resolvTarget(); target != "" {
		eg.ResolvConf, eg.ResolvConfTarget = filepath.Join(dir, "resolv.conf"), target
	}
	return eg
}

// resolvTarget returns where the sandbox's resolver configuration is: the
// host's /etc/resolv.conf with symlinks resolved (systemd-resolved links it
// into /run, which is an empty tmpfs in the sandbox, where bwrap creates
// the mount point). It returns "" when the host has none: a resolver then
// falls back to 127.0.0.1, which answers nothing in the sandbox either.
func resolvTarget() string {
	p, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}
