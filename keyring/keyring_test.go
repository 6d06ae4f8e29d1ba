package keyring

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// storeContract runs the Store contract against s.
func storeContract(t *testing.T, s Store, prefix string) {
	t.Helper()
	a, b := prefix+"a", prefix+"b/with slash"
	if _, err := s.Get(a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing name: %v, want ErrNotFound", err)
	}
	if err := s.Delete(a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete of a missing name: %v, want ErrNotFound", err)
	}
	secret := "s3cr3t value\nwith a newline and ünïcode"
	if err := s.Set(a, secret); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(b, "two"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(a); err != nil || got != secret {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if err := s.Set(a, "replaced"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(a); got != "replaced" {
		t.Fatalf("after replacing, Get = %q", got)
	}
	names, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, a) || !slices.Contains(names, b) || !slices.IsSorted(names) {
		t.Fatalf("List = %q", names)
	}
	for _, n := range []string{a, b} {
		if err := s.Delete(n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(a); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), a) {
		t.Fatalf("Get after Delete: %v", err)
	}
	names, _ = s.List()
	if slices.Contains(names, a) {
		t.Fatalf("List after Delete = %q", names)
	}
}

func TestMemory(t *testing.T) {
	t.Parallel()
	storeContract(t, NewMemory(), "")
	var zero Memory
	storeContract(t, &zero, "")
}

func TestMemoryConcurrent(t *testing.T) {
	t.Parallel()
	m := NewMemory()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := fmt.Sprint(i)
			m.Set(n, n)
			m.Get(n)
			m.List()
		}()
	}
	wg.Wait()
	if names, _ := m.List(); len(names) != 16 {
		t.Errorf("%d names, want 16", len(names))
	}
}

func TestMemoryErr(t *testing.T) {
	t.Parallel()
	m := &Memory{Err: &UnavailableError{Cause: "locked", Hint: "unlock it"}}
	_, err := m.Get("x")
	if !errors.Is(err, ErrUnavailable) || Hint(err) != "unlock it" || err.Error() != "keychain unavailable: locked" {
		t.Errorf("Err: %v (hint %q)", err, Hint(err))
	}
	if Hint(errors.New("other")) != "" {
		t.Error("Hint of a plain error")
	}
}

// TestErrorsCarryNoSecret: whatever a keychain answers, the error of a
// Set never quotes the value.
func TestErrorsCarryNoSecret(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-do-not-print"
	err := translate("storing", "x", fmt.Errorf("tool said: add-generic-password -w %s", secret))
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("error %q", err)
	}
}
