// Package exporttest is an OTLP/HTTP logs receiver for tests: it listens
// on 127.0.0.1, decodes every request with the OTLP protobuf definitions
// (go.opentelemetry.io/proto/otlp), and can be told to refuse, stall,
// hold or go away, as a collector does.
package exporttest

import (
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// Modes of a Receiver.
type Mode int

const (
	// Accept answers 200 and records the request's records as acknowledged.
	Accept Mode = iota
	// Unavailable answers 503, as a collector shedding load does.
	Unavailable
	// Stall reads the request and answers only after Stall, later than the
	// client waits: the records are received but never acknowledged.
	Stall
	// Hold reads the request and never answers it (until Release).
	Hold
	// PartialReject answers 200 with a partial success rejecting one
	// record.
	PartialReject
	// Unauthorized is how a request without the header RequireHeader
	// names was answered (401).
	Unauthorized
)

// A Record is one log record a Receiver decoded, with its resource and
// scope.
type Record struct {
	Resource *commonpb.KeyValueList // the resource's attributes
	Scope    *commonpb.InstrumentationScope
	Log      *logpb.LogRecord
}

// Attr returns the record's attribute key, or nil.
func (r Record) Attr(key string) *commonpb.AnyValue {
	for _, kv := range r.Log.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// ResourceAttr returns the resource's attribute key, or nil.
func (r Record) ResourceAttr(key string) *commonpb.AnyValue {
	for _, kv := range r.Resource.GetValues() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// ID returns the record's gatehouse.id.
func (r Record) ID() string { return r.Attr("gatehouse.id").GetStringValue() }

// A Request is one request as received.
type Request struct {
	Header  http.Header
	Body    []byte // decompressed protobuf
	Records []Record
	Mode    Mode // how it was answered
}

// A Receiver is an OTLP/HTTP logs endpoint on 127.0.0.1. It is safe for
// concurrent use.
type Receiver struct {
	// StallFor is how long a Stall answer waits (default 2 s).
	StallFor time.Duration

	mu       sync.Mutex
	tls      *tls.Config // nil: plaintext
	addr     string
	srv      *http.Server
	mode     Mode
	acked    []Record
	requests []Request
	release  chan struct{}
	changed  chan struct{}
	// holdAfter > 0 switches to Hold once that many requests were
	// accepted.
	holdAfter int
	accepted  int
	// want, when set, is a header every request must carry (else 401).
	wantName, wantValue string
}

// Start starts a receiver on a free port of 127.0.0.1.
func Start() (*Receiver, error) {
	r := &Receiver{release: make(chan struct{}), changed: make(chan struct{})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.addr = l.Addr().String()
	r.serve(l)
	return r, nil
}

// StartTLS starts a receiver serving https on a free port of 127.0.0.1
// with a new self-signed certificate for 127.0.0.1, returned as PEM.
func StartTLS() (*Receiver, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "exporttest collector"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	r := &Receiver{release: make(chan struct{}), changed: make(chan struct{}),
		tls: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	r.addr = l.Addr().String()
	r.serve(l)
	return r, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// URL is the receiver's endpoint: http://127.0.0.1:PORT (https:// for
// StartTLS).
func (r *Receiver) URL() string {
	if r.tls != nil {
		return "https://" + r.addr
	}
	return "http://" + r.addr
}

func (r *Receiver) serve(l net.Listener) {
	if r.tls != nil {
		l = tls.NewListener(l, r.tls)
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.handle)}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go srv.Serve(l)
}

// Down closes the port: connections are refused until Up.
func (r *Receiver) Down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Up listens again on the same port.
func (r *Receiver) Up() error {
	var l net.Listener
	var err error
	// The port was just closed; it is free again at once on loopback, but
	// a moment is allowed for it.
	for range 50 {
		if l, err = net.Listen("tcp", r.addr); err == nil {
			r.serve(l)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Close stops the receiver and releases held requests.
func (r *Receiver) Close() {
	r.Release()
	r.Down()
}

// SetMode changes how later requests are answered.
func (r *Receiver) SetMode(m Mode) {
	r.mu.Lock()
	r.mode, r.holdAfter = m, 0
	r.mu.Unlock()
}

// RequireHeader answers 401 to a request without header name set to
// value, as a collector checking its token does.
func (r *Receiver) RequireHeader(name, value string) {
	r.mu.Lock()
	r.wantName, r.wantValue = name, value
	r.mu.Unlock()
}

// HoldAfter accepts the next n requests, then holds every later one.
func (r *Receiver) HoldAfter(n int) {
	r.mu.Lock()
	r.mode, r.holdAfter, r.accepted = Accept, n, 0
	r.mu.Unlock()
}

// Held returns how many requests were answered Hold.
func (r *Receiver) Held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.requests {
		if q.Mode == Hold {
			n++
		}
	}
	return n
}

// Release answers every held request (with 503) and stops holding.
func (r *Receiver) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

// Acked returns the records answered 200, in order.
func (r *Receiver) Acked() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.acked...)
}

// Requests returns every request received, in order.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// WaitFor waits until cond (called under no lock with the receiver) is
// true, up to timeout.
func (r *Receiver) WaitFor(timeout time.Duration, cond func(*Receiver) bool) error {
	deadline := time.After(timeout)
	for {
		if cond(r) {
			return nil
		}
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			return errors.New("exporttest: timed out waiting for the receiver")
		}
	}
}

func (r *Receiver) handle(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/logs" {
		http.Error(w, "not the OTLP logs path", http.StatusNotFound)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collogpb.ExportLogsServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	recs := Records(&msg)
	r.mu.Lock()
	if r.wantName != "" && req.Header.Get(r.wantName) != r.wantValue {
		r.requests = append(r.requests, Request{Header: req.Header.Clone(), Body: b, Records: recs, Mode: Unauthorized})
		r.mu.Unlock()
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	if r.holdAfter > 0 && r.accepted >= r.holdAfter {
		r.mode = Hold
	}
	mode := r.mode
	if mode == Accept {
		r.accepted++
	}
	r.requests = append(r.requests, Request{Header: req.Header.Clone(), Body: b, Records: recs, Mode: mode})
	release := r.release
	if mode == Accept || mode == PartialReject {
		r.acked = append(r.acked, recs...)
	}
	close(r.changed)
	r.changed = make(chan struct{})
	stall := r.StallFor
	r.mu.Unlock()

	switch mode {
	case Unavailable:
		http.Error(w, "collector overloaded", http.StatusServiceUnavailable)
		return
	case Stall:
		if stall <= 0 {
			stall = 2 * time.Second
		}
		select {
		case <-time.After(stall):
		case <-req.Context().Done():
		}
		http.Error(w, "too late", http.StatusServiceUnavailable)
		return
	case Hold:
		select {
		case <-release:
		case <-req.Context().Done():
		}
		http.Error(w, "released", http.StatusServiceUnavailable)
		return
	}
	resp := &collogpb.ExportLogsServiceResponse{}
	if mode == PartialReject {
		resp.PartialSuccess = &collogpb.ExportLogsPartialSuccess{RejectedLogRecords: 1, ErrorMessage: "one record is invalid"}
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// Records flattens a request into its records.
func Records(msg *collogpb.ExportLogsServiceRequest) []Record {
	var out []Record
	for _, rl := range msg.ResourceLogs {
		res := &commonpb.KeyValueList{Values: rl.GetResource().GetAttributes()}
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				out = append(out, Record{Resource: res, Scope: sl.Scope, Log: lr})
			}
		}
	}
	return out
}

// IDs returns the gatehouse.id of each record.
func IDs(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID()
	}
	return out
}

// String describes the mode.
func (m Mode) String() string {
	switch m {
	case Accept:
		return "accept"
	case Unavailable:
		return "unavailable"
	case Stall:
		return "stall"
	case Hold:
		return "hold"
	case PartialReject:
		return "partial-reject"
	case Unauthorized:
		return "unauthorized"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}
