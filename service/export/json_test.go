package export

import (
	"bufio"
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/export/exporttest"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// The one-off OTLP JSON is what the exporter sends: one request per line,
// decoding (protojson) to the records a collector receives over HTTP.
func TestJSONWriter(t *testing.T) {
	t.Parallel()
	src := openTrail(t)
	ids := appendEvents(t, src, 0, 12)
	entries, err := src.EventsAfter(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := NewEncoder(Resource("1.2.3"), "1.2.3")
	w, err := NewJSONWriter(context.Background(), &out, enc)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for b := range slices.Chunk(entries, 5) {
		if err := w.Write(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	var fromJSON []exporttest.Record
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	lines := 0
	for sc.Scan() {
		lines++
		var req collogpb.ExportLogsServiceRequest
		if err := protojson.Unmarshal(sc.Bytes(), &req); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		fromJSON = append(fromJSON, exporttest.Records(&req)...)
		for _, leak := range []string{secretValue, outputText, commandText} {
			if strings.Contains(sc.Text(), leak) {
				t.Errorf("line %d carries %q", lines, leak)
			}
		}
	}
	if lines != 3 || !slices.Equal(exporttest.IDs(fromJSON), ids) {
		t.Fatalf("%d lines, ids %v", lines, exporttest.IDs(fromJSON))
	}

	// The same events over the wire.
	r := startReceiver(t)
	run(t, src, policy.OTLPExport{Endpoint: r.URL()}, keyring.NewMemory(), nil)
	waitAcked(t, r, len(ids))
	for i, wire := range r.Acked() {
		j := fromJSON[i]
		// The observed time is when each was encoded.
		wire.Log.ObservedTimeUnixNano, j.Log.ObservedTimeUnixNano = 0, 0
		if !proto.Equal(wire.Log, j.Log) || !proto.Equal(wire.Resource, j.Resource) || !proto.Equal(wire.Scope, j.Scope) {
			t.Fatalf("record %d differs:\nwire %v\njson %v", i, wire.Log, j.Log)
		}
	}
}
