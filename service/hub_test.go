package service

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// At shutdown every subscriber gets the stopping notice and then the end
// of its stream, and a subscriber who comes later gets the end at once: no
// tray or dashboard connection holds the service's shutdown open.
func TestHubEndsEveryStreamAfterStopping(t *testing.T) {
	h := newHub()
	a, b := h.subscribe(context.Background()), h.subscribe(context.Background())
	h.publish(api.StreamNotice{Type: api.NoticeService, State: "stopping"})
	h.end()
	for i, c := range []<-chan api.StreamNotice{a, b} {
		n, ok := <-c
		if !ok || n.State != "stopping" {
			t.Errorf("subscriber %d: first %+v (open %v), want the stopping notice", i, n, ok)
		}
		if n, ok := <-c; ok {
			t.Errorf("subscriber %d: the stream goes on after stopping: %+v", i, n)
		}
	}
	if _, ok := <-h.subscribe(context.Background()); ok {
		t.Error("a subscriber after the end got a stream")
	}
	h.publish(api.StreamNotice{Type: api.NoticeService, State: "running"}) // nobody: no panic
}
