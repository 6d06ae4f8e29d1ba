package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
)

// AttrPrefix begins the name of every attribute an event's record
// carries: the card's field as `gatehouse audit export` writes it, nested
// objects joined with dots (gatehouse.output.stdout_bytes).
const AttrPrefix = "gatehouse."

// EventName names every record the export writes.
const EventName = "gatehouse.audit.event"

// ScopeName is the instrumentation scope of the records.
const ScopeName = "github.com/gatehouse-dev/gatehouse/service/export"

// Resource describes where the events come from: the Gatehouse service of
// one user on one host. It reads no OTEL_ variables: what a record says
// about its origin is this machine's, not its environment's.
func Resource(version string) *resource.Resource {
	attrs := []attribute.KeyValue{
		attribute.String("service.name", "gatehouse"),
		attribute.String("service.version", version),
	}
	if h, err := os.Hostname(); err == nil {
		attrs = append(attrs, attribute.String("host.name", h))
	}
	if u, err := user.Current(); err == nil {
		attrs = append(attrs, attribute.String("user.name", u.Username))
	}
	return resource.NewSchemaless(attrs...)
}

// An Encoder turns audit events into OTLP log records, through the
// OpenTelemetry log SDK, so that each record carries the resource and the
// scope as the SDK sets them. It is not safe for concurrent use.
//
// What a record holds is the card and nothing else: the event's fields as
// attributes (credential ids, never values; output sizes and hashes,
// never output), the host's sandbox reason, and a one-line body naming
// the agent, the action and the outcome. The judged command text is not
// exported, nor any field that quotes it (commandFields): the card's
// command_hash names the command, blocked_by and rule say why it was
// decided so, and the text stays in the local trail.
type Encoder struct {
	provider *sdklog.LoggerProvider
	logger   otellog.Logger
	out      *collect
}

// NewEncoder returns an Encoder whose records carry res.
func NewEncoder(res *resource.Resource, version string) *Encoder {
	c := &collect{}
	p := sdklog.NewLoggerProvider(
		sdklog.WithResource(res),
		sdklog.WithProcessor(c),
		// The card is bounded by the audit trail; nothing of it is cut.
		sdklog.WithAttributeCountLimit(-1),
		sdklog.WithAttributeValueLengthLimit(-1),
	)
	return &Encoder{
		provider: p,
		logger:   p.Logger(ScopeName, otellog.WithInstrumentationVersion(version)),
		out:      c,
	}
}

// Records returns one record per entry, in order.
func (e *Encoder) Records(entries []audit.Entry) ([]sdklog.Record, error) {
	e.out.recs = e.out.recs[:0]
	for i := range entries {
		r, err := record(&entries[i])
		if err != nil {
			return nil, err
		}
		e.logger.Emit(context.Background(), r)
	}
	if len(e.out.recs) != len(entries) {
		return nil, fmt.Errorf("export: the log SDK produced %d records for %d events", len(e.out.recs), len(entries))
	}
	return slices.Clone(e.out.recs), nil
}

// collect is the provider's processor: it keeps each record the logger
// emits, for the exporter's own loop to send.
type collect struct{ recs []sdklog.Record }

func (c *collect) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.recs = append(c.recs, r.Clone())
	return nil
}
func (*collect) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (*collect) Shutdown(context.Context) error                         { return nil }
func (*collect) ForceFlush(context.Context) error                       { return nil }

// record builds the log record of one event.
func record(e *audit.Entry) (otellog.Record, error) {
	ev := e.Event
	var r otellog.Record
	r.SetEventName(EventName)
	r.SetTimestamp(ev.Time)
	r.SetObservedTimestamp(time.Now())
	sev, text := severity(e)
	r.SetSeverity(sev)
	r.SetSeverityText(text)
	r.SetBody(attribute.StringValue(summary(e)))
	attrs, err := Attributes(e)
	if err != nil {
		return r, err
	}
	r.AddAttributes(attrs...)
	return r, nil
}

