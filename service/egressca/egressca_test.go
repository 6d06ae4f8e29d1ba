package egressca

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	s := &keyring.Memory{}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	if _, err := Peek(s); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("Peek before first use: %v, want not found", err)
	}
	ca, err := Load(s, now)
	if err != nil {
		t.Fatal(err)
	}
	c := ca.Cert
	if !c.IsCA || !c.MaxPathLenZero || c.KeyUsage&x509.KeyUsageCertSign == 0 || len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("not a signing-only CA: IsCA %v MaxPathLenZero %v usage %v", c.IsCA, c.MaxPathLenZero, c.KeyUsage)
	}
	pub, ok := c.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Errorf("key %T, want ECDSA P-256", c.PublicKey)
	}
	if got := c.NotAfter.Sub(now); got != Validity {
		t.Errorf("valid for %v after now, want %v", got, Validity)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	// The stored item holds it all; a second Load returns the same CA.
	again, err := Load(s, now.Add(24*time.Hour))
	if err != nil || !bytes.Equal(again.Cert.Raw, c.Raw) {
		t.Fatalf("second Load made another CA (%v)", err)
	}
	if fp := ca.Fingerprint(); len(fp) != 95 || strings.Count(fp, ":") != 31 || fp != again.Fingerprint() {
		t.Errorf("fingerprint %q", fp)
	}
	// Near its expiry it is replaced.
	renewed, err := Load(s, c.NotAfter.Add(-RenewBefore+time.Hour))
	if err != nil || bytes.Equal(renewed.Cert.Raw, c.Raw) {
		t.Fatalf("Load near expiry kept the old CA (%v)", err)
	}
	// Rotate replaces it at once.
	rotated, err := Rotate(s, now)
	if err != nil || bytes.Equal(rotated.Cert.Raw, renewed.Cert.Raw) {
		t.Fatalf("Rotate kept the CA (%v)", err)
	}
	if p, err := Peek(s); err != nil || !bytes.Equal(p.Cert.Raw, rotated.Cert.Raw) {
		t.Errorf("Peek after Rotate: %v", err)
	}
}

func TestLoadDamaged(t *testing.T) {
	t.Parallel()
	s := &keyring.Memory{}
	other, _ := generate(time.Now())
	mine, _ := generate(time.Now())
	cert, _, _ := strings.Cut(mine, "-----BEGIN PRIVATE KEY")
	_, key, _ := strings.Cut(other, "-----END CERTIFICATE-----\n")
	for name, v := range map[string]string{
		"garbage":          "not pem",
		"no key":           cert,
		"mismatched key":   cert + key,
		"key without cert": key,
	} {
		s.Set(Item, v)
		_, err := Load(s, time.Now())
		if err == nil || !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "rotate-ca") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A keychain that cannot be read is an error, not a new CA.
	s2 := &keyring.Memory{Err: &keyring.UnavailableError{Cause: "no D-Bus session bus"}}
	if _, err := Load(s2, time.Now()); !errors.Is(err, keyring.ErrUnavailable) {
		t.Errorf("unavailable keychain: %v", err)
	}
}

func TestBundle(t *testing.T) {
	t.Parallel()
	ca, err := Load(&keyring.Memory{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	roots, file, err := SystemRoots()
	if err != nil {
		t.Skipf("no system roots here: %v", err)
	}
	b := Bundle(roots, ca)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatal("the bundle does not parse")
	}
	if _, err := ca.Cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Errorf("the bundle does not hold the CA: %v", err)
	}
	if !bytes.HasPrefix(b, roots) {
		t.Errorf("the bundle does not start with the system roots of %s", file)
	}
}
