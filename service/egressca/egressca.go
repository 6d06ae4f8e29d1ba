// Package egressca keeps the per-install certificate authority the egress
// proxy signs its certificates with when it terminates TLS for a masked
// credential's hosts, and makes the CA bundle a sandbox trusts.
//
// # Rules
//
// The CA's private key lives in the OS keychain only, beside its
// certificate, in one item (Item), so that a reader never pairs a key
// with another certificate. It is generated on first use: ECDSA P-256,
// valid for one year, for signing TLS server certificates only (no CA
// below it, extended key usage serverAuth).
// An expired CA, or one within RenewBefore of expiry, is replaced on the
// next use; Rotate replaces it at once. Nothing here prints or logs the
// key; errors name the item.
package egressca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
)

// Item is the keychain item holding the CA: its certificate and its
// private key, PEM, one after the other. The "/" keeps it apart from
// credential ids.
const Item = "egress-ca/v1"

// Validity is how long a new CA is valid; RenewBefore how long before
// its expiry it is replaced.
const (
	Validity    = 365 * 24 * time.Hour
	RenewBefore = 30 * 24 * time.Hour
)

// A CA is the certificate authority and its signer.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertPEM is the certificate, PEM-encoded, for the sandbox's bundle.
	CertPEM []byte
}

// Fingerprint returns the SHA-256 of the certificate, upper-case hex in
// colon-separated pairs, as browsers and openssl print it.
func (c *CA) Fingerprint() string {
	sum := sha256.Sum256(c.Cert.Raw)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// Peek returns the stored CA without making one; an error wrapping
// keyring.ErrNotFound means there is none yet.
func Peek(s keyring.Store) (*CA, error) {
	v, err := s.Get(Item)
	if err != nil {
		return nil, fmt.Errorf("reading the egress CA (keychain item %s): %w", Item, err)
	}
	ca, err := parse(v)
	if err != nil {
		return nil, fmt.Errorf("the egress CA in keychain item %s is damaged (%v); replace it with 'gatehouse cred rotate-ca'", Item, err)
	}
	return ca, nil
}

// Load returns the stored CA, making and storing a new one when there is
// none, or when it expires within RenewBefore of now.
func Load(s keyring.Store, now time.Time) (*CA, error) {
	ca, err := Peek(s)
	switch {
	case err == nil && now.Add(RenewBefore).Before(ca.Cert.NotAfter) && !now.Before(ca.Cert.NotBefore):
		return ca, nil
	case err != nil && !errors.Is(err, keyring.ErrNotFound):
		return nil, err
	}
	return Rotate(s, now)
}

// Rotate makes a new CA and stores it in place of the old one. It
// returns the CA stored, read back: when two processes make one at once,
// both use the one that was stored last.
func Rotate(s keyring.Store, now time.Time) (*CA, error) {
	pemText, err := generate(now)
	if err != nil {
		return nil, fmt.Errorf("making the egress CA: %w", err)
	}
	if err := s.Set(Item, pemText); err != nil {
		return nil, fmt.Errorf("storing the egress CA (keychain item %s): %w", Item, err)
	}
	return Peek(s)
}

func generate(now time.Time) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return "", err
	}
	host, _ := os.Hostname()
	name := "Gatehouse egress CA"
	if host != "" {
		name += " (" + host + ")"
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"Gatehouse (this machine only)"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(Validity),
		KeyUsage:     x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		// Server certificates only: a verifier refuses anything else it
		// would sign (code, mail, client certificates).
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})), nil
}

func parse(v string) (*CA, error) {
	rest := []byte(v)
	ca := &CA{}
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch b.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, err
			}
			ca.Cert, ca.CertPEM = c, pem.EncodeToMemory(b)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, errors.New("the private key does not parse")
			}
			signer, ok := k.(crypto.Signer)
			if !ok {
				return nil, errors.New("the private key cannot sign")
			}
			ca.Key = signer
		}
	}
	switch {
	case ca.Cert == nil:
		return nil, errors.New("no certificate")
	case ca.Key == nil:
		return nil, errors.New("no private key")
	case !ca.Cert.IsCA:
		return nil, errors.New("the certificate is not a CA")
	}
	pub, ok := ca.Key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(ca.Cert.PublicKey) {
		return nil, errors.New("the private key does not match the certificate")
	}
	return ca, nil
}

// systemBundles are where the system's trusted roots are, as one PEM
// file, on the systems Gatehouse runs on (the list crypto/x509 reads).
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // RHEL 7+
	"/etc/ssl/cert.pem",                                 // Alpine, macOS
}

// SystemRoots returns the system's roots as PEM, and the file they were
// read from; no file is an error.
func SystemRoots() ([]byte, string, error) {
	for _, f := range systemBundles {
		b, err := os.ReadFile(f)
		if err == nil && len(b) > 0 {
			return b, f, nil
		}
	}
	return nil, "", fmt.Errorf("no system CA bundle found (looked in %s); install the ca-certificates package", strings.Join(systemBundles, ", "))
}

// Bundle returns the system roots followed by the CA: what a sandbox
// with masked credentials trusts.
func Bundle(roots []byte, ca *CA) []byte {
	out := append([]byte{}, roots...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, "# Gatehouse egress CA: the egress proxy terminates TLS to masked credentials' hosts with it\n"...)
	return append(out, ca.CertPEM...)
}

// BundleVars are the variables pointing tools at a CA bundle: OpenSSL
// (and what links it: curl, git, Python's ssl, Ruby), curl, Python
// requests, Node.js (which adds the file to its own roots), git, pip.
var BundleVars = []string{
	"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT",
}
