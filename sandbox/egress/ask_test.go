package egress

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// recordingAsk answers every destination with v and records what it was
// asked, in order; it waits on gate (when not nil) before answering.
type recordingAsk struct {
	mu   sync.Mutex
	seen []string
	v    Verdict
	gate chan struct{}
	// called gets a value at each call, when not nil.
	called chan struct{}
}

func (a *recordingAsk) ask(ctx context.Context, d Destination) Verdict {
	a.mu.Lock()
	a.seen = append(a.seen, d.String())
	a.mu.Unlock()
	if a.called != nil {
		a.called <- struct{}{}
	}
	if a.gate != nil {
		select {
		case <-a.gate:
		case <-ctx.Done():
			return Verdict{Rule: "approval_cancelled", Reason: "gone"}
		}
	}
	return a.v
}

func (a *recordingAsk) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// A destination no entry covers is asked about once, however many
// connections wait for it; approved, it is resolved and checked as an
// allowed one; the answer holds for the proxy's life.
func TestAskApproved(t *testing.T) {
	t.Parallel()
	_, addr := echoServer(t)
	port := portOf(t, addr)
	a := &recordingAsk{v: Verdict{Allow: true}, gate: make(chan struct{}), called: make(chan struct{}, 8)}
	tp := startProxy(t, nil, func(o *Options) { o.Ask = a.ask })
	const n = 4
	var wg sync.WaitGroup
	bodies := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, bodies[i] = tp.raw(t, "GET http://allowed.test:"+port+"/x HTTP/1.1\r\nHost: allowed.test:"+port+"\r\n\r\n")
		}()
	}
	// The connections are held until the answer.
	<-a.called
	close(a.gate)
	wg.Wait()
	for _, b := range bodies {
		if !strings.HasPrefix(b, "host=allowed.test:"+port+" uri=/x") {
			t.Errorf("body %q", b)
		}
	}
	if got := a.asked(); len(got) != 1 || got[0] != "allowed.test:"+port {
		t.Errorf("asked %v, want allowed.test:%s once", got, port)
	}
	if st := tp.Stats(); st.Allowed != n || st.Denied != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A refused answer refuses with its reason, and is not asked again.
func TestAskDenied(t *testing.T) {
	t.Parallel()
	_, addr := echoServer(t)
	port := portOf(t, addr)
	a := &recordingAsk{v: Verdict{Rule: "approval_denied", Reason: "a person denied allowed.test"}}
	tp := startProxy(t, nil, func(o *Options) { o.Ask = a.ask })
	for range 2 {
		status, rule, body := tp.raw(t, "CONNECT allowed.test:"+port+" HTTP/1.1\r\n\r\n")
		if !strings.HasPrefix(status, "403") || rule != "approval_denied" || !strings.Contains(body, "a person denied allowed.test") {
			t.Errorf("got %q %q %q", status, rule, body)
		}
	}
	if got := a.asked(); len(got) != 1 {
		t.Errorf("asked %v, want once", got)
	}
}

// What no answer may reach is refused before anyone is asked: metadata,
// link-local and this machine's (non-loopback) addresses as literals, a
// denied CIDR, the denylist, an invalid destination; a name approved that
// resolves to one, or to loopback, is refused after the answer.
func TestAskNeverFor(t *testing.T) {
	t.Parallel()
	a := &recordingAsk{v: Verdict{Allow: true, LocalService: true}}
	host := ""
	if addrs, _ := hostAddrs(); len(addrs) > 0 {
		for _, x := range addrs {
			if !x.IsLoopback() && x.Is4() {
				host = x.String()
			}
		}
	}
	deny, _ := ParseEntry("blocked.test")
	tp := startProxy(t, nil, func(o *Options) {
		o.Ask = a.ask
		o.Denylist, o.DenylistField = []Entry{deny}, "policy.egress_denylist"
		o.DeniedCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.8/29")}
		o.TestLoopbackNames = nil
	})
	targets := []string{"169.254.169.254:80", "169.254.1.1:80", "[fe80::1]:80", "[fd00:ec2::254]:80", "blocked.test:443", "0.0.0.0:80", "bad_name:80",
		"127.0.0.9:80"} // loopback, but in a denied CIDR
	if host != "" {
		targets = append(targets, net.JoinHostPort(host, "80"))
	}
	for _, d := range targets {
		status, _, _ := tp.raw(t, "CONNECT "+d+" HTTP/1.1\r\n\r\n")
		if !strings.HasPrefix(status, "403") && !strings.HasPrefix(status, "400") {
			t.Errorf("CONNECT %s: %s, want refused", d, status)
		}
	}
	if got := a.asked(); len(got) != 0 {
		t.Errorf("asked about %v, want nothing", got)
	}
	// Names are asked about (their addresses are unknown until the
	// answer), then refused by what they resolve to: a name is never the
	// host's loopback, though the answer confirmed a local service.
	for _, name := range []string{"meta.test", "lo.test"} {
		status, rule, _ := tp.raw(t, "CONNECT "+name+":443 HTTP/1.1\r\n\r\n")
		if !strings.HasPrefix(status, "403") || rule != map[string]string{"meta.test": "metadata", "lo.test": "loopback"}[name] {
			t.Errorf("CONNECT %s: %s %s", name, status, rule)
		}
	}
}

// A literal on the host's loopback (127.0.0.0/8, ::1, localhost) is asked
// about, flagged HostLoopback, and reached only when the answer confirms
// a service on this machine; an answer that does not is refused, as
// loopback.
func TestAskHostLoopback(t *testing.T) {
	t.Parallel()
	_, addr := echoServer(t)
	port := portOf(t, addr)
	for _, tc := range []struct {
		name  string
		v     Verdict
		reach bool
	}{
		{"confirmed", Verdict{Allow: true, LocalService: true}, true},
		{"allowed without the box", Verdict{Allow: true}, false},
		{"denied", Verdict{Rule: "approval_denied", Reason: "a person denied it"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []Destination
			tp := startProxy(t, nil, func(o *Options) {
				o.TestLoopbackNames = nil
				o.Ask = func(_ context.Context, d Destination) Verdict {
					mu.Lock()
					seen = append(seen, d)
					mu.Unlock()
					return tc.v
				}
			})
			for _, dest := range []string{"127.0.0.1:" + port, "localhost:" + port} {
				status, rule, body := tp.raw(t, "GET http://"+dest+"/x HTTP/1.1\r\nHost: "+dest+"\r\n\r\n")
				switch {
				case tc.reach && !strings.HasPrefix(body, "host="+dest+" uri=/x"):
					t.Errorf("%s: %s %q, want the body", dest, status, body)
				case !tc.reach && (!strings.HasPrefix(status, "403") || rule != map[bool]string{true: "loopback", false: "approval_denied"}[tc.v.Allow]):
					t.Errorf("%s: %s %s %q, want refused", dest, status, rule, body)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			want := []Destination{
				{Host: "127.0.0.1", Port: uint16(mustAtoi(t, port)), Literal: true, HostLoopback: true},
				{Host: "localhost", Port: uint16(mustAtoi(t, port)), HostLoopback: true},
			}
			if !slices.Equal(seen, want) {
				t.Errorf("asked %+v, want %+v", seen, want)
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
