package policy

// This file holds exec.audit.export.otlp, the fleet export of the audit
// trail to an OpenTelemetry collector (service/export sends it):
//
//	endpoint                  "" (no export) or a URL: https://host[:port][/path],
//	                          or http:// only to a loopback address
//	protocol                  http/protobuf | grpc
//	headers                   NAME → text; values may hold ${credential:ID}
//	                          references, read from the keychain when the
//	                          exporter connects
//	ca_file                   PEM roots for an https endpoint ("" = system)
//	batch_size                events per request
//	timeout_seconds           one request's deadline
//	retry_initial_backoff_ms, the wait after a failed request, doubled on
//	retry_max_backoff_ms      each failure up to the maximum
//
// A managed file that sets the endpoint owns the whole section: the user
// file may not turn the export off, point it elsewhere, or change how it
// is sent (narrow.go calls narrowExport). Header values are never printed
// in messages: a literal secret written by mistake stays out of logs.

import (
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse-dev/gatehouse/service/broker"
)

// AuditExport says where the audit trail is exported, beside the local
// store.
type AuditExport struct {
	OTLP OTLPExport `yaml:"otlp" json:"otlp"`
}

// OTLPExport sends every audit event to an OpenTelemetry collector as an
// OTLP log record.
type OTLPExport struct {
	// Endpoint is the collector's URL; "" exports nothing.
	Endpoint string `yaml:"endpoint" json:"endpoint"`
	// Protocol is http/protobuf or grpc.
	Protocol string `yaml:"protocol" json:"protocol"`
	// Headers are sent with every request; values may reference
	// credentials in the keychain ("Bearer ${credential:otel_token}").
	Headers OTLPHeaders `yaml:"headers" json:"headers"`
	// CAFile holds PEM certificates trusted for the endpoint in place of
	// the system roots; "" trusts the system roots.
	CAFile string `yaml:"ca_file" json:"ca_file"`
	// BatchSize is the most events one request carries.
	BatchSize int `yaml:"batch_size" json:"batch_size"`
	// TimeoutSeconds bounds one request.
	TimeoutSeconds int `yaml:"timeout_seconds" json:"timeout_seconds"`
	// RetryInitialBackoffMS is the wait after the first failed request;
	// each further failure doubles it, up to RetryMaxBackoffMS.
	RetryInitialBackoffMS int `yaml:"retry_initial_backoff_ms" json:"retry_initial_backoff_ms"`
	RetryMaxBackoffMS     int `yaml:"retry_max_backoff_ms" json:"retry_max_backoff_ms"`
}

// Enabled reports whether the export is on.
func (o OTLPExport) Enabled() bool { return o.Endpoint != "" }

// OTLPHeaders maps header names to values, which may hold credential
// references.
type OTLPHeaders map[string]string

// The export protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

var exportProtocols = []string{ProtocolHTTP, ProtocolGRPC}

// exportPrefix begins every field of the export section.
const exportPrefix = "exec.audit.export."

// Limits on the headers.
const maxOTLPHeaders = 32

// reservedOTLPHeaders are set by the exporter itself.
var reservedOTLPHeaders = []string{"Content-Type", "Content-Encoding", "Content-Length", "Host", "User-Agent", "Te", "Connection"}

