//go:build !linux && !darwin && !windows

package keyring

import (
	"context"
	"runtime"
)

func preflight(context.Context) error {
	return &UnavailableError{
		Cause: "no supported keychain on " + runtime.GOOS,
		Hint:  "Gatehouse stores secrets in the macOS Keychain, the Secret Service (Linux) or the Windows Credential Manager",
	}
}

func (s *OS) list(ctx context.Context) ([]string, error) { return nil, preflight(ctx) }

func platformDescribe(error) (string, bool) { return "", false }
