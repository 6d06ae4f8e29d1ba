package dlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Test values: one with characters every encoding treats specially, one
// plain token, one long multi-line value (a credential file).
var (
	odd   = Secret{ID: "odd", Value: "Gh0st-Tok3n_with/odd+chars=and spaces?&%\"\\"}
	plain = Secret{ID: "plain", Value: "plainTOKEN0123456789abcdefXYZ"}
	file  = Secret{ID: "sa", Value: `{"type":"service_account","private_key_id":"0123abcd","client_email":"x@y.iam"}` + "\n"}
)

func mustNew(t testing.TB, secrets []Secret, custom []Pattern) *Redactor {
	t.Helper()
	r, err := New(secrets, custom)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// forms are texts that must not survive redaction: every window of 12
// bytes of the value and of each of its encodings.
func forms(v string) []string {
	b := []byte(v)
	all := []string{v, hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		url.QueryEscape(v), url.PathEscape(v), urlEncode(b, false, false)}
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for a := range 3 {
			all = append(all, base64Core(e, b, a))
		}
	}
	var out []string
	for _, f := range all {
		for i := 0; i+12 <= len(f); i++ {
			out = append(out, f[i:i+12])
		}
	}
	return out
}

var blanks = regexp.MustCompile(`[ \t\r\n]+`)

// leaks returns the forms of v found in out, as written and with the
// whitespace removed (wrapped encodings).
func leaks(out, v string) []string {
	var found []string
	compact := blanks.ReplaceAllString(out, "")
	for _, f := range forms(v) {
		if strings.Contains(out, f) || strings.Contains(compact, f) {
			found = append(found, f)
		}
	}
	return found
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secrets []Secret
		custom  []Pattern
		want    string
	}{
		{[]Secret{{ID: "short", Value: "1234567"}}, nil, `credential "short": the value is 7 bytes; at least 8 are needed`},
		{[]Secret{{ID: "empty", Value: ""}}, nil, `credential "empty": the value is 0 bytes`},
		{[]Secret{{ID: "big", Value: strings.Repeat("x", MaxSecretLen+1)}}, nil, `credential "big": the value is larger than 65536 bytes`},
		{nil, []Pattern{{Name: "bad", Regexp: "a("}}, `pattern "bad": not a valid regular expression: missing closing ): ` + "`a(`"},
		{nil, []Pattern{{Name: "empty", Regexp: "x*"}}, `pattern "empty": the expression matches empty text`},
		{nil, []Pattern{{Name: "", Regexp: "abc"}}, `a pattern needs a name`},
	} {
		_, err := New(tc.secrets, tc.custom)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: got %v, want %q", err, tc.want)
		}
		for _, s := range tc.secrets {
			if err != nil && s.Value != "" && strings.Contains(err.Error(), s.Value) {
				t.Errorf("the error quotes the value: %v", err)
			}
		}
	}
	// Exactly MinSecretLen is fine.
	if _, err := New([]Secret{{ID: "ok", Value: "12345678"}}, nil); err != nil {
		t.Error(err)
	}
}

// odWords renders b as od does by default (octal words) or with -x.
func odWords(b []byte, hexWords bool) string {
	var sb strings.Builder
	for off := 0; off < len(b); off += 16 {
		fmt.Fprintf(&sb, "%07o", off)
		line := b[off:min(off+16, len(b))]
		for k := 0; k < len(line); k += 2 {
			w := uint16(line[k])
			if k+1 < len(line) {
				w |= uint16(line[k+1]) << 8
			}
			if hexWords {
				fmt.Fprintf(&sb, " %04x", w)
			} else {
				fmt.Fprintf(&sb, " %06o", w)
			}
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "%07o\n", len(b))
	return sb.String()
}

func wrap(s string, width int) string {
	var sb strings.Builder
	for len(s) > width {
		sb.WriteString(s[:width] + "\n")
		s = s[width:]
	}
	return sb.String() + s + "\n"
}

func spaced(h string) string {
	var parts []string
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, " ")
}

