package claude

import "testing"

func TestReadsDropIns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		out  string
		want bool
		bad  bool
	}{
		{"2.1.332 (Claude Code)", true, false},
		{"2.1.83 (Claude Code)", true, false},
		{"2.1.82 (Claude Code)", false, false},
		{"2.0.99", false, false},
		{"3.0.0", true, false},
		{"2.1", false, false},
		{"2.2", true, false},
		{"", false, true},
		{"claude 2.1.332", false, true},
		{"2.x.1", false, true},
	} {
		v, err := ParseVersion(tc.out)
		if (err != nil) != tc.bad {
			t.Errorf("ParseVersion(%q): err %v, want error %v", tc.out, err, tc.bad)
			continue
		}
		if err == nil && ReadsDropIns(v) != tc.want {
			t.Errorf("ReadsDropIns(%q) = %v, want %v", tc.out, !tc.want, tc.want)
		}
	}
	if got := DropInPath("/etc/claude-code/managed-settings.json"); got != "/etc/claude-code/managed-settings.d/90-gatehouse.json" {
		t.Errorf("DropInPath: %s", got)
	}
}
