package export

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/gatehouse-dev/gatehouse/service/export/exporttest"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// grpcReceiver is an OTLP/gRPC logs service on 127.0.0.1 that refuses the
// first refuse calls with Unavailable.
type grpcReceiver struct {
	collogpb.UnimplementedLogsServiceServer
	mu     sync.Mutex
	refuse int
	calls  int
	acked  []exporttest.Record
	auth   []string
}

func (g *grpcReceiver) Export(ctx context.Context, req *collogpb.ExportLogsServiceRequest) (*collogpb.ExportLogsServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	md, _ := metadata.FromIncomingContext(ctx)
	g.auth = append(g.auth, md.Get("authorization")...)
	if g.calls <= g.refuse {
		return nil, status.Error(codes.Unavailable, "collector restarting")
	}
	g.acked = append(g.acked, exporttest.Records(req)...)
	return &collogpb.ExportLogsServiceResponse{}, nil
}

func (g *grpcReceiver) snapshot() ([]exporttest.Record, int, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.acked), g.calls, slices.Clone(g.auth)
}

// The grpc path: a real gRPC server decoding the OTLP service; it refuses
// at first, then every event arrives once, in order, with its attributes
// and the header from the keychain.
func TestExportGRPC(t *testing.T) {
	t.Parallel()
	src := openTrail(t)
	ids := appendEvents(t, src, 0, 17)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	recv := &grpcReceiver{refuse: 3}
	srv := grpc.NewServer()
	collogpb.RegisterLogsServiceServer(srv, recv)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)

	cfg := policy.OTLPExport{Endpoint: "http://" + l.Addr().String(), Protocol: policy.ProtocolGRPC,
		Headers: policy.OTLPHeaders{"authorization": "Bearer ${credential:otel_token}"}}
	run(t, src, cfg, testKeys(t), nil)
	var got []exporttest.Record
	var calls int
	var auth []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, calls, auth = recv.snapshot(); len(got) >= len(ids) {
			break
		}
	}
	if !slices.Equal(exporttest.IDs(got), ids) {
		t.Fatalf("got %v, want %v", exporttest.IDs(got), ids)
	}
	if calls != 3+3 { // three refused, then 17 events in batches of 7
		t.Errorf("%d calls, want 6", calls)
	}
	for _, a := range auth {
		if a != "Bearer "+secretValue {
			t.Errorf("authorization metadata is not the keychain value")
		}
	}
	if got[0].Attr("gatehouse.status").GetStringValue() != "completed" || got[0].ResourceAttr("service.name").GetStringValue() != "gatehouse" {
		t.Errorf("record %v", got[0].Log)
	}
	waitCursor(t, src, int64(len(ids)))
}
