//go:build !unix

package sandboxinit

import (
	"errors"
	"net"
)

// Serve is not available: handing connections over needs unix sockets
// with SCM_RIGHTS.
func (b *Bridge) Serve(ln net.Listener) error {
	ln.Close()
	return errors.New("the network bridge needs a unix system")
}
