package sandboxinit

// The network bridge: the sandbox has its own network namespace with only
// loopback in it, so the init listens on 127.0.0.1 there and hands every
// connection it accepts to the egress proxy, over the proxy's unix socket
// bound into the sandbox (bridge_unix.go). The bridge runs in the init,
// outside the seccomp filter (which refuses unix sockets to the command);
// it never reads a byte of the connections it hands over.

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// Bridge is the bridge's part of the Stage1Spec.
type Bridge struct {
	// Listen are the TCP addresses to listen on inside the sandbox, for
	// example "127.0.0.1:3128". The first is the one the proxy variables
	// point at; it serves HTTP and SOCKS5 alike.
	Listen []string `json:"listen"`
	// Socket is the path of the proxy's unix socket inside the sandbox.
	Socket string `json:"socket"`
}

// proxyVars are the variables ProxyEnv sets, upper and lower case.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}

// NoProxy is NO_PROXY inside the sandbox: its own loopback, in the forms
// common clients parse (curl and Go take CIDR ranges, Python's urllib
// only names and literals, some clients a bracketed IPv6 literal). The
// sandbox's loopback is its own network namespace's: a server the command
// started, never the host's.
const NoProxy = "localhost,.localhost,127.0.0.1,127.0.0.0/8,::1,[::1]"

// ProxyEnv returns env with the proxy variables pointing at the bridge:
// HTTP_PROXY and HTTPS_PROXY at http://ADDR, ALL_PROXY at socks5h://ADDR
// (names resolved by the proxy), NO_PROXY the sandbox's loopback
// (NoProxy), each in upper and lower case. Values env already had for
// them are dropped.
func (b *Bridge) ProxyEnv(env []string) []string {
	out := make([]string, 0, len(env)+2*len(proxyVars))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, v := range proxyVars {
			if strings.EqualFold(k, v) {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	if len(b.Listen) == 0 {
		return out
	}
	addr := b.Listen[0]
	for _, kv := range []string{
		"HTTP_PROXY=http://" + addr,
		"HTTPS_PROXY=http://" + addr,
		"ALL_PROXY=socks5h://" + addr,
		"NO_PROXY=" + NoProxy,
	} {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, kv, strings.ToLower(k)+"="+v)
	}
	return out
}

// ListenAll opens b's listeners. From the moment it returns, a connection to
// any of them is queued by the kernel until Serve accepts it: a client
// started afterwards never sees "connection refused".
func (b *Bridge) ListenAll() ([]net.Listener, error) {
	if b.Socket == "" {
		return nil, errors.New("the bridge names no proxy socket")
	}
	var lns []net.Listener
	for _, addr := range b.Listen {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("listening on %s: %w", addr, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}
