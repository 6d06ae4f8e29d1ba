package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every string is mapped, keys and numbers are not, and the count is
// summed; what is not one JSON value is an error.
func TestMapStrings(t *testing.T) {
	t.Parallel()
	in := `{"type":"text","n":12345678901234567890,"f":1.50,"k":["a TOKEN b",{"TOKEN":"TOKEN TOKEN"}],"b":true,"z":null}`
	out, n, err := MapStrings(json.RawMessage(in), func(s string) (string, int) {
		c := strings.Count(s, "TOKEN")
		return strings.ReplaceAll(s, "TOKEN", "[R]"), c
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":true,"f":1.50,"k":["a [R] b",{"TOKEN":"[R] [R]"}],"n":12345678901234567890,"type":"text","z":null}`
	if string(out) != want || n != 3 {
		t.Errorf("MapStrings = %s, %d; want %s, 3", out, n, want)
	}
	for _, bad := range []string{"", "not json", `{"a":1} {"b":2}`, `{"a":`} {
		if _, _, err := MapStrings(json.RawMessage(bad), func(s string) (string, int) { return s, 0 }); err == nil {
			t.Errorf("MapStrings(%q) succeeded", bad)
		}
	}
	if out, _, _ := MapStrings(json.RawMessage(`"<a & b>"`), func(s string) (string, int) { return s, 0 }); string(out) != `"<a & b>"` {
		t.Errorf("HTML escaped: %s", out)
	}
}
