package sandbox

import (
	"strings"
	"testing"
)

// A HeadBuffer keeps the first Max bytes across writes and reports every
// write whole, so a process writing to it never sees an error.
func TestHeadBuffer(t *testing.T) {
	t.Parallel()
	h := &HeadBuffer{Max: 8}
	for _, w := range []string{"abc", "defgh", "ijk", strings.Repeat("z", 100)} {
		if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
			t.Errorf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
		}
	}
	if got := h.String(); got != "abcdefgh" {
		t.Errorf("kept %q, want %q", got, "abcdefgh")
	}
}
