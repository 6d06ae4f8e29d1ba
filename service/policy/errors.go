package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// A FieldError reports an invalid value in a configuration file. Load and
// Validate return every FieldError they find, joined with errors.Join.
type FieldError struct {
	// File is the file as the caller named it, or "default" for a value
	// from the built-in defaults. It is empty for a Config validated on
	// its own.
	File string
	// Line is the 1-based line of the value in File; 0 when unknown.
	Line int
	// Field is the dotted path of the field, with an index for a list
	// entry: "exec.limits.tmpfs_size", "policy.workspace_roots[2]". It is
	// empty for an error about the file as a whole (YAML syntax).
	Field string
	Err   error
}

// Error formats e as "file:line: field: message", leaving out the parts e
// does not have.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// errAt returns a FieldError located at src.
func errAt(src Source, field string, format string, args ...any) *FieldError {
	return &FieldError{File: src.name(), Line: src.Line, Field: field, Err: fmt.Errorf(format, args...)}
}

// yamlLineError matches the syntax errors of go.yaml.in/yaml/v3, which
// carry the line in their text.
var yamlLineError = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`) })

// syntaxError turns a YAML parser error into a FieldError naming file and,
// when the parser gave one, the line.
func syntaxError(file string, err error) *FieldError {
	msg := err.Error()
	line := 0
	if m := yamlLineError().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return errAt(Source{File: file, Line: line}, "", "%s", msg)
}
