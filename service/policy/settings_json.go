package policy

// This file parses a settings file's JSON into values that keep the line
// each starts on, so that every error about the file names the file, the
// line and the JSON path (settings.go reads the values).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// JSON values with the line each starts on, for errors that name them.

type jkind int

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

type jvalue struct {
	kind     jkind
	line     int
	str      string // a string, or a number's text
	b        bool
	keys     []string
	keyLines []int
	vals     []*jvalue
	items    []*jvalue
}

// get returns the value of key k of an object, or nil.
func (v *jvalue) get(k string) *jvalue {
	if v.kind != jObject {
		return nil
	}
	if i := slices.Index(v.keys, k); i >= 0 {
		return v.vals[i]
	}
	return nil
}

// describe names v for "want X, got Y" messages.
func (v *jvalue) describe() string {
	switch v.kind {
	case jNull:
		return "null"
	case jBool:
		return fmt.Sprint(v.b)
	case jNumber:
		return "the number " + v.str
	case jString:
		return fmt.Sprintf("the string %q", v.str)
	case jArray:
		return "a list"
	}
	return "an object"
}

// parseJSON parses data, the contents of file, into a tree of values. A
// syntax error, a repeated key or anything after the value is a
// *FieldError naming the line and the JSON path where it was found.
func parseJSON(file string, data []byte) (*jvalue, error) {
	p := &jparser{file: file, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errAt(Source{File: file, Line: 1}, "", "is empty; want a JSON object like {\"filesystem\": {\"denyRead\": [\"~/secrets\"]}}")
	}
	v, err := p.value("")
	if err != nil {
		return nil, err
	}
	off := p.dec.InputOffset()
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errAt(Source{File: file, Line: p.lineAt(off)}, "", "a file holds one JSON value; remove what follows it")
	}
	return v, nil
}

type jparser struct {
	file string
	data []byte
	dec  *json.Decoder
}

// lineAt returns the line of the first token at or after offset off.
func (p *jparser) lineAt(off int64) int {
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n:,", p.data[off]) >= 0 {
		off++
	}
	off = min(off, int64(len(p.data)))
	return 1 + bytes.Count(p.data[:off], []byte("\n"))
}

// syntax turns a decoder error met at JSON path at into a *FieldError.
func (p *jparser) syntax(err error, at string) error {
	var se *json.SyntaxError
	off := p.dec.InputOffset()
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		off, msg = se.Offset, se.Error()
		if off > 0 {
			off-- // the offset is past the offending byte
		}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		off, msg = int64(len(p.data)), "the file ends before the JSON value does"
	}
	line := 1 + bytes.Count(p.data[:min(off, int64(len(p.data)))], []byte("\n"))
	return errAt(Source{File: p.file, Line: line}, at, "invalid JSON: %s", msg)
}

func (p *jparser) value(at string) (*jvalue, error) {
	off := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err, at)
	}
	v := &jvalue{line: p.lineAt(off)}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v.kind = jObject
			for p.dec.More() {
				koff := p.dec.InputOffset()
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.syntax(err, at)
				}
				k, _ := kt.(string) // the decoder allows only strings here
				kline := p.lineAt(koff)
				kp := joinPath(at, k)
				if i := slices.Index(v.keys, k); i >= 0 {
					return nil, errAt(Source{File: p.file, Line: kline}, kp, "repeated key; first set on line %d", v.keyLines[i])
				}
				child, err := p.value(kp)
				if err != nil {
					return nil, err
				}
				v.keys, v.keyLines, v.vals = append(v.keys, k), append(v.keyLines, kline), append(v.vals, child)
			}
		case '[':
			v.kind = jArray
			for i := 0; p.dec.More(); i++ {
				child, err := p.value(fmt.Sprintf("%s[%d]", at, i))
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, child)
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, p.syntax(err, at)
		}
	case string:
		v.kind, v.str = jString, t
	case json.Number:
		v.kind, v.str = jNumber, t.String()
	case bool:
		v.kind, v.b = jBool, t
	case nil:
		v.kind = jNull
	}
	return v, nil
}
