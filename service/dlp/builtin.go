package dlp

// A Def is a built-in pattern.
type Def struct {
	// Name is the <name> of "[REDACTED:pattern:<name>]".
	Name string
	// Regexp is matched at an anchor; when it has a capturing group only
	// the group is redacted (the "Bearer " before a token stays).
	Regexp string
	// Anchors are the literal texts a match starts with (four bytes, or
	// three followed by any base64url character).
	Anchors []string
	// FoldAnchors: the anchors match in any case.
	FoldAnchors bool
	// MaxLen bounds a match.
	MaxLen int
	// Boundary: a match may not follow a letter, digit or underscore.
	Boundary bool
	// Valid, when set, must accept the redacted text.
	Valid func([]byte) bool
}

// Builtin are the patterns every redactor applies, after the credential
// values.
var Builtin = []Def{
	{
		Name:     "aws_access_key_id",
		Regexp:   `(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`,
		Anchors:  []string{"AKIA", "ASIA", "ABIA", "ACCA"},
		MaxLen:   21,
		Boundary: true,
	},
	{
		Name:        "aws_secret_access_key",
		Regexp:      `(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|\z)`,
		Anchors:     []string{"aws_", "awss"},
		FoldAnchors: true,
		MaxLen:      96,
		Boundary:    true,
	},
	{
		Name:    "github_token",
		Regexp:  `gh[pousr]_[A-Za-z0-9]{36,251}\b`,
		Anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		MaxLen:  256,
	},
	{
		Name:    "github_pat",
		Regexp:  `github_pat_[A-Za-z0-9_]{22,244}\b`,
		Anchors: []string{"gith"},
		MaxLen:  256,
	},
	{
		Name:    "gitlab_token",
		Regexp:  `(?:glpat|glptt|gldt|glrt|glsoat|glcbt|glimt|glagent|gloas)-[A-Za-z0-9_-]{20,200}\b`,
		Anchors: []string{"glpa", "glpt", "gldt", "glrt", "glso", "glcb", "glim", "glag", "gloa"},
		MaxLen:  220,
	},
	{
		Name:    "slack_token",
		Regexp:  `xox[abposre]-[A-Za-z0-9-]{10,250}`,
		Anchors: []string{"xoxa", "xoxb", "xoxp", "xoxo", "xoxs", "xoxr", "xoxe"},
		MaxLen:  256,
	},
	{
		Name:    "slack_webhook",
		Regexp:  `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,200}`,
		Anchors: []string{"hook"},
		MaxLen:  240,
	},
	{
		// The header's leading dashes stay; the rest of the block, up to
		// its end line, goes. A block cut short (no end line) goes up to
		// the end of its base64 body.
		Name:    "private_key",
		Regexp:  `BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)`,
		Anchors: []string{"BEGI"},
		MaxLen:  16 << 10, // an 8192-bit RSA key is about 6.5 KiB
	},
	{
		Name:     "jwt",
		Regexp:   `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`,
		Anchors:  []string{"eyJ"},
		MaxLen:   8 << 10,
		Boundary: true,
	},
	{
		Name:     "google_api_key",
		Regexp:   `AIza[0-9A-Za-z_-]{35}\b`,
		Anchors:  []string{"AIza"},
		MaxLen:   40,
		Boundary: true,
	},
	{
		Name:     "stripe_key",
		Regexp:   `(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}\b`,
		Anchors:  []string{"sk_l", "sk_t", "rk_l", "rk_t"},
		MaxLen:   256,
		Boundary: true,
	},
	{
		Name:     "stripe_webhook_secret",
		Regexp:   `whsec_[0-9A-Za-z+/=]{24,250}`,
		Anchors:  []string{"whse"},
		MaxLen:   256,
		Boundary: true,
	},
	{
		Name:     "npm_token",
		Regexp:   `npm_[A-Za-z0-9]{36}\b`,
		Anchors:  []string{"npm_"},
		MaxLen:   40,
		Boundary: true,
	},
	{
		Name:     "anthropic_api_key",
		Regexp:   `sk-ant-[A-Za-z0-9_-]{20,250}`,
		Anchors:  []string{"sk-a"},
		MaxLen:   256,
		Boundary: true,
	},
	{
		Name:     "openai_api_key",
		Regexp:   `sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}|sk-[A-Za-z0-9]{48}\b`,
		Anchors:  []string{"sk-"},
		MaxLen:   256,
		Boundary: true,
	},
	{
		// A bearer credential after "Bearer", in a header or anywhere; the
		// word stays, the credential goes. Prose ("bearer authentication")
		// is left alone: a credential has a digit and a letter.
		Name:        "bearer_token",
		Regexp:      `(?i)bearer[ \t]+([A-Za-z0-9._~+/=-]{16,})`,
		Anchors:     []string{"bear"},
		FoldAnchors: true,
		MaxLen:      8 << 10,
		Boundary:    true,
		Valid:       hasDigitAndLetter,
	},
}

func hasDigitAndLetter(b []byte) bool {
	var digit, letter bool
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		}
	}
	return digit && letter
}
