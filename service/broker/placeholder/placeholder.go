// Package placeholder makes the stand-ins a sandboxed command gets for
// masked credentials: strings of the same length and shape as the value,
// so that tools' format checks pass, and random otherwise.
//
// # Rules
//
// A placeholder keeps of its value only what is public about the kind of
// credential: a well-known prefix (ghp_, github_pat_, glpat-, sk-ant-,
// AKIA...), the length, the dots of a JWT, and the alphabet the rest is
// written in (hex, base64url, alphanumerics...). Every other character is
// drawn from crypto/rand: nothing in a placeholder is computed from the
// secret part of the value, so knowing one tells nothing about the other.
package placeholder

import (
	"crypto/rand"
	"errors"
	"strings"
)

// A format is a well-known credential format: its public prefix, the
// alphabet of the rest, and a separator whose places are part of the
// format (github_pat_ joins two parts with "_"; Slack tokens join numbers
// and a secret with "-"), or 0.
type format struct {
	prefix string
	set    string
	sep    byte
}

// formats are matched in order: where one prefix begins another, the
// longer comes first.
var formats = []format{
	{"github_pat_", alnum, '_'},
	{"ghp_", alnum, 0}, {"gho_", alnum, 0}, {"ghu_", alnum, 0}, {"ghs_", alnum, 0}, {"ghr_", alnum, 0},
	{"glpat-", b64url, 0}, {"gldt-", b64url, 0}, {"glrt-", b64url, 0}, {"glptt-", b64url, 0},
	{"sk-ant-api03-", b64url, 0}, {"sk-ant-admin01-", b64url, 0}, {"sk-ant-", b64url, 0},
	{"sk-proj-", b64url, 0}, {"sk-svcacct-", b64url, 0}, {"sk-", "", 0}, // "": the value's alphabet
	{"sk_live_", alnum, 0}, {"sk_test_", alnum, 0}, {"rk_live_", alnum, 0}, {"rk_test_", alnum, 0}, {"whsec_", b64std, 0},
	{"xoxb-", alnum, '-'}, {"xoxp-", alnum, '-'}, {"xoxa-", alnum, '-'}, {"xoxr-", alnum, '-'}, {"xoxs-", alnum, '-'}, {"xapp-", alnum, '-'},
	{"AKIA", digits + upper, 0}, {"ASIA", digits + upper, 0},
	{"npm_", alnum, 0}, {"pypi-", b64url, 0}, {"hf_", alnum, 0}, {"dop_v1_", lowerHex, 0},
	{"shpat_", lowerHex, 0}, {"shpss_", lowerHex, 0}, {"SG.", b64url, '.'}, {"AIza", b64url, 0}, {"ya29.", b64url + ".", 0},
}

// Alphabets a value's body may be written in, narrowest first.
const (
	digits    = "0123456789"
	lowerHex  = "0123456789abcdef"
	upperHex  = "0123456789ABCDEF"
	upper     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	alnum     = digits + "abcdefghijklmnopqrstuvwxyz" + upper
	b64url    = alnum + "-_"
	b64std    = alnum + "+/"
	printable = alnum + "!#$%&()*+,-./:;<=>?@[]^_{|}~"
)

// New returns a placeholder for value: the same length in bytes, the
// same public prefix (with the alphabet and separators of its format) or
// JWT structure, random otherwise, and never equal
// to value nor containing it. It fails only when the system's random
// source does.
func New(value string) (string, error) {
	for range 8 {
		p, err := build(value)
		if err != nil {
			return "", err
		}
		if !strings.Contains(p, value) && !strings.Contains(value, p) {
			return p, nil
		}
	}
	return "", errors.New("could not draw a placeholder unlike the value")
}

func build(value string) (string, error) {
	if isJWT(value) {
		return jwt(value)
	}
	f := format{}
	for _, g := range formats {
		if strings.HasPrefix(value, g.prefix) && len(value) > len(g.prefix) {
			f = g
			break
		}
	}
	body := value[len(f.prefix):]
	if f.set == "" {
		f.set = alphabet(body)
	}
	if f.sep == 0 {
		rest, err := random(f.set, len(body))
		return f.prefix + rest, err
	}
	parts := strings.Split(body, string(f.sep))
	for i, part := range parts {
		r, err := random(f.set, len(part))
		if err != nil {
			return "", err
		}
		parts[i] = r
	}
	return f.prefix + strings.Join(parts, string(f.sep)), nil
}

// alphabet returns the narrowest of a few common alphabets body is
// written in, for a value of no known format. The choices are coarse so
// that they say no more than what kind of encoding the value uses.
func alphabet(body string) string {
	has := func(set string) bool {
		for i := range len(body) {
			if !strings.ContainsRune(set, rune(body[i])) {
				return false
			}
		}
		return true
	}
	for _, set := range []string{digits, lowerHex, upperHex, alnum, b64url, b64std, b64std + "="} {
		if has(set) {
			if set == b64std+"=" {
				return b64std // padding is not part of the secret's alphabet
			}
			return set
		}
	}
	return printable
}

// isJWT reports whether v looks like a JSON Web Token: three base64url
// segments, the first decoding to a JSON object ("eyJ" is base64 of `{"`).
func isJWT(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "eyJ") {
		return false
	}
	for _, p := range parts[:2] {
		if p == "" || strings.Trim(p, b64url) != "" {
			return false
		}
	}
	return strings.Trim(parts[2], b64url) == ""
}

// jwt returns three random base64url segments of the lengths of v's, the
// first two starting "eyJ" as a JSON object's encoding does.
func jwt(v string) (string, error) {
	parts := strings.Split(v, ".")
	for i, p := range parts {
		head := ""
		if i < 2 && strings.HasPrefix(p, "eyJ") {
			head = "eyJ"
		}
		r, err := random(b64url, len(p)-len(head))
		if err != nil {
			return "", err
		}
		parts[i] = head + r
	}
	return strings.Join(parts, "."), nil
}

// random returns n characters drawn uniformly from set.
func random(set string, n int) (string, error) {
	out := make([]byte, n)
	buf := make([]byte, 64)
	// Rejection sampling keeps the draw uniform: bytes at or above the
	// largest multiple of len(set) are skipped.
	limit := 256 - 256%len(set)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			out[i] = set[int(b)%len(set)]
			i++
			if i == n {
				break
			}
		}
	}
	return string(out), nil
}