// headerName is an HTTP token (RFC 9110), lower-case for gRPC metadata.
var headerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$`) })

func (m OTLPHeaders) problems() []mapProblem {
	var out []mapProblem
	for _, k := range sortedKeys(m) {
		switch {
		case !headerName().MatchString(k):
			out = append(out, mapProblem{k, "not a header name; want letters, digits and - (an HTTP token)"})
		case containsFold(reservedOTLPHeaders, k):
			out = append(out, mapProblem{k, "is reserved: the exporter sets it"})
		case strings.HasPrefix(strings.ToLower(k), "grpc-"):
			out = append(out, mapProblem{k, "is reserved: grpc- headers belong to the gRPC protocol"})
		}
		v := m[k]
		if _, err := broker.Refs(v); err != nil {
			out = append(out, mapProblem{k, fmt.Sprintf("the value holds a bad reference: %v", err)})
			continue
		}
		// The value is checked with its references replaced, so that no
		// secret is printed: only its shape is described.
		if strings.ContainsAny(broker.Expand(v, func(string) string { return "x" }), "\r\n\x00") {
			out = append(out, mapProblem{k, "the value holds a line break or NUL; a header value is one line"})
		}
	}
	if len(m) > maxOTLPHeaders {
		out = append(out, mapProblem{"", fmt.Sprintf("%d headers is too many; want at most %d", len(m), maxOTLPHeaders)})
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// DecodeNode decodes a mapping of header names to values.
func (m *OTLPHeaders) DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error {
	out, err := decodeStringMap(n, errf, `a mapping like {authorization: "Bearer ${credential:otel_token}"}`, func(s map[string]string) []mapProblem { return OTLPHeaders(s).problems() })
	if err == nil {
		*m = out
	}
	return err
}

// String writes m as a YAML flow mapping, sorted by key.
func (m OTLPHeaders) String() string { return flowMap(m) }

// Credentials returns the ids the header values reference, sorted.
func (m OTLPHeaders) Credentials() []string {
	var ids []string
	for _, k := range sortedKeys(m) {
		refs, _ := broker.Refs(m[k])
		for _, id := range refs {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// EndpointProblem says what is wrong with an export endpoint for
// protocol, or returns "". Plaintext http is allowed only to a loopback
// address (127.0.0.0/8, ::1, localhost): anything else would carry the
// trail and its headers in the clear.
func EndpointProblem(endpoint, protocol string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" || u.Opaque != "" {
		return fmt.Sprintf("%q is not a URL; want one like https://otel.example.com:4318", endpoint)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Sprintf("%q: the scheme must be https (or http to a loopback address)", endpoint)
	case u.User != nil:
		return fmt.Sprintf("%q carries user information; send credentials in headers, from the keychain", redactURL(u))
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Sprintf("%q has a query or fragment; want scheme, host, port and path only", redactURL(u))
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return fmt.Sprintf("%q is plaintext http to a host that is not loopback; use https (http is allowed only to 127.0.0.1, ::1 or localhost)", endpoint)
	case protocol == ProtocolGRPC && u.Path != "" && u.Path != "/":
		return fmt.Sprintf("%q has a path; a grpc endpoint is scheme, host and port only", endpoint)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return fmt.Sprintf("%q: %q is not a port; want 1 to 65535", endpoint, p)
		}
	}
	return ""
}

// redactURL prints u without its user information.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery, c.Fragment = "", ""
	return c.String() + "…"
}

// loopbackHost reports whether host names the loopback interface: a
// loopback address literal, or localhost.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// validateExport checks one field of the export section.
func (v *validator) validateExport(p string, val any) {
	switch p {
	case exportPrefix + "otlp.endpoint":
		// The protocol is judged on its own; here a grpc path is found
		// only where the protocol is known (checkExport).
		if s := val.(string); s != "" {
			if msg := EndpointProblem(s, ""); msg != "" {
				v.failf(p, "%s", msg)
			}
		}
	case exportPrefix + "otlp.protocol":
		if s := val.(string); !slices.Contains(exportProtocols, s) {
			v.failf(p, "%q is not one of %s", s, strings.Join(exportProtocols, ", "))
		}
	case exportPrefix + "otlp.headers":
		v.validateMap(p, val.(OTLPHeaders).problems())
	case exportPrefix + "otlp.ca_file":
		if s := val.(string); s != "" && !path.IsAbs(s) {
			v.failf(p, "%s", notAbsolute(s))
		}
	}
}

// checkExport judges the export section's fields together, once each is
// sound: a CA file is for https, a grpc endpoint has no path, and the
// backoff bounds are in order.
func checkExport(l *Loaded) []error {
	o := l.Config.Exec.Audit.Export.OTLP
	const p = exportPrefix + "otlp."
	var errs []error
	if o.Endpoint != "" {
		if msg := EndpointProblem(o.Endpoint, o.Protocol); msg != "" {
			errs = append(errs, errAt(l.source(p+"endpoint"), p+"endpoint", "%s (protocol %s, %s)", msg, o.Protocol, l.source(p+"protocol")))
		}
		if o.CAFile != "" && strings.HasPrefix(o.Endpoint, "http:") {
			errs = append(errs, errAt(l.source(p+"ca_file"), p+"ca_file", "%q is for an https endpoint; the endpoint %q (%s) is plaintext", o.CAFile, o.Endpoint, l.source(p+"endpoint")))
		}
	}
	if o.RetryMaxBackoffMS < o.RetryInitialBackoffMS {
		errs = append(errs, errAt(l.source(p+"retry_max_backoff_ms"), p+"retry_max_backoff_ms", "%d is less than retry_initial_backoff_ms %d (%s); want at least that",
			o.RetryMaxBackoffMS, o.RetryInitialBackoffMS, l.source(p+"retry_initial_backoff_ms")))
	}
	return errs
}

// narrowExport checks a user value of the export section against the
// managed file. Where the managed file sets the endpoint it owns every
// field of the section (its own value, or the default where it sets
// none): the user may not turn the export off, send it elsewhere, or
// change how it is sent. Elsewhere a managed value locks its field, as
// for the rest of exec.audit.
func narrowExport(p string, user, managed *layer) []error {
	uv, us := leafValue(&user.vals, p), user.source(p)
	mv, ms := leafValue(&managed.vals, p), managed.source(p)
	if !managed.has(p) {
		mv, ms = leafValue(embeddedDefaults(), p), managed.source(exportPrefix+"otlp.endpoint")
	}
	if reflect.DeepEqual(uv, mv) || (isEmptyMap(uv) && isEmptyMap(mv)) {
		return nil
	}
	what := "the managed value " + showExportValue(p, mv)
	if !managed.has(p) {
		what = "the value " + showExportValue(p, mv) + " in force under the managed export"
	}
	switch p {
	case exportPrefix + "otlp.endpoint":
		if uv == "" {
			return []error{errAt(us, p, `"" would turn off the managed export to %s (%s); the export is IT's to turn off`, showValue(mv), ms)}
		}
	case exportPrefix + "otlp.headers":
		return []error{errAt(us, p, "differs from %s (%s); only the managed headers are allowed", what, ms)}
	}
	return []error{errAt(us, p, "%s differs from %s (%s); only %s is allowed", showExportValue(p, uv), what, ms, showExportValue(p, mv))}
}

// managedExport reports whether the managed file bounds the export field
// p.
func managedExport(p string, managed *layer) bool {
	return strings.HasPrefix(p, exportPrefix) && (managed.has(p) || managed.has(exportPrefix+"otlp.endpoint"))
}

// showExportValue formats a value of the export section; headers by
// their names only.
func showExportValue(p string, v any) string {
	if h, ok := v.(OTLPHeaders); ok {
		names := sortedKeys(h)
		return "headers " + quoteList(names)
	}
	return showValue(v)
}

func isEmptyMap(v any) bool {
	h, ok := v.(OTLPHeaders)
	return ok && len(h) == 0
}

// embeddedDefaults returns the embedded defaults' values.
func embeddedDefaults() *Config {
	def, _ := embeddedLayer()
	return &def.vals
}
