// Package jsonobj edits a JSON object the way a person's settings file
// wants to be edited: every key is kept in its order and every value byte
// for byte (only whitespace is re-indented), and what is not valid JSON is
// an error rather than a guess. It is a leaf of the standard library, so
// the small hook client can link it.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Object is a JSON object that keeps its keys' order and its values'
// bytes.
type Object struct {
	keys []string
	vals map[string]json.RawMessage
	// invalid begins the error of a text that does not parse: this
	// object's, and its members' that Object reads.
	invalid string
}

// Parse reads b as one JSON object; empty input is an empty object. Its
// errors say that comments are not JSON: some programs read comments in
// their settings (Gemini CLI), and an edit here cannot keep them.
func Parse(b []byte) (*Object, error) { return parse(b, "not valid JSON (comments included)") }

// ParseJSONOnly is Parse for a file whose program reads JSON alone
// (Claude Code's settings, Codex's hooks.json): its errors say "not valid
// JSON" and nothing of comments.
func ParseJSONOnly(b []byte) (*Object, error) { return parse(b, "not valid JSON") }

func parse(b []byte, invalid string) (*Object, error) {
	o := &Object{vals: map[string]json.RawMessage{}, invalid: invalid}
	if len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", invalid, err)
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", invalid, err)
		}
		k := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %v", invalid, err)
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not valid JSON: data after the object")
	}
	return o, nil
}

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Get returns the member k.
func (o *Object) Get(k string) (json.RawMessage, bool) { v, ok := o.vals[k]; return v, ok }

// Set replaces the member k in its place, or appends it.
func (o *Object) Set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Del removes the member k.
func (o *Object) Del(k string) {
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// SetOrDel is Set, or Del when v is an empty list or object: a section
// emptied of its last entry leaves the file.
func (o *Object) SetOrDel(k string, v json.RawMessage) {
	if c := string(Compact(v)); c == "[]" || c == "{}" {
		o.Del(k)
		return
	}
	o.Set(k, v)
}

// Object returns the member k as an object, empty when absent.
func (o *Object) Object(k string) (*Object, error) {
	v, ok := o.vals[k]
	if !ok {
		return parse(nil, o.invalid)
	}
	obj, err := parse(v, o.invalid)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	return obj, nil
}

// Array returns the member k as a list, empty when absent; name is the
// member's name in the error.
func (o *Object) Array(k, name string) ([]json.RawMessage, error) {
	v, ok := o.vals[k]
	if !ok {
		return nil, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, fmt.Errorf("%s is not a list", name)
	}
	return a, nil
}

// Encode returns the object compact.
func (o *Object) Encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Indent returns the object indented by two spaces, with a final newline:
// the file's new text.
func (o *Object) Indent() []byte {
	var b bytes.Buffer
	json.Indent(&b, o.Encode(), "", "  ")
	b.WriteByte('\n')
	return b.Bytes()
}

// Array encodes a list, leaving out nil elements.
func Array(a []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for _, v := range a {
		if v == nil {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
		n++
	}
	b.WriteByte(']')
	return b.Bytes()
}

// Equal reports whether a and b are the same JSON, whitespace aside.
func Equal(a, b []byte) bool { return bytes.Equal(Compact(a), Compact(b)) }

// Compact returns b without its insignificant whitespace, or b itself
// when it is not JSON.
func Compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
