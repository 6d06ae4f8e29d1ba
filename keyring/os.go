package keyring

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	gokeyring "github.com/zalando/go-keyring"
)

// OS is the system keychain, reached through github.com/zalando/go-keyring.
// It is safe for concurrent use.
//
// Before each call it checks that the keychain can answer without a
// prompt (on Linux: a session bus, a Secret Service on it, an unlocked
// login collection), so a headless session fails fast with an
// *UnavailableError instead of waiting for a password dialog nobody sees.
type OS struct {
	service string
	timeout time.Duration
}

// DefaultTimeout bounds one keychain call.
const DefaultTimeout = 15 * time.Second

// NewOS returns the OS keychain under service (Service when empty).
func NewOS(service string) *OS {
	if service == "" {
		service = Service
	}
	return &OS{service: service, timeout: DefaultTimeout}
}

// ServiceName returns the keychain service name the items live under.
func (s *OS) ServiceName() string { return s.service }

// Get implements Store.
func (s *OS) Get(name string) (string, error) {
	var v string
	err := s.do("reading", name, func(context.Context) error {
		var err error
		v, err = gokeyring.Get(s.service, name)
		return err
	})
	return v, err
}

// Set implements Store.
func (s *OS) Set(name, value string) error {
	return s.do("storing", name, func(context.Context) error {
		return gokeyring.Set(s.service, name, value)
	})
}

// Delete implements Store.
func (s *OS) Delete(name string) error {
	return s.do("deleting", name, func(context.Context) error {
		return gokeyring.Delete(s.service, name)
	})
}

// List implements Store.
func (s *OS) List() ([]string, error) {
	var names []string
	err := s.do("listing", "", func(ctx context.Context) error {
		var err error
		names, err = s.list(ctx)
		return err
	})
	return names, err
}

// do runs op after the platform's preflight check, bounded by the timeout,
// and turns what the keychain said into an error that carries no value.
func (s *OS) do(verb, name string, op func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		if err := preflight(ctx); err != nil {
			done <- err
			return
		}
		done <- op(ctx)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = &UnavailableError{
			Cause: fmt.Sprintf("the keychain did not answer within %s", s.timeout),
			Hint:  "a password prompt may be waiting: unlock the keychain and try again",
		}
	}
	return translate(verb, name, err)
}

// translate turns what the keychain said into an error that carries no
// value.
func translate(verb, name string, err error) error {
	if err == nil {
		return nil
	}
	var u *UnavailableError
	switch {
	case errors.As(err, &u):
		return err
	case errors.Is(err, gokeyring.ErrNotFound), errors.Is(err, ErrNotFound):
		return notFound(name)
	case errors.Is(err, gokeyring.ErrSetDataTooBig):
		return fmt.Errorf("%s %q: the value is too large for the keychain", verb, name)
	}
	what := describe(err)
	if name == "" {
		return fmt.Errorf("%s the keychain: %s", verb, what)
	}
	return fmt.Errorf("%s %q in the keychain: %s", verb, name, what)
}

// describe names an error without quoting what the keychain echoed: only
// an error's kind, a D-Bus error name or an exit status is kept.
func describe(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return "the keychain tool failed (" + ee.ProcessState.String() + ")"
	}
	if s, ok := platformDescribe(err); ok {
		return s
	}
	return fmt.Sprintf("the keychain refused (%T)", err)
}
