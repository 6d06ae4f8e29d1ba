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

// OpenIn is not supported on Windows.
func OpenIn(dir, name string) (*os.File, error) { return nil, errNoFIFO }

// Wake does nothing on Windows.
func Wake(dir, name string) {}

// OpenOut is not supported on Windows.
func OpenOut(ctx context.Context, dir, name string, timeout time.Duration) (*os.File, error) {
	return nil, errNoFIFO
}

// Retire does nothing on Windows.
func Retire(dir, name, why string) {}

// Sweep does nothing on Windows.
func Sweep(dir string, age time.Duration) {}
