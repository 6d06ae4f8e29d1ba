package egress

import (
	"bufio"
	"net/netip"
	"strings"
	"testing"
)

// FuzzParseAuthority checks that an accepted destination is exactly the
// bytes received: a name is those bytes in lower case, made only of
// letters, digits, hyphens and dots; an address is the literal received.
func FuzzParseAuthority(f *testing.F) {
	for _, s := range []string{
		"example.com:443", "EXAMPLE.com", "[::1]:80", "127.0.0.1:8080", "2130706433", "0x7f.1",
		"example.com.:443", "a\x00b:1", "[fe80::1%25x]:1", "xn--bcher-kva.de:443", "é.com:443",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg := parseAuthority(s, 80)
		if tg.err != nil {
			return
		}
		host := s
		if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.HasSuffix(s, "]") {
			host = s[:i]
		}
		if tg.ip.IsValid() {
			ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
			if err != nil || ip != tg.ip {
				t.Fatalf("%q: address %v is not the literal received", s, tg.ip)
			}
			return
		}
		if tg.host != strings.ToLower(host) {
			t.Fatalf("%q: checked name %q is not the name received", s, tg.host)
		}
		for i := 0; i < len(tg.host); i++ {
			c := tg.host[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
				t.Fatalf("%q: accepted name %q has byte %q", s, tg.host, c)
			}
		}
		if strings.HasSuffix(tg.host, ".") || tg.port == 0 {
			t.Fatalf("%q: accepted %s", s, tg)
		}
	})
}

// FuzzReadHead checks that the request parser never panics and accepts
// no control characters.
func FuzzReadHead(f *testing.F) {
	for _, s := range []string{
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET http://example.com/ HTTP/1.0\n\n",
		"GET / HTTP/1.1\r\n x\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := readHead(bufio.NewReader(strings.NewReader(s)))
		if err != nil {
			return
		}
		for _, part := range append([]string{r.method, r.target, r.version}, func() []string {
			var out []string
			for _, h := range r.headers {
				out = append(out, h.name, h.value)
			}
			return out
		}()...) {
			if strings.ContainsAny(part, "\x00\r\n") {
				t.Fatalf("accepted %q with a control character in %q", s, part)
			}
		}
		if _, path, err := absoluteTarget(r.target); err == nil && !strings.HasPrefix(path, "/") {
			t.Fatalf("forwarded target %q does not start with /", path)
		}
	})
}
