package socket

import (
	"context"
	"io/fs"
	"net"
)

// The governed shell does not run on Windows; neither does its service.

func listen(path string) (net.Listener, error) { return nil, ErrUnsupported }

func dial(ctx context.Context, d *net.Dialer, path string) (net.Conn, error) {
	return nil, ErrUnsupported
}

func owner(fi fs.FileInfo) (int, bool) { return 0, false }

// PeerUID is not supported on Windows.
func PeerUID(c net.Conn) (int, error) { return -1, ErrUnsupported }
