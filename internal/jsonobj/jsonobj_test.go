package jsonobj

import (
	"encoding/json"
	"testing"
)

// Keys keep their order and values their bytes through an edit; what is
// not one JSON object is an error.
func TestEdit(t *testing.T) {
	o, err := Parse([]byte(`{"b": 1.50, "a": {"x": [1, 2]}, "c": "é"}`))
	if err != nil {
		t.Fatal(err)
	}
	o.Set("d", json.RawMessage(`true`))
	o.Set("b", json.RawMessage(`2`))
	o.Del("c")
	if got := string(o.Encode()); got != `{"b":2,"a":{"x": [1, 2]},"d":true}` {
		t.Errorf("encoded %s", got)
	}
	if a, err := o.Array("a", "a"); err == nil || a != nil {
		t.Errorf("an object read as a list")
	}
	for _, bad := range []string{`{"a": 1} x`, "{\n// c\n}", `[1]`, `{"a": }`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if !Equal([]byte(`{"a": [1, 2]}`), []byte("{\"a\":[1,2]}\n")) || string(Array([]json.RawMessage{nil, json.RawMessage(`1`)})) != `[1]` {
		t.Errorf("Equal or Array")
	}
}