// Every encoding of every value, at several offsets inside other text,
// is redacted, once.
func TestEncodings(t *testing.T) {
	t.Parallel()
	r := mustNew(t, []Secret{odd, plain, file}, nil)
	encodings := map[string]func([]byte) string{
		"raw":             func(b []byte) string { return string(b) },
		"query escape":    func(b []byte) string { return url.QueryEscape(string(b)) },
		"path escape":     func(b []byte) string { return url.PathEscape(string(b)) },
		"uri lower":       func(b []byte) string { return urlEncode(b, false, false) },
		"json":            func(b []byte) string { j, _ := json.Marshal(string(b)); return string(j) },
		"base64":          base64.StdEncoding.EncodeToString,
		"base64 raw":      base64.RawStdEncoding.EncodeToString,
		"base64url":       base64.URLEncoding.EncodeToString,
		"base64url raw":   base64.RawURLEncoding.EncodeToString,
		"base64 wrap 76":  func(b []byte) string { return wrap(base64.StdEncoding.EncodeToString(b), 76) },
		"base64 wrap 64":  func(b []byte) string { return wrap(base64.StdEncoding.EncodeToString(b), 64) },
		"base64 wrap 7":   func(b []byte) string { return wrap(base64.StdEncoding.EncodeToString(b), 7) },
		"hex":             hex.EncodeToString,
		"HEX":             func(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) },
		"hex wrap 60":     func(b []byte) string { return wrap(hex.EncodeToString(b), 60) },
		"hex wrap 6":      func(b []byte) string { return wrap(hex.EncodeToString(b), 6) },
		"hex spaced":      func(b []byte) string { return spaced(hex.EncodeToString(b)) },
		"HEX spaced wrap": func(b []byte) string { return wrap(spaced(strings.ToUpper(hex.EncodeToString(b))), 48) },
		"od":              func(b []byte) string { return odWords(b, false) },
		"od -x":           func(b []byte) string { return odWords(b, true) },
	}
	for name, enc := range encodings {
		for _, s := range []Secret{odd, plain, file} {
			for _, pre := range []string{"", "a", "ab", "abc", "the value is: "} {
				for _, post := range []string{"", "\n", "x", "xy", " and more text"} {
					in := enc([]byte(pre + s.Value + post))
					out, n := r.RedactString(in)
					if n < 1 {
						t.Errorf("%s of %s (%q…%q): nothing redacted in %q", name, s.ID, pre, post, in)
						continue
					}
					if l := leaks(out, s.Value); len(l) > 0 {
						t.Errorf("%s of %s (%q…%q): %q leaks %q", name, s.ID, pre, post, out, l[0])
					}
					if !strings.Contains(out, Label(s.ID)) {
						t.Errorf("%s of %s: %q has no %s", name, s.ID, out, Label(s.ID))
					}
				}
			}
		}
	}
}

// The real tools' output, as a command in the sandbox would print it.
func TestTools(t *testing.T) {
	t.Parallel()
	secrets := []Secret{odd, plain}
	r := mustNew(t, secrets, nil)
	tools := [][]string{
		{"base64"}, {"base64", "-w0"}, {"base64", "-w", "10"}, {"basenc", "--base64url"},
		{"openssl", "base64"}, {"xxd", "-p"}, {"xxd", "-p", "-c", "7"}, {"od"}, {"od", "-x"},
		{"od", "-An", "-tx1"}, {"hexdump"}, {"jq", "-sRr", "@uri"}, {"jq", "-sR", "."},
		{"python3", "-c", "import sys, urllib.parse; print(urllib.parse.quote(sys.stdin.read()))"},
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s missing; skipped", tool[0])
			continue
		}
		for _, s := range secrets {
			for _, pre := range []string{"", "x", "xy", strings.Repeat("a longer text before it ", 3)} {
				in := pre + s.Value + "\n" + strings.Repeat("and after it ", 4)
				cmd := exec.Command(tool[0], tool[1:]...)
				cmd.Stdin = strings.NewReader(in)
				got, err := cmd.Output()
				if err != nil {
					t.Errorf("%v: %v", tool, err)
					continue
				}
				out, n := r.RedactString(string(got))
				if n < 1 {
					t.Errorf("%v of %s after %q: nothing redacted in %q", tool, s.ID, pre, got)
				}
				if l := leaks(out, s.Value); len(l) > 0 {
					t.Errorf("%v of %s after %q: %q leaks %q", tool, s.ID, pre, out, l[0])
				}
			}
		}
	}
}

