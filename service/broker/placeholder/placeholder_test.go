package placeholder

import (
	"regexp"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		shape       string // the placeholder must match it entirely
	}{
		{"classic github", "ghp_" + strings.Repeat("aB3", 12), `ghp_[A-Za-z0-9]{36}`},
		{"github oauth", "gho_16C7e42F292c6912E7710c838347Ae178B4a", `gho_[A-Za-z0-9]{36}`},
		{"fine-grained github", "github_pat_11ABCDEFG0123456789abc_" + strings.Repeat("x1Y", 19) + "zz", `github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}`},
		{"gitlab", "glpat-" + "xXyY0123456789abcdEF", `glpat-[A-Za-z0-9_-]{20}`},
		{"openai", "sk-" + strings.Repeat("Ab1", 16), `sk-[A-Za-z0-9]{48}`},
		{"openai project", "sk-proj-" + strings.Repeat("Ab1-_", 10), `sk-proj-[A-Za-z0-9_-]{50}`},
		{"anthropic", "sk-ant-api03-" + strings.Repeat("aB1_-", 19) + "AA", `sk-ant-api03-[A-Za-z0-9_-]{97}`},
		{"slack bot", "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", `xoxb-[A-Za-z0-9]{10}-[A-Za-z0-9]{13}-[A-Za-z0-9]{24}`},
		{"aws access key", "AKIAIOSFODNN7EXAMPLE", `AKIA[A-Z0-9]{16}`},
		{"aws secret key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", `[A-Za-z0-9+/]{40}`},
		{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
			`eyJ[A-Za-z0-9_-]{33}\.eyJ[A-Za-z0-9_-]{48}\.[A-Za-z0-9_-]{43}`},
		{"hex", "0123456789abcdef0123456789abcdef", `[0-9a-f]{32}`},
		{"digits", "12345678901234", `[0-9]{14}`},
		{"password", "correct horse!battery", `[!-~]{21}`},
		{"base64 padded", "c2VjcmV0LXZhbHVlLWhlcmU=", `[A-Za-z0-9+/]{24}`},
		{"npm", "npm_" + strings.Repeat("a1B", 12), `npm_[A-Za-z0-9]{36}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			re := regexp.MustCompile(`^` + tc.shape + `$`)
			seen := map[string]bool{}
			for range 50 {
				p, err := New(tc.value)
				if err != nil {
					t.Fatal(err)
				}
				if len(p) != len(tc.value) {
					t.Fatalf("got %q (%d bytes), want %d bytes", p, len(p), len(tc.value))
				}
				if !re.MatchString(p) {
					t.Fatalf("got %q, want the shape %s", p, tc.shape)
				}
				if p == tc.value || strings.Contains(p, tc.value) {
					t.Fatalf("got the value back: %q", p)
				}
				seen[p] = true
			}
			if len(seen) < 50 {
				t.Errorf("50 draws gave %d distinct placeholders; want each fresh", len(seen))
			}
		})
	}
}

// Nothing of the value but its public shape carries into the
// placeholder: two values of the same shape give placeholders drawn
// from the same distribution, and the characters of the secret part are
// uniform whatever the value's are.
func TestNewNotDerived(t *testing.T) {
	t.Parallel()
	value := "ghp_" + strings.Repeat("a", 36) // every secret character the same
	counts := map[byte]int{}
	const draws = 2000
	for range draws {
		p, err := New(value)
		if err != nil {
			t.Fatal(err)
		}
		for i := 4; i < len(p); i++ {
			counts[p[i]]++
		}
	}
	// The format's alphabet is the 62 alphanumerics, whatever the value's
	// characters are.
	if len(counts) != 62 {
		t.Errorf("the secret part used %d distinct characters, want all 62 of its format's alphabet", len(counts))
	}
	mean := draws * 36 / 62
	for c, n := range counts {
		if n < mean*8/10 || n > mean*12/10 {
			t.Errorf("%q drawn %d times, want about %d: the draw is not uniform", c, n, mean)
		}
	}
}
