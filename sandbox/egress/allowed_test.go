package egress

import (
	"fmt"
	"slices"
	"testing"
)

// The destinations let through are listed, first 16 distinct, in order:
// the record attributes a tunnel (ssh's among them) to its host. A dial
// that then fails still counts: the allowlist let it through.
func TestAllowedHostsFirst16(t *testing.T) {
	t.Parallel()
	var entries, want []string
	for i := 1; i <= 20; i++ {
		entries = append(entries, fmt.Sprintf("127.0.0.1:%d", i))
	}
	tp := startProxy(t, entries, nil)
	for i := 1; i <= 20; i++ {
		h := fmt.Sprintf("127.0.0.1:%d", i)
		if i <= MaxDeniedHosts {
			want = append(want, h)
		}
		tp.raw(t, "CONNECT "+h+" HTTP/1.1\r\n\r\n")
		if i == 2 {
			tp.raw(t, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n") // a repeat is counted, not listed twice
		}
	}
	tp.raw(t, "CONNECT refused.test:443 HTTP/1.1\r\n\r\n")
	st := tp.Stats()
	if st.Allowed != 21 || st.Denied != 1 || !slices.Equal(st.AllowedHosts, want) {
		t.Errorf("stats = %+v, want 21 allowed and %v", st, want)
	}
}
