package broker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/dlp"
)

// A credential is the keychain item named by its id. When it was set is
// kept beside it, in the item setAtPrefix+id (a time, not a secret), so
// that listing never reads a value.
const setAtPrefix = "credential-set-at/"

// MaxValueLen is the largest value a credential may have.
const MaxValueLen = dlp.MaxSecretLen

// A ValueError says why a value cannot be stored. It never holds the
// value.
type ValueError struct{ Msg string }

func (e *ValueError) Error() string { return e.Msg }

// CheckValue reports whether value can be a credential: long enough for
// output redaction to find it without redacting everything, short enough
// for the keychain, and free of NUL bytes (no environment variable can
// carry one).
func CheckValue(value string) error {
	switch {
	case len(value) < dlp.MinSecretLen:
		return &ValueError{fmt.Sprintf("the value is %d bytes; a credential needs at least %d, so that redacting it from output cannot hit ordinary text", len(value), dlp.MinSecretLen)}
	case len(value) > MaxValueLen:
		return &ValueError{fmt.Sprintf("the value is larger than %d bytes", MaxValueLen)}
	case strings.IndexByte(value, 0) >= 0:
		return &ValueError{"the value contains a NUL byte, which no environment variable can carry"}
	}
	return nil
}

// Set stores value under id, and the time now as when it was set.
func Set(s keyring.Store, id, value string, now time.Time) error {
	if !ValidID(id) {
		return fmt.Errorf("%q is not a credential id; an id is %s", id, IDRule)
	}
	if err := CheckValue(value); err != nil {
		return err
	}
	if err := s.Set(id, value); err != nil {
		return err
	}
	// The time is a convenience: a failure to record it loses nothing.
	s.Set(setAtPrefix+id, now.UTC().Format(time.RFC3339))
	return nil
}

// Remove deletes the credential id. It returns an error wrapping
// keyring.ErrNotFound when there is none.
func Remove(s keyring.Store, id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%q is not a credential id; an id is %s", id, IDRule)
	}
	err := s.Delete(id)
	if derr := s.Delete(setAtPrefix + id); err == nil && derr != nil && !errors.Is(derr, keyring.ErrNotFound) {
		return derr
	}
	return err
}

// An Entry is one stored credential, without its value.
type Entry struct {
	ID string `json:"id"`
	// SetAt is when Gatehouse stored it; zero when unknown (stored by
	// another tool).
	SetAt time.Time `json:"set_at,omitzero"`
}

// List returns the stored credentials, sorted by id. It reads no value.
func List(s keyring.Store) ([]Entry, error) {
	names, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, n := range names {
		if !ValidID(n) {
			continue // Gatehouse's own items, and set times
		}
		e := Entry{ID: n}
		if slices.Contains(names, setAtPrefix+n) {
			if v, err := s.Get(setAtPrefix + n); err == nil {
				e.SetAt, _ = time.Parse(time.RFC3339, v)
			}
		}
		out = append(out, e)
	}
	return out, nil
}
