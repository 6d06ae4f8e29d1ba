package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse-dev/gatehouse/service/audit"
)

// A JSONWriter writes events as OTLP JSON, one ExportLogsServiceRequest
// per line (the OTLP file exporter's format), for a one-off export. Each
// request is the one the OTLP/HTTP exporter would send: it is built by
// that exporter, whose request is taken in memory instead of being sent,
// then written with protojson. It is not safe for concurrent use.
type JSONWriter struct {
	w   io.Writer
	enc *Encoder
	exp *otlploghttp.Exporter
	rt  *captureTransport
}

// NewJSONWriter returns a JSONWriter writing to w with enc's resource.
func NewJSONWriter(ctx context.Context, w io.Writer, enc *Encoder) (*JSONWriter, error) {
	rt := &captureTransport{}
	exp, err := otlploghttp.New(ctx,
		// Nothing is dialed: the client's transport keeps the request.
		otlploghttp.WithEndpointURL("http://localhost"+DefaultHTTPPath),
		otlploghttp.WithHTTPClient(&http.Client{Transport: rt}),
		otlploghttp.WithHeaders(map[string]string{}),
		otlploghttp.WithCompression(otlploghttp.NoCompression),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}),
	)
	if err != nil {
		return nil, err
	}
	return &JSONWriter{w: w, enc: enc, exp: exp, rt: rt}, nil
}

// Write writes one line holding entries' records.
func (j *JSONWriter) Write(ctx context.Context, entries []audit.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	recs, err := j.enc.Records(entries)
	if err != nil {
		return err
	}
	j.rt.body = nil
	if err := j.exp.Export(ctx, recs); err != nil {
		return fmt.Errorf("export: encoding the records: %w", err)
	}
	if j.rt.body == nil {
		return errors.New("export: the OTLP exporter wrote no request")
	}
	var req collogpb.ExportLogsServiceRequest
	if err := proto.Unmarshal(j.rt.body, &req); err != nil {
		return fmt.Errorf("export: decoding the request: %w", err)
	}
	line, err := protojson.MarshalOptions{}.Marshal(&req)
	if err != nil {
		return err
	}
	// protojson varies its spacing on purpose; a line is compacted so the
	// output is one request per line.
	var buf bytes.Buffer
	if err := json.Compact(&buf, line); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = j.w.Write(buf.Bytes())
	return err
}

// Close shuts the exporter down.
func (j *JSONWriter) Close() error { return j.exp.Shutdown(context.Background()) }

// captureTransport keeps the body of the request it is given and answers
// 200 with an empty body, as a collector accepting everything does.
type captureTransport struct{ body []byte }

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var rd io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, err
		}
		rd = zr
	}
	b, err := io.ReadAll(rd)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	c.body = b
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
		Body: io.NopCloser(bytes.NewReader(nil)), Request: r}, nil
}
