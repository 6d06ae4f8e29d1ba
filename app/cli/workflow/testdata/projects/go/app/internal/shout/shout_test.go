package shout

import "testing"

func TestShout(t *testing.T) {
	if got := Shout("hi"); got != "HI!" {
		t.Fatalf("Shout = %q", got)
	}
}
