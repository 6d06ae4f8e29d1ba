package localserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// serveSocket serves h on a unix socket and returns a client of it.
func serveSocket(t *testing.T, h http.Handler) *localapi.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return localapi.NewClient(path)
}

// The live stream delivers the subscriber's first notices, then each one
// as it is published, in order; when the service ends the stream, the
// client says the stream was lost.
func TestStream(t *testing.T) {
	t.Parallel()
	f := &fake{stream: make(chan api.StreamNotice, 4)}
	c := serveSocket(t, Handler(f, nil))
	got := make(chan api.StreamNotice, 8)
	done := make(chan error, 1)
	go func() { done <- c.Stream(context.Background(), func(n api.StreamNotice) { got <- n }) }()
	next := func() api.StreamNotice {
		select {
		case n := <-got:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no notice")
		}
		return api.StreamNotice{}
	}
	if n := next(); n.Type != api.NoticeService || n.State != "running" {
		t.Fatalf("first notice %+v", n)
	}
	f.stream <- api.StreamNotice{Type: api.NoticeApprovalOpened, Approval: &api.Approval{ID: "x1", Command: "a\nb"}}
	f.stream <- api.StreamNotice{Type: api.NoticeExecutionEnded, Event: &api.Event{ID: "e1"}}
	if n := next(); n.Type != api.NoticeApprovalOpened || n.Approval.ID != "x1" || n.Approval.Command != "a\nb" {
		t.Fatalf("second notice %+v", n)
	}
	if n := next(); n.Type != api.NoticeExecutionEnded || n.Event.ID != "e1" {
		t.Fatalf("third notice %+v", n)
	}
	close(f.stream)
	select {
	case err := <-done:
		if !errors.Is(err, localapi.ErrLost) {
			t.Fatalf("stream ended with %v, want ErrLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
	}
}

// An answer the service refuses is an error carrying its reason.
func TestAnswerRefused(t *testing.T) {
	t.Parallel()
	f := &fake{}
	c := serveSocket(t, Handler(f, nil))
	if _, err := c.Answer(context.Background(), api.AnswerRequest{ID: "a1", Answer: "once", By: "cli"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Answer(context.Background(), api.AnswerRequest{ID: "zz", Answer: "once", By: "cli"})
	if err == nil || err.Error() != "no such request" {
		t.Fatalf("got %v", err)
	}
	as, err := c.Approvals(context.Background())
	if err != nil || len(as) != 1 || as[0].ID != "a1" {
		t.Fatalf("approvals %v %v", as, err)
	}
}

// The dashboard's login code and sign-in page come over the socket.
func TestDashboardLogin(t *testing.T) {
	t.Parallel()
	c := serveSocket(t, Handler(&fake{}, nil))
	r, err := c.DashboardLogin(context.Background())
	if err != nil || *r != (api.DashboardLoginResponse{URL: "http://127.0.0.1:1234/login", Code: "c0de", LaunchFile: "/run/user/1000/gatehouse/dashboard/login-x.html"}) {
		t.Fatalf("got %+v, %v", r, err)
	}
}