// Text around a redaction is kept as is.
func TestKeepsTheRest(t *testing.T) {
	t.Parallel()
	r := mustNew(t, []Secret{plain}, nil)
	for in, want := range map[string]string{
		"no secrets here\n":                           "no secrets here\n",
		"GITHUB_TOKEN=" + plain.Value + "\nPATH=/bin": "GITHUB_TOKEN=[REDACTED:credential:plain]\nPATH=/bin",
		plain.Value + plain.Value:                     "[REDACTED:credential:plain][REDACTED:credential:plain]",
		"a " + plain.Value + " b " + plain.Value:      "a [REDACTED:credential:plain] b [REDACTED:credential:plain]",
		"":                                            "",
	} {
		got, _ := r.RedactString(in)
		if got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	r := mustNew(t, []Secret{plain, odd}, nil)
	in := plain.Value + "\n" + base64.StdEncoding.EncodeToString([]byte(plain.Value)) + "\n" +
		hex.EncodeToString([]byte(odd.Value)) + "\nghp_" + strings.Repeat("a1", 18) + "\n"
	if _, n := r.RedactString(in); n != 4 {
		t.Errorf("count %d, want 4", n)
	}
}

// Values that overlap, or that contain each other, are redacted as one
// span: nothing of either is left.
func TestOverlapping(t *testing.T) {
	t.Parallel()
	a := Secret{ID: "a", Value: "abcdefgh12345678"}
	b := Secret{ID: "b", Value: "12345678ijklmnop"}
	c := Secret{ID: "c", Value: "xxabcdefgh12345678yy"}
	r := mustNew(t, []Secret{a, b, c}, nil)
	for in, want := range map[string]string{
		"<abcdefgh12345678ijklmnop>":     "<[REDACTED:credential:a]>",
		"<xxabcdefgh12345678yy>":         "<[REDACTED:credential:c]>",
		"<abcdefgh12345678>":             "<[REDACTED:credential:a]>",
		"<12345678ijklmnop>":             "<[REDACTED:credential:b]>",
		"<xxabcdefgh12345678ijklmnopyy>": "<xx[REDACTED:credential:a]yy>",
	} {
		got, n := r.RedactString(in)
		if got != want || n != 1 {
			t.Errorf("Redact(%q) = %q, %d; want %q, 1", in, got, n, want)
		}
	}
}

// A value cut short by the end of the stream (a command killed while
// printing it) still goes when most of it was printed.
func TestCutShort(t *testing.T) {
	t.Parallel()
	r := mustNew(t, []Secret{plain}, nil)
	for in, want := range map[string]string{
		"x=" + plain.Value[:20]:                             "x=[REDACTED:credential:plain]",
		"x=" + plain.Value[:5]:                              "x=" + plain.Value[:5],
		"x=" + hex.EncodeToString([]byte(plain.Value))[:40]: "x=[REDACTED:credential:plain]",
	} {
		if got, _ := r.RedactString(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	r := mustNew(t, nil, nil)
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\nlWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE\n-----END RSA PRIVATE KEY-----"
	for _, tc := range []struct{ in, want string }{
		{"id AKIAIOSFODNN7EXAMPLE ok", "id [REDACTED:pattern:aws_access_key_id] ok"},
		{"XAKIAIOSFODNN7EXAMPLE", "XAKIAIOSFODNN7EXAMPLE"},
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "aws_secret_access_key = [REDACTED:pattern:aws_secret_access_key]\n"},
		{"t=ghp_" + strings.Repeat("Ab3", 12), "t=[REDACTED:pattern:github_token]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV done", "[REDACTED:pattern:github_pat] done"},
		{"see github.com/x/y", "see github.com/x/y"},
		{"glpat-abcdefghij0123456789", "[REDACTED:pattern:gitlab_token]"},
		{"xoxb-123456789012-abcdefghij", "[REDACTED:pattern:slack_token]"},
		{"https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://[REDACTED:pattern:slack_webhook]"},
		{key + "\nafter", "-----[REDACTED:pattern:private_key]\nafter"},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"token " + jwt + " end", "token [REDACTED:pattern:jwt] end"},
		{"key=AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "key=[REDACTED:pattern:google_api_key]"},
		{"sk_live_abcdefghijklmnop0123", "[REDACTED:pattern:stripe_key]"},
		{"whsec_abcdefghijklmnopqrstuvwxyz", "[REDACTED:pattern:stripe_webhook_secret]"},
		{"//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", "//registry.npmjs.org/:_authToken=[REDACTED:pattern:npm_token]"},
		{"ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwx", "ANTHROPIC_API_KEY=[REDACTED:pattern:anthropic_api_key]"},
		{"sk-proj-abcdefghijklmnopqrstuvwxyz", "[REDACTED:pattern:openai_api_key]"},
		{"task-proj-abcdefghijklmnopqrstuvwxyz", "task-proj-abcdefghijklmnopqrstuvwxyz"},
		{"Authorization: Bearer abc123def456ghi789jkl\r\n", "Authorization: Bearer [REDACTED:pattern:bearer_token]\r\n"},
		{"authorization: bearer " + jwt, "authorization: bearer [REDACTED:pattern:bearer_token]"},
		{"Bearer authentication is described in RFC 6750", "Bearer authentication is described in RFC 6750"},
	} {
		if got, _ := r.RedactString(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestCustomPatterns(t *testing.T) {
	t.Parallel()
	r := mustNew(t, nil, []Pattern{
		{Name: "acme", Regexp: `ACME-[0-9]{6}`},
		{Name: "internal_host", Regexp: `[a-z]+\.corp\.example`},
		{Name: "pin", Regexp: `(?i)pin: ([0-9]{4,8})`},
	})
	for _, tc := range []struct{ in, want string }{
		{"ticket ACME-123456 done", "ticket [REDACTED:pattern:acme] done"},
		{"ssh build.corp.example now", "ssh [REDACTED:pattern:internal_host] now"},
		{"PIN: 123456\n", "PIN: [REDACTED:pattern:pin]\n"},
		{"ACME-12", "ACME-12"},
	} {
		if got, _ := r.RedactString(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// Streamed a byte at a time, the same.
		var out bytes.Buffer
		w := r.Writer(&out)
		for i := range len(tc.in) {
			w.Write([]byte{tc.in[i]})
		}
		w.Close()
		if out.String() != tc.want {
			t.Errorf("streamed %q = %q, want %q", tc.in, out.String(), tc.want)
		}
	}
}

// streamed writes in to a Writer in the given chunks.
func streamed(r *Redactor, chunks [][]byte) (string, int) {
	var out bytes.Buffer
	w := r.Writer(&out)
	for _, c := range chunks {
		w.Write(c)
	}
	w.Close()
	return out.String(), w.Count()
}

// chunkInputs mixes every kind of finding.
func chunkInputs() []string {
	return []string{
		"GITHUB_TOKEN=" + plain.Value + "\n",
		base64.StdEncoding.EncodeToString([]byte("xy"+odd.Value+"\n")) + "\n",
		wrap(base64.StdEncoding.EncodeToString([]byte("some longer text "+plain.Value+" and more")), 20),
		wrap(hex.EncodeToString([]byte(odd.Value)), 60),
		odWords([]byte("x"+plain.Value+"\n"), false),
		url.QueryEscape("q=" + odd.Value),
		"Authorization: Bearer abc123def456ghi789jkl\n",
		"a ghp_" + strings.Repeat("Ab3", 12) + " b\n",
		file.Value + file.Value,
		"nothing to see here, just text\n",
	}
}

// Output split anywhere gives what the whole gives.
func TestChunkBoundaries(t *testing.T) {
	t.Parallel()
	r := mustNew(t, []Secret{odd, plain, file}, nil)
	for _, in := range chunkInputs() {
		want, wantN := r.RedactString(in)
		for cut := 0; cut <= len(in); cut++ {
			got, n := streamed(r, [][]byte{[]byte(in[:cut]), []byte(in[cut:])})
			if got != want || n != wantN {
				t.Fatalf("split at %d of %q:\n got %q (%d)\nwant %q (%d)", cut, in, got, n, want, wantN)
			}
		}
		// A byte at a time.
		var chunks [][]byte
		for i := range len(in) {
			chunks = append(chunks, []byte{in[i]})
		}
		if got, n := streamed(r, chunks); got != want || n != wantN {
			t.Fatalf("byte by byte %q:\n got %q (%d)\nwant %q (%d)", in, got, n, want, wantN)
		}
	}
	// All of them together, in random chunks.
	all := strings.Join(chunkInputs(), "")
	want, wantN := r.RedactString(all)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var chunks [][]byte
		for rest := all; rest != ""; {
			n := min(len(rest), 1+rng.IntN(40))
			chunks = append(chunks, []byte(rest[:n]))
			rest = rest[n:]
		}
		if got, n := streamed(r, chunks); got != want || n != wantN {
			t.Fatalf("random chunks:\n got %q (%d)\nwant %q (%d)", got, n, want, wantN)
		}
	}
}

// A writer passes on ordinary text at once, and holds back only what may
// begin a value.
func TestHoldsBackOnlyWhatItMust(t *testing.T) {
	t.Parallel()
	r := mustNew(t, []Secret{plain}, nil)
	var out bytes.Buffer
	w := r.Writer(&out)
	w.Write([]byte("building...\n"))
	if out.String() != "building...\n" {
		t.Errorf("after a line: %q passed on, want all of it", out.String())
	}
	w.Write([]byte("token: " + plain.Value[:10]))
	if strings.Contains(out.String(), plain.Value[:4]) {
		t.Errorf("a value's beginning was passed on: %q", out.String())
	}
	w.Write([]byte(plain.Value[10:] + "\ndone\n"))
	w.Close()
	if want := "building...\ntoken: [REDACTED:credential:plain]\ndone\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// A writer whose destination fails goes on consuming and counting.
func TestBrokenDestination(t *testing.T) {
	t.Parallel()
	r := mustNew(t, []Secret{plain}, nil)
	w := r.Writer(failWriter{})
	for range 3 {
		if n, err := w.Write([]byte(plain.Value + "\n")); n != len(plain.Value)+1 || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if err := w.Close(); err == nil {
		t.Error("Close: want the destination's error")
	}
	if w.Count() != 3 {
		t.Errorf("count %d, want 3", w.Count())
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, fmt.Errorf("broken pipe") }

func FuzzWriter(f *testing.F) {
	for _, in := range chunkInputs() {
		f.Add([]byte(in), uint64(7))
	}
	r := mustNew(f, []Secret{odd, plain, file}, []Pattern{{Name: "any", Regexp: `[a-z]{3}-[0-9]{3}`}})
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		want, wantN := r.Redact(in)
		rng := rand.New(rand.NewPCG(seed, seed))
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(64))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		got, n := streamed(r, chunks)
		if got != string(want) || n != wantN {
			t.Fatalf("streamed %q:\n got %q (%d)\nwant %q (%d)", in, got, n, want, wantN)
		}
		for _, s := range []Secret{odd, plain, file} {
			if bytes.Contains(in, []byte(s.Value)) && strings.Contains(got, s.Value) {
				t.Fatalf("%s survived in %q", s.ID, got)
			}
		}
	})
}
