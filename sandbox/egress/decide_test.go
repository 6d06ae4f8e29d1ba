package egress

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// fakeResolver maps names to addresses; it never touches the network.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	ss, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

var testNames = fakeResolver{
	"public.test":     {"203.0.113.7"},
	"public6.test":    {"2001:db8::7"},
	"api.example.com": {"203.0.113.8"},
	"example.com":     {"203.0.113.10"},
	"lo.test":         {"127.0.0.1"},
	"lo2.test":        {"127.9.9.9"},
	"lo6.test":        {"::1"},
	"mapped.test":     {"::ffff:127.0.0.1"},
	"nat64.test":      {"64:ff9b::a9fe:a9fe"},
	"meta.test":       {"169.254.169.254"},
	"meta6.test":      {"fd00:ec2::254"},
	"alimeta.test":    {"100.100.100.200"},
	"ll.test":         {"169.254.1.1"},
	"ll6.test":        {"fe80::1"},
	"zero.test":       {"0.0.0.0"},
	"zero8.test":      {"0.1.2.3"},
	"mcast.test":      {"224.0.0.251"},
	"bcast.test":      {"255.255.255.255"},
	"self.test":       {"192.0.2.2"},
	"private.test":    {"10.1.2.3"},
	"mixed.test":      {"127.0.0.1", "203.0.113.9"},
	"allbad.test":     {"127.0.0.1", "169.254.169.254"},
	"testserver.test": {"127.0.0.1"},
}

