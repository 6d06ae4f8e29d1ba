package egress

import (
	"net"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// ListenUnix listens on the proxy's unix socket, sandbox.ProxySocketName
// in dir (a fresh 0700 directory): a sandbox with a network of its own
// reaches it through the init's bridge, bound in.
func ListenUnix(dir string) (net.Listener, error) {
	return net.Listen("unix", filepath.Join(dir, sandbox.ProxySocketName))
}

// ListenLoopback listens on a fresh TCP port of 127.0.0.1, for a sandbox
// that shares the host's network (Seatbelt): its profile lets the command
// connect to this port and to nothing else, and its proxy variables point
// here. Any local process of the host can connect to the port as well;
// it gets no more than the command's allowlist, and its connections count
// on the execution's event.
func ListenLoopback() (net.Listener, error) {
	return net.Listen("tcp4", "127.0.0.1:0")
}
