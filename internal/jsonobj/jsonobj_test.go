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

// ParseJSONOnly edits as Parse does; its errors leave comments unsaid, in
// the object and in the members read from it. Compact drops whitespace
// only, and leaves what is not JSON as it is.
func TestParseJSONOnly(t *testing.T) {
	in := `{"b": 1.50, "a": {"x": [1, 2]}}`
	o, err := ParseJSONOnly([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	o.Set("c", json.RawMessage(`"é"`))
	if got, want := string(o.Indent()), "{\n  \"b\": 1.50,\n  \"a\": {\n    \"x\": [\n      1,\n      2\n    ]\n  },\n  \"c\": \"é\"\n}\n"; got != want {
		t.Errorf("indented %q, want %q", got, want)
	}
	bad := "{\n// c\n}"
	if _, err := ParseJSONOnly([]byte(bad)); err == nil || err.Error() != "not valid JSON: invalid character '/'" {
		t.Errorf("ParseJSONOnly(%q): %v", bad, err)
	}
	if _, err := Parse([]byte(bad)); err == nil || err.Error() != "not valid JSON (comments included): invalid character '/'" {
		t.Errorf("Parse(%q): %v", bad, err)
	}
	if _, err := ParseJSONOnly([]byte(`[1]`)); err == nil || err.Error() != "not a JSON object" {
		t.Errorf("a list: %v", err)
	}
	if _, err := o.Object("b"); err == nil || err.Error() != "b: not a JSON object" {
		t.Errorf("a number read as an object: %v", err)
	}
	if got := string(Compact([]byte("{ \"a\": [1, 2] }\n"))); got != `{"a":[1,2]}` {
		t.Errorf("Compact: %s", got)
	}
	if got := string(Compact([]byte("{ x"))); got != "{ x" {
		t.Errorf("Compact of not JSON: %s", got)
	}
}

// SetOrDel sets a member that has something in it and removes one that is
// an empty list or object.
func TestSetOrDel(t *testing.T) {
	o, err := Parse([]byte(`{"a": [1], "b": {"x": 1}, "c": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	o.SetOrDel("a", Array(nil))
	o.SetOrDel("b", json.RawMessage(`{ }`))
	o.SetOrDel("c", json.RawMessage(`[2]`))
	o.SetOrDel("d", json.RawMessage(`{"y":[]}`))
	if got := string(o.Encode()); got != `{"c":[2],"d":{"y":[]}}` {
		t.Errorf("encoded %s", got)
	}
}
