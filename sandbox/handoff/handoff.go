// Package handoff is what the sandbox init's network bridge
// (sandbox/sandboxinit) and the egress proxy (sandbox/egress) agree on: the
// byte that goes with each connection the bridge hands over. It is its own
// package so that the init, which links only the standard library,
// golang.org/x/sys and the seccomp program, needs nothing of the proxy.
package handoff

// Marker is the byte a bridge sends with each connection it hands over, the
// connection's socket attached (SCM_RIGHTS). No HTTP or SOCKS5 request
// starts with it.
const Marker = 0x00
