package scale

import "testing"

func TestScale(t *testing.T) {
	s := Of(Step{"none"}, Step{"auto"}, Step{"bubblewrap", "seatbelt"})
	if got := s.String(); got != "none, auto, bubblewrap, seatbelt" {
		t.Errorf("String = %q", got)
	}
	if got := s.Ranks(); got != "none < auto < bubblewrap, seatbelt" {
		t.Errorf("Ranks = %q", got)
	}
	for v, want := range map[string]int{"none": 0, "auto": 1, "bubblewrap": 2, "seatbelt": 2} {
		if r, ok := s.Rank(v); !ok || r != want {
			t.Errorf("Rank(%q) = %d, %v; want %d", v, r, ok, want)
		}
	}
	if s.Has("Auto") || s.Has("") {
		t.Error("Has accepts a value not in the scale")
	}
}
