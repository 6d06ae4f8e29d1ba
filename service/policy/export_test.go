package policy

import (
	"reflect"
	"strings"
	"testing"
)

// otlp wraps lines of the exec.audit.export.otlp section in a file.
func otlp(lines ...string) string {
	return "exec:\n  audit:\n    export:\n      otlp:\n        " + strings.Join(lines, "\n        ") + "\n"
}

func TestExportValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, user, want string
	}{
		{name: "https", user: otlp("endpoint: https://otel.example.com:4318/v1/logs")},
		{name: "http loopback", user: otlp("endpoint: http://127.0.0.1:4318")},
		{name: "http localhost", user: otlp("endpoint: http://localhost:4318")},
		{name: "http v6 loopback", user: otlp("endpoint: http://[::1]:4317", "protocol: grpc")},
		{name: "grpc https", user: otlp("endpoint: https://otel.example.com:4317", "protocol: grpc")},
		{name: "headers with references",
			user: otlp(`headers: {authorization: "Bearer ${credential:otel_token}", x-scope-orgid: team-a}`)},
		{name: "http to a remote host",
			user: otlp("endpoint: http://otel.example.com:4318"),
			want: `config.yaml:5: exec.audit.export.otlp.endpoint: "http://otel.example.com:4318" is plaintext http to a host that is not loopback; use https (http is allowed only to 127.0.0.1, ::1 or localhost)`},
		{name: "http to a name that merely starts like loopback",
			user: otlp("endpoint: http://127.0.0.1.example.com:4318"),
			want: `is plaintext http to a host that is not loopback`},
		{name: "not a URL",
			user: otlp("endpoint: otel.example.com:4318"),
			want: `config.yaml:5: exec.audit.export.otlp.endpoint: "otel.example.com:4318" is not a URL; want one like https://otel.example.com:4318`},
		{name: "no host",
			user: otlp("endpoint: https://:4318"),
			want: `"https://:4318" is not a URL`},
		{name: "other scheme",
			user: otlp("endpoint: ftp://otel.example.com"),
			want: `the scheme must be https (or http to a loopback address)`},
		{name: "user info is refused without printing it",
			user: otlp("endpoint: https://alice:s3cret@otel.example.com"),
			want: `"https://otel.example.com…" carries user information; send credentials in headers, from the keychain`},
		{name: "bad port",
			user: otlp("endpoint: https://otel.example.com:99999"),
			want: `"99999" is not a port`},
		{name: "grpc with a path",
			user: otlp("endpoint: https://otel.example.com:4317/v1/logs", "protocol: grpc"),
			want: `config.yaml:5: exec.audit.export.otlp.endpoint: "https://otel.example.com:4317/v1/logs" has a path; a grpc endpoint is scheme, host and port only (protocol grpc, config.yaml:6)`},
		{name: "protocol",
			user: otlp("protocol: http/json"),
			want: `config.yaml:5: exec.audit.export.otlp.protocol: "http/json" is not one of http/protobuf, grpc`},
		{name: "bad reference, value not printed",
			user: otlp(`headers: {authorization: "Bearer ${credential:Bad-Id} hunter2"}`),
			want: `config.yaml:5: exec.audit.export.otlp.headers: authorization: the value holds a bad reference: ${credential:Bad-Id} is not a credential reference`},
		{name: "reserved header",
			user: otlp(`headers: {content-type: text/plain}`),
			want: `config.yaml:5: exec.audit.export.otlp.headers: content-type: is reserved: the exporter sets it`},
		{name: "header name",
			user: otlp(`headers: {"x y": z}`),
			want: `x y: not a header name`},
		{name: "header value line break",
			user: otlp(`headers: {x-a: "one\ntwo"}`),
			want: `x-a: the value holds a line break or NUL`},
		{name: "ca_file relative",
			user: otlp("ca_file: certs/ca.pem"),
			want: `config.yaml:5: exec.audit.export.otlp.ca_file: "certs/ca.pem" is not an absolute path`},
		{name: "ca_file with plaintext",
			user: otlp("endpoint: http://127.0.0.1:4318", "ca_file: /etc/ssl/ca.pem"),
			want: `config.yaml:6: exec.audit.export.otlp.ca_file: "/etc/ssl/ca.pem" is for an https endpoint; the endpoint "http://127.0.0.1:4318" (config.yaml:5) is plaintext`},
		{name: "batch size",
			user: otlp("batch_size: 0"),
			want: `config.yaml:5: exec.audit.export.otlp.batch_size: 0 is out of range; want 1 to 10000`},
		{name: "backoff order",
			user: otlp("retry_initial_backoff_ms: 5000", "retry_max_backoff_ms: 1000"),
			want: `config.yaml:6: exec.audit.export.otlp.retry_max_backoff_ms: 1000 is less than retry_initial_backoff_ms 5000 (config.yaml:5); want at least that`},
		{name: "unknown field",
			user: otlp("insecure: true"),
			want: `config.yaml:5: exec.audit.export.otlp.insecure: unknown field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, got := loadFiles(t, "", tc.user)
			switch {
			case tc.want == "" && got != "":
				t.Fatalf("got %q, want no error", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Fatalf("got %q, want %q", got, tc.want)
			case strings.Contains(got, "hunter2") || strings.Contains(got, "s3cret"):
				t.Fatalf("a header or URL secret is in the message: %q", got)
			}
		})
	}
}

func TestExportNarrow(t *testing.T) {
	t.Parallel()
	managed := "# IT\n" + otlp("endpoint: https://otel.corp.example:4318", `headers: {authorization: "Bearer ${credential:otel_token}"}`)
	for _, tc := range []struct {
		name, managed, user string
		want                string
		check               func(o OTLPExport) bool
	}{
		{name: "user keeps the managed export",
			managed: managed, user: otlp("endpoint: https://otel.corp.example:4318"),
			check: func(o OTLPExport) bool { return o.Endpoint == "https://otel.corp.example:4318" }},
		{name: "user file silent: managed export in force",
			managed: managed, user: "policy:\n  exec_timeout_seconds: 60\n",
			check: func(o OTLPExport) bool {
				return o.Endpoint == "https://otel.corp.example:4318" && o.Headers["authorization"] == "Bearer ${credential:otel_token}"
			}},
		{name: "user turns it off",
			managed: managed, user: otlp(`endpoint: ""`),
			want: `config.yaml:5: exec.audit.export.otlp.endpoint: "" would turn off the managed export to "https://otel.corp.example:4318" (managed.yaml:6); the export is IT's to turn off`},
		{name: "user points it elsewhere",
			managed: managed, user: otlp("endpoint: http://127.0.0.1:4318"),
			want: `config.yaml:5: exec.audit.export.otlp.endpoint: "http://127.0.0.1:4318" differs from the managed value "https://otel.corp.example:4318" (managed.yaml:6); only "https://otel.corp.example:4318" is allowed`},
		{name: "user changes the protocol the managed file left default",
			managed: managed, user: otlp("protocol: grpc"),
			want: `config.yaml:5: exec.audit.export.otlp.protocol: "grpc" differs from the value "http/protobuf" in force under the managed export (managed.yaml:6); only "http/protobuf" is allowed`},
		{name: "user changes headers: names only in the message",
			managed: managed, user: otlp(`headers: {authorization: "Bearer literal-secret"}`),
			want: `config.yaml:5: exec.audit.export.otlp.headers: differs from the managed value headers ["authorization"] (managed.yaml:7); only the managed headers are allowed`},
		{name: "user drops the headers",
			managed: managed, user: otlp(`headers: {}`),
			want: `exec.audit.export.otlp.headers: differs from the managed value`},
		{name: "user trusts another CA",
			managed: managed, user: otlp("ca_file: /home/u/my-ca.pem"),
			want: `config.yaml:5: exec.audit.export.otlp.ca_file: "/home/u/my-ca.pem" differs from the value "" in force under the managed export (managed.yaml:6); only "" is allowed`},
		{name: "user slows it down",
			managed: managed, user: otlp("retry_max_backoff_ms: 3600000"),
			want: `exec.audit.export.otlp.retry_max_backoff_ms: 3600000 differs from the value 60000 in force under the managed export`},
		{name: "no managed export: the user's own",
			managed: "policy:\n  exec_timeout_seconds: 300\n", user: otlp("endpoint: http://127.0.0.1:4318", "batch_size: 10"),
			check: func(o OTLPExport) bool { return o.Endpoint == "http://127.0.0.1:4318" && o.BatchSize == 10 }},
		{name: "a managed field without an endpoint locks that field",
			managed: otlp("batch_size: 100"), user: otlp("endpoint: http://127.0.0.1:4318", "batch_size: 10"),
			want: `config.yaml:6: exec.audit.export.otlp.batch_size: 10 differs from the managed value 100 (managed.yaml:5); only 100 is allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, got := loadFiles(t, tc.managed, tc.user)
			if tc.want != "" {
				if !strings.Contains(got, tc.want) {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				if strings.Contains(got, "literal-secret") {
					t.Fatalf("a header value is in the message: %q", got)
				}
				return
			}
			if got != "" {
				t.Fatalf("got %q, want no error", got)
			}
			if o := l.Config.Exec.Audit.Export.OTLP; !tc.check(o) {
				t.Fatalf("effective export %+v", o)
			}
		})
	}
}

func TestOTLPHeadersCredentials(t *testing.T) {
	t.Parallel()
	h := OTLPHeaders{"authorization": "Bearer ${credential:otel_token}", "x-b": "${credential:b}${credential:otel_token}", "x-c": "plain"}
	if got, want := h.Credentials(), []string{"b", "otel_token"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
