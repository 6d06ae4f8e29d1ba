// Package keyring keeps Gatehouse's secrets — credential values and the
// audit chain's key — in the OS keychain: the macOS Keychain, the Secret
// Service on Linux (GNOME Keyring, KWallet, KeePassXC), the Windows
// Credential Manager. Every item lives under one service name, "gatehouse".
//
// Nothing in this package ever formats a secret value into an error or a
// log line.
//
// # Names
//
// Item names are chosen by the caller. Names containing "/" are reserved
// for Gatehouse's own keys (for example "audit/hmac-key"); credential ids
// never contain one.
package keyring

import (
	"errors"
	"slices"
	"sync"
)

// Service is the keychain service name every Gatehouse item is stored under.
const Service = "gatehouse"

// A Store holds named secrets. Implementations are safe for concurrent use.
type Store interface {
	// Get returns the value stored under name, or an error wrapping
	// ErrNotFound when there is none.
	Get(name string) (string, error)
	// Set stores value under name, replacing any previous value.
	Set(name, value string) error
	// Delete removes name; it returns an error wrapping ErrNotFound when
	// there was nothing to remove.
	Delete(name string) error
	// List returns the names stored, sorted. It never returns values.
	List() ([]string, error)
}

// ErrNotFound means the keychain holds no item of that name.
var ErrNotFound = errors.New("not found in the keychain")

// ErrUnavailable means the keychain cannot be used here: an
// *UnavailableError says why and how to fix it.
var ErrUnavailable = errors.New("keychain unavailable")

// An UnavailableError reports why the keychain cannot be used, and how to
// fix it. It matches ErrUnavailable with errors.Is.
type UnavailableError struct {
	// Cause says what is missing: "no D-Bus session bus", "the login
	// keyring is locked", …
	Cause string
	// Hint says how to fix it, as one line.
	Hint string
}

func (e *UnavailableError) Error() string { return "keychain unavailable: " + e.Cause }

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Hint returns the remedy carried by err when it is (or wraps) an
// *UnavailableError, else "".
func Hint(err error) string {
	var u *UnavailableError
	if errors.As(err, &u) {
		return u.Hint
	}
	return ""
}

// Memory is a Store kept in memory, for tests. The zero value is empty and
// ready to use; it is safe for concurrent use.
type Memory struct {
	mu sync.Mutex
	m  map[string]string
	// Err, when set, is returned by every call: it simulates a keychain
	// that is unavailable or failing.
	Err error
}

// NewMemory returns an empty in-memory Store.
func NewMemory() *Memory { return &Memory{} }

// Get implements Store.
func (m *Memory) Get(name string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return "", m.Err
	}
	v, ok := m.m[name]
	if !ok {
		return "", notFound(name)
	}
	return v, nil
}

// Set implements Store.
func (m *Memory) Set(name, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return m.Err
	}
	if m.m == nil {
		m.m = map[string]string{}
	}
	m.m[name] = value
	return nil
}

// Delete implements Store.
func (m *Memory) Delete(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return m.Err
	}
	if _, ok := m.m[name]; !ok {
		return notFound(name)
	}
	delete(m.m, name)
	return nil
}

// List implements Store.
func (m *Memory) List() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return nil, m.Err
	}
	names := make([]string, 0, len(m.m))
	for k := range m.m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, nil
}

// A notFoundError names the missing item and matches ErrNotFound.
type notFoundError struct{ name string }

func (e *notFoundError) Error() string        { return e.name + ": " + ErrNotFound.Error() }
func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(name string) error { return &notFoundError{name: name} }
