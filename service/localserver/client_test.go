package localserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// The client's own exchange: calls and streams through a real socket,
// errors as the service answers them, a service gone mid-call, and a
// cancelled call that the service sees end.
func TestClientOverSocket(t *testing.T) {
	f := &fake{stream: make(chan api.StreamNotice)}
	c := serveSocket(t, Handler(f, nil))
	ctx := context.Background()
	if d, err := c.Decide(ctx, api.DecideRequest{Request: api.ExecRequest{Command: "true"}}); err != nil || d.Decision != "allow" || len(f.decided) != 1 || f.decided[0].Request.Command != "true" {
		t.Errorf("decide: %+v %v (reached: %+v)", d, err, f.decided)
	}
	if end, err := c.Redeem(ctx, "t1", io.Discard, io.Discard); err != nil || end == nil || len(f.redeemed) != 1 || f.redeemed[0] != "t1" {
		t.Errorf("redeem: %+v %v", end, err)
	}
	for _, tc := range []struct {
		ticket, session string
		live            bool
	}{{"live", "s1", true}, {"live", "s2", false}, {"other", "s1", false}} {
		if r, err := c.CheckTicket(ctx, api.TicketCheckRequest{Ticket: tc.ticket, Agent: "claude-code", SessionID: tc.session}); err != nil || r.Live != tc.live {
			t.Errorf("check %s for %s: %+v %v, want live %v", tc.ticket, tc.session, r, err, tc.live)
		}
	}
	if _, err := c.Answer(ctx, api.AnswerRequest{ID: "nope"}); err == nil || err.Error() != "no such request" {
		t.Errorf("refused answer: %v", err)
	}

	// An error status carries the service's message.
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.PathStatus, func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusServiceUnavailable, "reloading")
	})
	// The service takes the call and goes away without an answer.
	mux.HandleFunc("POST "+api.PathExecute, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	// The service waits until its caller is gone.
	gone := make(chan struct{})
	mux.HandleFunc("POST "+api.PathRedeem, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // as the real handler decodes it
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	})
	c = serveSocket(t, mux)
	if _, err := c.Status(ctx); err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "reloading") {
		t.Errorf("status answered 503: %v", err)
	}
	if _, err := c.Execute(ctx, api.ExecuteRequest{}, io.Discard, io.Discard); !errors.Is(err, localapi.ErrLost) {
		t.Errorf("service gone mid-call: %v, want ErrLost", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.Redeem(cctx, "t2", io.Discard, io.Discard)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the service did not see its caller go")
	}
	if err := <-done; err == nil {
		t.Error("a cancelled call returned no error")
	}

	// No socket: not running.
	if _, err := localapi.NewClient(filepath.Join(t.TempDir(), "none.sock")).Status(ctx); !errors.Is(err, localapi.ErrNotRunning) {
		t.Errorf("no socket: %v, want ErrNotRunning", err)
	}
}
