package tickets

import (
	"context"
	"errors"
	"os"
	"time"
)

var errNoFIFO = errors.New("relay FIFOs are not supported on Windows")

// MakeFIFOs is not supported on Windows.
func MakeFIFOs(dir, name string) error { return errNoFIFO }

// An In is not supported on Windows.
type In struct{}

// OpenIn is not supported on Windows.
func OpenIn(dir, name string) (*In, error) { return nil, errNoFIFO }

// Read is not supported on Windows.
func (in *In) Read(p []byte) (int, error) { return 0, errNoFIFO }

// SetReadDeadline does nothing on Windows.
func (in *In) SetReadDeadline(t time.Time) {}

// Release does nothing on Windows.
func (in *In) Release() {}

// Close does nothing on Windows.
func (in *In) Close() error { return nil }

// OpenOut is not supported on Windows.
func OpenOut(ctx context.Context, dir, name string, timeout time.Duration) (*os.File, error) {
	return nil, errNoFIFO
}

// Retire does nothing on Windows.
func Retire(dir, name, why string) {}

// Sweep does nothing on Windows.
func Sweep(dir string, age time.Duration) {}
