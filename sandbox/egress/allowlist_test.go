package egress

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, host string
		port     uint16
	}{
		{"*", "*", 0},
		{"*:443", "*", 443},
		{"*.example.com", "*.example.com", 0},
		{"*.Example.COM:8443", "*.example.com", 8443},
		{"Example.COM", "example.com", 0},
		{"example.com:8080", "example.com", 8080},
		{"api.github.com", "api.github.com", 0},
		{"xn--bcher-kva.de", "xn--bcher-kva.de", 0},
		{"*.s3.amazonaws.com", "*.s3.amazonaws.com", 0},
		{"*.example.co.uk", "*.example.co.uk", 0},
		{"localhost", "localhost", 0},
		{"localhost:3000", "localhost", 3000},
		{"127.0.0.1:8080", "127.0.0.1", 8080},
		{"192.0.2.7", "192.0.2.7", 0},
		{"[::1]:8080", "::1", 8080},
		{"[2001:db8::7]", "2001:db8::7", 0},
		{"2001:db8::7", "2001:db8::7", 0},
		{"a-b.c0", "a-b.c0", 0},
		{"0x7f.com", "0x7f.com", 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			e, err := ParseEntry(tc.in)
			if err != nil {
				t.Fatalf("ParseEntry(%q): %v", tc.in, err)
			}
			if e.Host != tc.host || e.Port != tc.port {
				t.Errorf("ParseEntry(%q) = %q port %d, want %q port %d", tc.in, e.Host, e.Port, tc.host, tc.port)
			}
		})
	}
}

func TestParseEntryErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "is empty"},
		{" example.com", "a space"},
		{"example.com ", "a space"},
		{"ex\x00ample.com", "a NUL byte"},
		{"ex\nample.com", "control character"},
		{"bücher.de", "non-ASCII"},
		{"example.com.", "ends in a dot"},
		{"example..com", "empty label"},
		{"-a.example.com", "hyphen"},
		{"a_b.example.com", `"_"`},
		{"example.com/path", `"/"`},
		{"user@example.com", `"@"`},
		{"http://example.com", "not a port"},
		{"*.com", "too broad"},
		{"*.co.uk", "public suffix"},
		{"*.com.au:443", "public suffix"},
		{"*.*.example.com", `"*" in the wrong place`},
		{"foo.*.example.com", `"*" in the wrong place`},
		{"*foo.example.com", `"*" may only`},
		{"example.com:0", "not a port"},
		{"example.com:65536", "not a port"},
		{"example.com:08", "not a port"},
		{"example.com:+80", "not a port"},
		{"example.com:", "not a port"},
		{"127.1", "non-standard form"},
		{"2130706433", "non-standard form"},
		{"0x7f.1", "non-standard form"},
		{"0x7f", "non-standard form"},
		{"0177.0.0.1", "non-standard form"},
		{"127.000.0.1", "non-standard form"},
		{"1.2.3.4.5", "non-standard form"},
		{"[::1", "no closing"},
		{"[127.0.0.1]:80", "not an IPv6 address"},
		{"[::1]80", `bytes after "]"`},
		{"169.254.169.254", "metadata"},
		{"[fd00:ec2::254]:80", "metadata"},
		{"100.100.100.200", "metadata"},
		{"0.0.0.0", "not a destination"},
		{"[::]:80", "not a destination"},
		{"224.0.0.1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"[fe80::1%eth0]:80", "without a zone"},
		{"fe80::1%eth0", "zone"},
		{strings.Repeat("a", 64) + ".com", "longer than 63"},
		{strings.Repeat("abcdefghi.", 26) + "com", "longer than 253"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			e, err := ParseEntry(tc.in)
			if err == nil {
				t.Fatalf("ParseEntry(%q) = %+v, want an error containing %q", tc.in, e, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseEntry(%q) error = %q, want it to contain %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestParseAllowlistNamesEntry(t *testing.T) {
	t.Parallel()
	_, err := ParseAllowlist([]string{"ok.example.com", "*.com"}, nil)
	if err == nil || !strings.Contains(err.Error(), `entry 1: "*.com" is too broad`) {
		t.Errorf("error = %v, want it to name entry 1", err)
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	a, err := ParseAllowlist([]string{
		"*.example.com", "exact.org", "ports.org:8443", "127.0.0.1:9000", "[::1]:9001", "localhost:3000",
	}, []int{443, 80})
	if err != nil {
		t.Fatal(err)
	}
	star, _ := ParseAllowlist([]string{"*"}, nil)
	for _, tc := range []struct {
		list      *Allowlist
		authority string
		want      bool
	}{
		{a, "example.com:443", true},
		{a, "api.example.com:80", true},
		{a, "a.b.example.com:443", true},
		{a, "API.Example.com:443", true},
		{a, "example.com:8080", false},
		{a, "badexample.com:443", false},
		{a, "example.com.evil.org:443", false},
		{a, "exact.org:443", true},
		{a, "sub.exact.org:443", false},
		{a, "ports.org:8443", true},
		{a, "ports.org:443", false},
		{a, "127.0.0.1:9000", true},
		{a, "127.0.0.1:9001", false},
		{a, "127.0.0.2:9000", false},
		{a, "[::1]:9001", true},
		{a, "[::ffff:127.0.0.1]:9000", false},
		{a, "localhost:3000", true},
		{a, "localhost:9000", false},
		{star, "anything.test:443", true},
		{star, "anything.test:22", false},
		{star, "127.0.0.1:443", false},
		{star, "[::1]:443", false},
		{star, "localhost:443", false},
	} {
		tg := parseAuthority(tc.authority, 0)
		if tg.err != nil {
			t.Fatalf("%s: %v", tc.authority, tg.err)
		}
		e, _ := tc.list.match(tg)
		if got := e != nil; got != tc.want {
			t.Errorf("match(%s) = %v, want %v", tc.authority, got, tc.want)
		}
	}
}

func TestParseAuthority(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		def     uint16
		want    string // "" means invalid
		wantErr string
	}{
		{"example.com:443", 0, "example.com:443", ""},
		{"EXAMPLE.com:443", 0, "example.com:443", ""},
		{"example.com", 80, "example.com:80", ""},
		{"example.com", 0, "", "no port"},
		{"[::1]:80", 0, "[::1]:80", ""},
		{"[::1]", 80, "[::1]:80", ""},
		{"::1", 80, "", ""},
		{"127.0.0.1:80", 0, "127.0.0.1:80", ""},
		{"example.com.:443", 0, "", "ends in a dot"},
		{"example.com..:443", 0, "", ""},
		{"exa\x00mple.com:443", 0, "", "NUL"},
		{"exa\tmple.com:443", 0, "", "control"},
		{"2130706433", 80, "", "non-standard"},
		{"0x7f.1", 80, "", "non-standard"},
		{"0x7f.0.0.1:80", 0, "", "non-standard"},
		{"%31%32%37.0.0.1:80", 0, "", `"%"`},
		{"example.com:0443", 0, "", "not a port"},
		{"example.com:443:1", 0, "", "not a port"},
		{"[fe80::1%25lo]:80", 0, "", ""},
		{"[::1]x", 0, "", "unexpected"},
		{"", 80, "", "empty"},
	} {
		tg := parseAuthority(tc.in, tc.def)
		if tc.want == "" {
			if tg.err == nil {
				t.Errorf("parseAuthority(%q) = %s, want an error", tc.in, tg)
			} else if !strings.Contains(tg.err.Error(), tc.wantErr) {
				t.Errorf("parseAuthority(%q) error = %q, want %q", tc.in, tg.err, tc.wantErr)
			}
			continue
		}
		if tg.err != nil || tg.String() != tc.want {
			t.Errorf("parseAuthority(%q) = %s (%v), want %s", tc.in, tg, tg.err, tc.want)
		}
	}
}

// Wildcards offers the domains a name lies in, up to its registrable
// domain and never a public suffix, narrowest first, each with the port;
// none for an address or localhost. Each parses and covers the name.
func TestWildcards(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host string
		port uint16
		want []string
	}{
		{"a.b.npmjs.org", 443, []string{"*.b.npmjs.org:443", "*.npmjs.org:443"}},
		{"registry.npmjs.org", 443, []string{"*.npmjs.org:443"}},
		{"npmjs.org", 8080, []string{"*.npmjs.org:8080"}},
		{"www.bbc.co.uk", 443, []string{"*.bbc.co.uk:443"}},
		{"me.github.io", 443, []string{"*.me.github.io:443"}},
		{"x.bucket.s3.amazonaws.com", 443, []string{"*.bucket.s3.amazonaws.com:443"}},
		{"a.b.c.d.e.example.com", 443, []string{"*.d.e.example.com:443", "*.e.example.com:443", "*.example.com:443"}},
		{"Registry.NPMJS.org", 443, []string{"*.npmjs.org:443"}},
		{"127.0.0.1", 80, nil},
		{"::1", 80, nil},
		{"192.0.2.7", 443, nil},
		{"localhost", 80, nil},
		{"intranet", 443, nil},
		{"com", 443, nil},
		{"co.uk", 443, nil},
	} {
		got := Wildcards(tc.host, tc.port)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Wildcards(%q, %d) = %q, want %q", tc.host, tc.port, got, tc.want)
		}
		for _, e := range got {
			one, err := ParseAllowlist([]string{e}, nil)
			if err != nil {
				t.Errorf("Wildcards(%q): %s: %v", tc.host, e, err)
				continue
			}
			if m, _ := one.match(parseAuthority(strings.ToLower(tc.host)+":"+strconv.Itoa(int(tc.port)), 0)); m == nil {
				t.Errorf("%s does not cover %s:%d", e, tc.host, tc.port)
			}
		}
	}
}
