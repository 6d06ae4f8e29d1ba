package pipeline

import (
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// BenchmarkSessionNetwork compares a command in a network of its own with
// one in its session's network, fresh and warm (the pool started for
// that network), sequentially: go test -run '^$' -bench SessionNetwork.
func BenchmarkSessionNetwork(b *testing.B) {
	for _, c := range []struct {
		name    string
		session string
		warm    bool
	}{{"private-fresh", "", false}, {"session-fresh", "b1", false}, {"private-warm", "", true}, {"session-warm", "b1", true}} {
		b.Run(c.name, func(b *testing.B) {
			f := bwrapFixture(b, nil)
			nets := NewSessionNets(nil)
			f.ex.SetSessions(nets)
			defer nets.Close()
			f.ex.ClosePool()
			req := func(r *api.ExecRequest) { r.SessionID = c.session }
			if c.warm {
				f.ex.StartPool(1, "cli")
				defer f.ex.ClosePool()
				f.run("true", req) // the pool now starts for this network
			}
			b.ResetTimer()
			for range b.N {
				if c.warm {
					b.StopTimer()
					waitSlotFor(b, f, c.session != "")
					b.StartTimer()
				}
				if o := f.run("true", req); c.warm && o.Event.SandboxStart != StartWarm {
					b.Fatalf("ran %s: %s", o.Event.SandboxStart, o.Event.SandboxStartReason)
				}
			}
		})
	}
}

// waitSlotFor waits until a warm sandbox is ready in a session's network
// (or, !session, in a network of its own).
func waitSlotFor(b *testing.B, f *fixture, session bool) {
	for i := 0; ; i++ {
		p := f.ex.pool.Load()
		p.mu.Lock()
		ok := slices.ContainsFunc(p.ready, func(s *warmSlot) bool { return (s.net != nil) == session })
		p.mu.Unlock()
		if ok {
			return
		}
		if i == 1000 {
			b.Fatalf("no warm sandbox ready (session %v): %+v", session, f.ex.Pool())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
