//go:build !linux

package bwrap

import (
	"errors"
	"net"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// A SessionNet is a session's network namespace: Linux only.
type SessionNet struct{}

// A Listener is a TCP socket listening in a session's network.
type Listener struct {
	Addr string
	Port int
}

// ErrNoNsenter is Linux's; here no session network starts at all.
var ErrNoNsenter = errors.New("nsenter not found; install util-linux")

var errNoSessionNet = errors.New("session networks need Linux network namespaces")

// StartSessionNet fails: there are no network namespaces here.
func StartSessionNet(bwrapPath, initPath string) (*SessionNet, error) {
	return nil, errNoSessionNet
}

func (n *SessionNet) Network(name string) *sandbox.Network   { return nil }
func (n *SessionNet) Pid() int                               { return 0 }
func (n *SessionNet) Alive() bool                            { return false }
func (n *SessionNet) Close()                                 {}
func (n *SessionNet) Forward(c *net.TCPConn, port int) error { c.Close(); return errNoSessionNet }
func (n *SessionNet) Listening() ([]Listener, error)         { return nil, errNoSessionNet }
func (n *SessionNet) EndForwards(port int) error             { return errNoSessionNet }