// Attributes returns the card of e as attributes: every field of the
// event's JSON (as `gatehouse audit export` writes it) under AttrPrefix,
// nested objects flattened with dots, lists of objects as lists of maps,
// nulls left out; the time is the record's timestamp, not an attribute.
// The host's sandbox reason is added; the command text, and the fields
// that quote it, are not.
func Attributes(e *audit.Entry) ([]attribute.KeyValue, error) {
	b, err := json.Marshal(e.Event)
	if err != nil {
		return nil, fmt.Errorf("export: encoding event %s: %w", e.Event.ID, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var card map[string]any
	if err := dec.Decode(&card); err != nil {
		return nil, fmt.Errorf("export: encoding event %s: %w", e.Event.ID, err)
	}
	delete(card, "time")
	for _, k := range commandFields {
		delete(card, k)
	}
	var out []attribute.KeyValue
	flatten(strings.TrimSuffix(AttrPrefix, "."), card, &out)
	if e.SandboxReason != "" {
		out = append(out, attribute.String(AttrPrefix+"sandbox_reason", e.SandboxReason))
	}
	return out, nil
}

// commandFields are the card's fields that quote the command's text: a
// denial's reason names the part of the command it is about (up to 160
// bytes of it, a token typed literally included). They stay in the local
// trail; the export has the code (blocked_by) and the rule's name instead.
var commandFields = []string{"reason"}

// flatten appends the attributes of the object m, whose key is prefix.
func flatten(prefix string, m map[string]any, out *[]attribute.KeyValue) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		key := prefix + "." + k
		if sub, ok := m[k].(map[string]any); ok {
			flatten(key, sub, out)
			continue
		}
		if v, ok := value(m[k]); ok {
			*out = append(*out, attribute.KeyValue{Key: attribute.Key(key), Value: v})
		}
	}
}

// value converts a decoded JSON value; false for null.
func value(v any) (attribute.Value, bool) {
	switch v := v.(type) {
	case nil:
		return attribute.Value{}, false
	case bool:
		return attribute.BoolValue(v), true
	case string:
		return attribute.StringValue(v), true
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return attribute.Int64Value(n), true
		}
		f, _ := v.Float64()
		return attribute.Float64Value(f), true
	case []any:
		vals := make([]attribute.Value, 0, len(v))
		for _, x := range v {
			if xv, ok := value(x); ok {
				vals = append(vals, xv)
			}
		}
		return attribute.SliceValue(vals...), true
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var kvs []attribute.KeyValue
		for _, k := range keys {
			if xv, ok := value(v[k]); ok {
				kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: xv})
			}
		}
		return attribute.MapValue(kvs...), true
	}
	return attribute.StringValue(fmt.Sprint(v)), true
}

// severity is WARN for what a reviewer looks at first — a denial, a
// command that did not complete, isolation short of the full sandbox —
// and INFO otherwise.
func severity(e *audit.Entry) (otellog.Severity, string) {
	ev := e.Event
	switch {
	case ev.Decision == api.DecisionDeny,
		ev.Status != "" && ev.Status != api.StatusCompleted,
		ev.SandboxMode == "none", ev.SandboxMode == "bubblewrap_no_seccomp", ev.SandboxMode == "unavailable_denied":
		return otellog.SeverityWarn, "WARN"
	}
	return otellog.SeverityInfo, "INFO"
}

// summary is the record's body: "cli shell:execute allow completed exit 0".
func summary(e *audit.Entry) string {
	ev := e.Event
	parts := []string{ev.Agent, ev.ActionType, string(ev.Decision)}
	if ev.BlockedBy != "" {
		parts = append(parts, ev.BlockedBy)
	}
	if ev.Status != "" {
		parts = append(parts, ev.Status)
	}
	if ev.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *ev.ExitCode))
	}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " ")
}
