package export

// This file builds the OTLP exporter from exec.audit.export.otlp. Header
// values are read from the keychain here and go nowhere but into the
// exporter's requests: no error, log line or event holds one; errors name
// the header and the credential id.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the "gzip" compressor otlploggrpc names

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// DefaultHTTPPath is where an http/protobuf endpoint without a path is
// sent (the OTLP specification's logs path).
const DefaultHTTPPath = "/v1/logs"

// Dial builds the OTLP log exporter cfg describes, reading its header
// values from keys. The exporter's own retries are off (Serve retries).
func Dial(ctx context.Context, cfg policy.OTLPExport, keys keyring.Store) (sdklog.Exporter, error) {
	if msg := policy.EndpointProblem(cfg.Endpoint, cfg.Protocol); msg != "" {
		return nil, errors.New(msg)
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	headers, err := Headers(cfg.Headers, keys)
	if err != nil {
		return nil, err
	}
	var tlsCfg *tls.Config
	if u.Scheme == "https" {
		if tlsCfg, err = tlsConfig(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	timeout := time.Duration(cfg.TimeoutSeconds) * time.Second
	switch cfg.Protocol {
	case policy.ProtocolHTTP:
		endpoint := *u
		if endpoint.Path == "" || endpoint.Path == "/" {
			endpoint.Path = DefaultHTTPPath
		}
		opts := []otlploghttp.Option{
			// The scheme decides TLS: https sets it, http (loopback only)
			// does not.
			otlploghttp.WithEndpointURL(endpoint.String()),
			otlploghttp.WithHeaders(headers),
			otlploghttp.WithTimeout(timeout),
			otlploghttp.WithCompression(otlploghttp.GzipCompression),
			otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}),
			// Given even when nil (plaintext), so that no TLS setting
			// comes from OTEL_EXPORTER_OTLP_CERTIFICATE and the like.
			otlploghttp.WithTLSClientConfig(tlsCfg),
		}
		return otlploghttp.New(ctx, opts...)
	case policy.ProtocolGRPC:
		creds := insecure.NewCredentials()
		if tlsCfg != nil {
			creds = credentials.NewTLS(tlsCfg)
		}
		return otlploggrpc.New(ctx,
			otlploggrpc.WithEndpoint(u.Host),
			otlploggrpc.WithTLSCredentials(creds),
			otlploggrpc.WithHeaders(headers),
			otlploggrpc.WithTimeout(timeout),
			otlploggrpc.WithCompressor("gzip"),
			otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}),
		)
	}
	return nil, fmt.Errorf("protocol %q is not one of http/protobuf, grpc", cfg.Protocol)
}

// Headers returns the header values with every ${credential:ID} replaced
// by the credential's value from keys. An error names the header and the
// credential, never a value.
func Headers(h policy.OTLPHeaders, keys keyring.Store) (map[string]string, error) {
	out := make(map[string]string, len(h))
	for name, tmpl := range h {
		ids, err := broker.Refs(tmpl)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", name, err)
		}
		values := map[string]string{}
		for _, id := range ids {
			v, err := keys.Get(id)
			if errors.Is(err, keyring.ErrNotFound) {
				return nil, fmt.Errorf("header %s: credential %q is not in the keychain; store it with 'gatehouse cred set %s'", name, id, id)
			}
			if err != nil {
				return nil, fmt.Errorf("header %s: reading credential %q: %w", name, id, err)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("header %s: credential %q holds a line break or NUL, which no header value may", name, id)
			}
			values[id] = v
		}
		out[name] = broker.Expand(tmpl, func(id string) string { return values[id] })
	}
	return out, nil
}

// tlsConfig trusts the system roots, or the certificates in caFile.
func tlsConfig(caFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca_file %s holds no PEM certificate", caFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}
