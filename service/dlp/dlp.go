// Package dlp redacts secrets from a command's output as it streams:
// the credential values Gatehouse injected, in their plain and encoded
// forms, and text shaped like well-known secrets (cloud keys, tokens,
// private keys).
//
// # What is found
//
// For every injected value ([Secret]) the redactor looks for
//
//   - the value itself, also URL-encoded (any mix of literal and %XX
//     bytes, hex in either case, "+" for a space) and JSON- or
//     backslash-escaped;
//   - its standard and URL-safe base64, padded or not, at each of the
//     three byte alignments, so the value is found inside a longer base64
//     blob (the one or two characters that mix the value's bits with its
//     neighbours' go too);
//   - its hex, lower or upper case, contiguous or with spaces between the
//     bytes (xxd -p, od -An -tx1);
//   - od's default octal words and its -x hex words (hexdump), at both
//     byte alignments.
//
// The encoded forms may be broken across lines (base64 wraps at 76
// columns, xxd -p at 60): whitespace between units, and od-style offsets
// at the start of a line, are skipped. Each occurrence becomes
// "[REDACTED:credential:<id>]".
//
// Then the built-in patterns ([Builtin]) and the configuration's own
// patterns each become "[REDACTED:pattern:<name>]".
//
// # Streaming
//
// A [Writer] passes output on as soon as it can be decided: it holds back
// only bytes that may be the beginning of something to redact (a value
// split across two writes, with a pause between, is still found), and
// everything at Close. Overlapping findings are redacted as one.
//
// # Limits
//
// The redactor finds whole values and their encodings. It does not find a
// part of a value printed on its own (a substring, or the value cut by a
// dump format that interleaves other text, such as the ASCII column of
// xxd or hexdump -C), nor a value transformed in other ways (compressed,
// encrypted, reversed, spelled out by od -c).
package dlp

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MinSecretLen is the shortest value the redactor accepts. A shorter value
// would be found everywhere by chance, and its redaction would give it
// away.
const MinSecretLen = 8

// MaxSecretLen is the longest value the redactor accepts.
const MaxSecretLen = 64 << 10

// A Secret is a value to redact, under its credential id.
type Secret struct {
	ID    string
	Value string
}

// A Pattern is a regular expression (Go syntax) whose matches are redacted
// as "[REDACTED:pattern:<Name>]". When it has a capturing group, only the
// first group is redacted. A match is at most CustomMaxLen bytes long.
type Pattern struct {
	Name   string
	Regexp string
}

// CustomMaxLen bounds a match of a configured pattern.
const CustomMaxLen = 1024

// Label returns the text a redacted credential value becomes.
func Label(id string) string { return "[REDACTED:credential:" + id + "]" }

// PatternLabel returns the text a pattern's match becomes.
func PatternLabel(name string) string { return "[REDACTED:pattern:" + name + "]" }

// A Redactor finds what to redact. It is immutable and safe for
// concurrent use; each stream gets its own Writer.
type Redactor struct {
	t *table
}

// New returns a Redactor for the given values, the built-in patterns and
// the custom patterns. Values are refused when they are shorter than
// MinSecretLen or longer than MaxSecretLen; errors name the id or the
// pattern, never a value.
func New(secrets []Secret, custom []Pattern) (*Redactor, error) {
	b := newBuilder()
	var errs []error
	for _, s := range secrets {
		switch {
		case len(s.Value) < MinSecretLen:
			errs = append(errs, fmt.Errorf("credential %q: the value is %d bytes; at least %d are needed to redact it reliably", s.ID, len(s.Value), MinSecretLen))
			continue
		case len(s.Value) > MaxSecretLen:
			errs = append(errs, fmt.Errorf("credential %q: the value is larger than %d bytes", s.ID, MaxSecretLen))
			continue
		}
		b.secret(s)
	}
	for i, re := range builtinRegexps {
		b.regex(Builtin[i], re)
	}
	for _, p := range custom {
		if err := b.custom(p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Redactor{t: b.build()}, nil
}

// CheckPattern reports whether p is usable as a custom pattern: the name
// is not empty and the expression compiles and matches no empty text.
func CheckPattern(p Pattern) error {
	if p.Name == "" {
		return errors.New("a pattern needs a name")
	}
	re, err := regexp.Compile(p.Regexp)
	if err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "error parsing regexp: ")
		return fmt.Errorf("not a valid regular expression: %s", msg)
	}
	if re.MatchString("") {
		return errors.New("the expression matches empty text; it must match something")
	}
	return nil
}

// Redact returns b with everything the redactor finds replaced, and the
// number of redactions.
func (r *Redactor) Redact(b []byte) ([]byte, int) {
	var out []byte
	spans, _ := r.t.scan(b, 0, true, nil)
	out, n := r.t.render(out, b, spans, len(b))
	return out, n
}

// RedactString is Redact for a string.
func (r *Redactor) RedactString(s string) (string, int) {
	out, n := r.Redact([]byte(s))
	return string(out), n
}
