package policy

import "testing"

// The egress fields are validated entry by entry; the message names the
// field, the entry's index and line, and the entry itself.
func TestValidateEgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, user, want string // want "" means valid
	}{
		{"allowlist ok", "policy:\n  egress_allowlist: [\"*\", \"*.example.com\", github.com, \"api.github.com:443\", \"127.0.0.1:8080\", \"[::1]:8080\", localhost]\n", ""},
		{"allowlist tld wildcard", "policy:\n  egress_allowlist:\n    - github.com\n    - \"*.com\"\n",
			`config.yaml:4: policy.egress_allowlist[1]: "*.com" is too broad: it matches every name under the top-level domain "com"; want a pattern like "*.example.com"`},
		{"allowlist public suffix", "policy:\n  egress_allowlist: [\"*.co.uk\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "*.co.uk" is too broad: "co.uk" is a public suffix shared by unrelated owners; want a pattern like "*.example.co.uk"`},
		{"allowlist trailing dot", "policy:\n  egress_allowlist: [example.com.]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "example.com." ends in a dot; write the name without it`},
		{"allowlist bad port", "policy:\n  egress_allowlist: [\"example.com:99999\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "example.com:99999" has port "99999", which is not a port; want 1 to 65535`},
		{"allowlist url", "policy:\n  egress_allowlist: [\"https://example.com\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "https://example.com" has port "//example.com", which is not a port; want 1 to 65535`},
		{"allowlist path", "policy:\n  egress_allowlist: [example.com/x]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "example.com/x" contains "/"; a host name has letters, digits, hyphens and dots only`},
		{"allowlist star inside", "policy:\n  egress_allowlist: [\"a.*.com\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "a.*.com" has "*" in the wrong place; "*" may only stand alone or as the first label ("*.example.com")`},
		{"allowlist numeric", "policy:\n  egress_allowlist: [\"2130706433\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "2130706433" is a number or an IP address in a non-standard form; write IP addresses as 192.0.2.7 or [2001:db8::7]`},
		{"allowlist metadata", "policy:\n  egress_allowlist: [\"169.254.169.254\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "169.254.169.254" is a cloud metadata endpoint, which is never reachable`},
		{"allowlist empty entry", "policy:\n  egress_allowlist: [\"\"]\n",
			`config.yaml:2: policy.egress_allowlist[0]: "" is empty; want a name like "example.com", "*.example.com" or "*"`},
		{"cidrs ok", "exec:\n  egress:\n    denied_cidrs: [10.0.0.0/8, \"fd00::/8\", 192.0.2.7/32]\n", ""},
		{"cidr address", "exec:\n  egress:\n    denied_cidrs: [10.0.0.1]\n",
			`config.yaml:3: exec.egress.denied_cidrs[0]: "10.0.0.1" is not a CIDR; want a range like 10.0.0.0/8 or fd00::/8 (a single address is 192.0.2.7/32)`},
		{"cidr host bits", "exec:\n  egress:\n    denied_cidrs:\n      - 10.0.0.0/8\n      - 10.1.2.3/16\n",
			`config.yaml:5: exec.egress.denied_cidrs[1]: "10.1.2.3/16" has bits set past the prefix length; write "10.1.0.0/16"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := loadFiles(t, "", tt.user)
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