func newTestProxy(t *testing.T, entries []string, mod func(*Options)) *Proxy {
	t.Helper()
	a, err := ParseAllowlist(entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Allowlist: a, Resolver: testNames}
	if mod != nil {
		mod(&opts)
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	p.hostAddrs = []netip.Addr{netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("127.0.0.1")}
	return p
}

func TestDecide(t *testing.T) {
	t.Parallel()
	star := newTestProxy(t, []string{"*"}, func(o *Options) {
		o.DeniedCIDRs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		o.TestLoopbackNames = []string{"testserver.test"}
	})
	list := newTestProxy(t, []string{"*.example.com", "127.0.0.1:9000", "10.9.9.9:80", "localhost:3000", "lo.test"}, func(o *Options) {
		o.DeniedCIDRs = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}
	})
	empty := newTestProxy(t, nil, nil)
	deny := func(entries ...string) func(*Options) {
		return func(o *Options) {
			o.DenylistField = "srt.json network.deniedDomains"
			for _, s := range entries {
				e, err := ParseEntry(s)
				if err != nil {
					t.Fatal(err)
				}
				o.Denylist = append(o.Denylist, e)
			}
		}
	}
	denied := newTestProxy(t, []string{"*", "127.0.0.1:9000"}, deny("api.example.com", "public.test:80"))
	denyAll := newTestProxy(t, []string{"*", "127.0.0.1:9000"}, deny("*"))
	for _, tc := range []struct {
		name      string
		p         *Proxy
		authority string
		rule      string   // expected refusal, "" when allowed
		dial      []string // expected addresses when allowed
	}{
		{"star public", star, "public.test:443", "", []string{"203.0.113.7:443"}},
		{"star public v6", star, "public6.test:80", "", []string{"[2001:db8::7]:80"}},
		{"star unlisted port", star, "public.test:22", "port_not_allowed", nil},
		{"star loopback", star, "lo.test:443", "loopback", nil},
		{"star loopback 127/8", star, "lo2.test:443", "loopback", nil},
		{"star loopback v6", star, "lo6.test:443", "loopback", nil},
		{"star mapped loopback", star, "mapped.test:443", "loopback", nil},
		{"star nat64 metadata", star, "nat64.test:80", "metadata", nil},
		{"star metadata", star, "meta.test:80", "metadata", nil},
		{"star metadata v6", star, "meta6.test:80", "metadata", nil},
		{"star metadata alibaba", star, "alimeta.test:80", "metadata", nil},
		{"star link-local", star, "ll.test:80", "link_local", nil},
		{"star link-local v6", star, "ll6.test:80", "link_local", nil},
		{"star unspecified", star, "zero.test:80", "unspecified", nil},
		{"star this network", star, "zero8.test:80", "unspecified", nil},
		{"star multicast", star, "mcast.test:80", "multicast", nil},
		{"star broadcast", star, "bcast.test:80", "multicast", nil},
		{"star host address", star, "self.test:443", "host_address", nil},
		{"star denied cidr", star, "private.test:443", "denied_cidr", nil},
		{"star mixed keeps the good address", star, "mixed.test:443", "", []string{"203.0.113.9:443"}},
		{"star all bad", star, "allbad.test:443", "loopback", nil},
		{"star test loopback name", star, "testserver.test:443", "", []string{"127.0.0.1:443"}},
		{"star ip literal", star, "203.0.113.7:443", "ip_literal", nil},
		{"star metadata literal", star, "169.254.169.254:80", "ip_literal", nil},
		{"star loopback literal", star, "127.0.0.1:80", "ip_literal", nil},
		{"star v6 loopback literal", star, "[::1]:80", "ip_literal", nil},
		{"star localhost", star, "localhost:80", "ip_literal", nil},
		{"star invalid", star, "evil.test.:443", "invalid_destination", nil},
		{"list wildcard apex", list, "example.com:443", "", []string{"203.0.113.10:443"}},
		{"list wildcard sub", list, "api.example.com:443", "", []string{"203.0.113.8:443"}},
		{"list unlisted name", list, "public.test:443", "not_allowlisted", nil},
		{"list listed literal", list, "127.0.0.1:9000", "", []string{"127.0.0.1:9000"}},
		{"list literal other port", list, "127.0.0.1:9001", "port_not_allowed", nil},
		{"list unlisted literal", list, "127.0.0.2:9000", "ip_literal", nil},
		{"list literal in denied cidr", list, "10.9.9.9:80", "denied_cidr", nil},
		{"list localhost", list, "localhost:3000", "", []string{"127.0.0.1:3000"}},
		{"list name to loopback", list, "lo.test:443", "loopback", nil},
		{"denylisted name", denied, "api.example.com:443", "denylisted", nil},
		{"denylisted on every port", denied, "api.example.com:80", "denylisted", nil},
		{"denylist leaves the rest", denied, "example.com:443", "", []string{"203.0.113.10:443"}},
		{"denylisted port only", denied, "public.test:80", "denylisted", nil},
		{"denylist other port", denied, "public.test:443", "", []string{"203.0.113.7:443"}},
		{"denylist star", denyAll, "public.test:443", "denylisted", nil},
		{"denylist star literal", denyAll, "127.0.0.1:9000", "denylisted", nil},
		{"empty", empty, "public.test:443", "no_egress", nil},
		{"empty literal", empty, "127.0.0.1:80", "no_egress", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addrs, r, err := tc.p.decide(context.Background(), parseAuthority(tc.authority, 0), false, false)
			if tc.rule != "" {
				if r == nil || r.Rule != tc.rule {
					t.Fatalf("decide(%s) = %v, %+v, %v; want refusal %s", tc.authority, addrs, r, err, tc.rule)
				}
				if strings.ContainsAny(r.Reason, "\r\n") || r.Reason == "" {
					t.Errorf("reason %q is not one line", r.Reason)
				}
				return
			}
			if r != nil || err != nil {
				t.Fatalf("decide(%s) refused: %+v %v", tc.authority, r, err)
			}
			var got []string
			for _, a := range addrs {
				got = append(got, a.String())
			}
			if !slices.Equal(got, tc.dial) {
				t.Errorf("decide(%s) dials %v, want %v", tc.authority, got, tc.dial)
			}
		})
	}
}

func TestDecideUnresolvable(t *testing.T) {
	t.Parallel()
	p := newTestProxy(t, []string{"*"}, nil)
	_, r, err := p.decide(context.Background(), parseAuthority("nowhere.test:443", 0), false, false)
	if r != nil || !errors.As(err, new(errResolve)) {
		t.Errorf("decide(nowhere.test) = %+v, %v; want a resolution error", r, err)
	}
}
