package probe

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

func intp(n int) *int { return &n }

// goodLinux is a host where bubblewrap works: Debian 12 as a user.
func goodLinux() Facts {
	return Facts{
		GOOS:              "linux",
		Uid:               1000,
		BwrapPath:         "/usr/bin/bwrap",
		BwrapFound:        true,
		BwrapVersion:      "bubblewrap 0.8.0",
		MaxUserNamespaces: intp(96365),
	}
}

func with(mutate func(f *Facts)) Facts {
	f := goodLinux()
	mutate(&f)
	return f
}

func missing(f *Facts) {
	f.BwrapFound, f.BwrapPath, f.BwrapVersion = false, "", ""
	f.BwrapError = "bwrap not found in PATH"
}

func TestBubblewrap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		facts  Facts
		failed []string // names of failed checks, in order
		// detail and remedy of the first failed check: detail exact,
		// remedy must contain every fragment.
		detail string
		remedy []string
	}{
		{name: "debian 12 user", facts: goodLinux()},
		{name: "root", facts: with(func(f *Facts) { f.Uid = 0 })},
		{name: "boundary 0.5.0", facts: with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.5.0" })},
		// 0.10.0 > 0.5.0 numerically, though not as text.
		{name: "two-digit minor", facts: with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.10.0" })},
		{name: "suffix", facts: with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.9.0rc1\n" })},
		{name: "max_user_namespaces absent", facts: with(func(f *Facts) { f.MaxUserNamespaces = nil })},
		{name: "userns_clone 1", facts: with(func(f *Facts) { f.UnprivUsernsClone = intp(1) })},
		{name: "apparmor restriction off", facts: with(func(f *Facts) { f.AppArmorRestrictUserns = intp(0) })},
		{
			name:   "root exempt from userns_clone",
			facts:  with(func(f *Facts) { f.Uid = 0; f.UnprivUsernsClone = intp(0) }),
			failed: nil,
		},
		{
			name:   "root exempt from apparmor",
			facts:  with(func(f *Facts) { f.Uid = 0; f.AppArmorRestrictUserns = intp(1) }),
			failed: nil,
		},
		{
			name:   "not in PATH",
			facts:  with(missing),
			failed: []string{"bwrap"},
			detail: "bwrap not found in PATH",
			remedy: []string{remedyInstall, "apt-get install bubblewrap", "dnf install bubblewrap"},
		},
		{
			name: "explicit path missing",
			facts: with(func(f *Facts) {
				missing(f)
				f.BwrapError = "bwrap not found at /opt/bwrap"
			}),
			failed: []string{"bwrap"},
			detail: "bwrap not found at /opt/bwrap",
			remedy: []string{remedyInstall},
		},
		{
			name:   "too old",
			facts:  with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.4.0" }),
			failed: []string{"bwrap version"},
			detail: "bubblewrap 0.4.0 is too old; want 0.5.0 or later",
			remedy: []string{"upgrade bubblewrap to 0.5.0 or later", "--clearenv"},
		},
		{
			name:   "just too old",
			facts:  with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.4.99" }),
			failed: []string{"bwrap version"},
			detail: "bubblewrap 0.4.99 is too old; want 0.5.0 or later",
			remedy: []string{"upgrade bubblewrap"},
		},
		{
			name:   "unparsable version",
			facts:  with(func(f *Facts) { f.BwrapVersion = "bwrap version one" }),
			failed: []string{"bwrap version"},
			detail: `cannot parse bwrap --version output "bwrap version one"; want "bubblewrap X.Y.Z"`,
			remedy: []string{"upgrade bubblewrap"},
		},
		{
			name: "version did not run",
			facts: with(func(f *Facts) {
				f.BwrapVersion = ""
				f.BwrapError = "running /usr/bin/bwrap --version: exit status 1"
			}),
			failed: []string{"bwrap version"},
			detail: "could not run bwrap --version: running /usr/bin/bwrap --version: exit status 1",
			remedy: []string{remedyInstall},
		},
		{
			name:   "setuid",
			facts:  with(func(f *Facts) { f.BwrapSetuid = true }),
			failed: []string{"bwrap setuid"},
			detail: "/usr/bin/bwrap is setuid root; Gatehouse refuses it: it would run privileged code on behalf of the agent, " +
				"and setuid mode changes how namespaces are set up",
			remedy: []string{"sudo chmod u-s /usr/bin/bwrap"},
		},
		{
			name:   "max_user_namespaces 0",
			facts:  with(func(f *Facts) { f.MaxUserNamespaces = intp(0) }),
			failed: []string{"user.max_user_namespaces"},
			detail: "user.max_user_namespaces = 0: user namespaces are disabled",
			remedy: []string{"sudo sysctl -w user.max_user_namespaces=16384", "/etc/sysctl.d/"},
		},
		{
			name:   "debian userns_clone 0",
			facts:  with(func(f *Facts) { f.UnprivUsernsClone = intp(0) }),
			failed: []string{"kernel.unprivileged_userns_clone"},
			detail: "kernel.unprivileged_userns_clone = 0: unprivileged user namespaces are disabled",
			remedy: []string{"sudo sysctl -w kernel.unprivileged_userns_clone=1", "/etc/sysctl.d/"},
		},
		{
			name:   "ubuntu 24.04 apparmor",
			facts:  with(func(f *Facts) { f.AppArmorRestrictUserns = intp(1) }),
			failed: []string{"kernel.apparmor_restrict_unprivileged_userns"},
			detail: "kernel.apparmor_restrict_unprivileged_userns = 1: AppArmor denies user namespaces to programs without a profile granting them",
			remedy: []string{
				"sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
				"profile gatehouse-bwrap /usr/bin/bwrap flags=(unconfined) {\n  userns,\n",
				"/etc/apparmor.d/gatehouse-bwrap",
				"apparmor_parser -r",
			},
		},
		{
			name: "apparmor profile names the bwrap found",
			facts: with(func(f *Facts) {
				f.BwrapPath = "/opt/bubblewrap/bin/bwrap"
				f.AppArmorRestrictUserns = intp(1)
			}),
			failed: []string{"kernel.apparmor_restrict_unprivileged_userns"},
			detail: "kernel.apparmor_restrict_unprivileged_userns = 1: AppArmor denies user namespaces to programs without a profile granting them",
			remedy: []string{"profile gatehouse-bwrap /opt/bubblewrap/bin/bwrap flags=(unconfined)"},
		},
		{
			name:   "old and setuid",
			facts:  with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.4.0"; f.BwrapSetuid = true }),
			failed: []string{"bwrap version", "bwrap setuid"},
			detail: "bubblewrap 0.4.0 is too old; want 0.5.0 or later",
			remedy: []string{"upgrade bubblewrap"},
		},
		{
			// The kernel checks still run when bwrap is missing, so doctor
			// shows everything to fix at once.
			name: "missing and userns off",
			facts: with(func(f *Facts) {
				missing(f)
				f.UnprivUsernsClone = intp(0)
			}),
			failed: []string{"bwrap", "kernel.unprivileged_userns_clone"},
			detail: "bwrap not found in PATH",
			remedy: []string{remedyInstall},
		},
		{
			name:   "darwin",
			facts:  Facts{GOOS: "darwin", SandboxExecFound: true},
			failed: []string{"bwrap"},
			detail: "bubblewrap is Linux-only (this is darwin)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ok, checks := Bubblewrap(tt.facts)
			var failed []Check
			for _, c := range checks {
				if c.Name == "" || c.Detail == "" {
					t.Errorf("check %+v lacks a name or detail", c)
				}
				if c.OK && c.Remedy != "" {
					t.Errorf("passed check %q has remedy %q", c.Name, c.Remedy)
				}
				if !c.OK {
					failed = append(failed, c)
				}
			}
			if got, want := ok, len(tt.failed) == 0; got != want {
				t.Errorf("ok = %v, want %v; checks: %+v", got, want, checks)
			}
			var names []string
			for _, c := range failed {
				names = append(names, c.Name)
			}
			if got, want := fmt.Sprint(names), fmt.Sprint(tt.failed); got != want {
				t.Fatalf("failed checks: got %q, want %q", got, want)
			}
			if len(failed) == 0 {
				return
			}
			if got := failed[0].Detail; got != tt.detail {
				t.Errorf("detail: got %q, want %q", got, tt.detail)
			}
			for _, frag := range tt.remedy {
				if got := failed[0].Remedy; !strings.Contains(got, frag) {
					t.Errorf("remedy: got %q, want it to contain %q", got, frag)
				}
			}
		})
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	const install = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
	tests := []struct {
		name    string
		backend string
		facts   Facts
		chosen  sandbox.Backend
		why     string
		err     string // exact error text; empty means no error
		unavail bool   // the error wraps sandbox.ErrUnavailable
	}{
		{
			name: "auto linux", backend: "auto", facts: goodLinux(),
			chosen: "bubblewrap", why: "bubblewrap 0.8.0 at /usr/bin/bwrap with unprivileged user namespaces",
		},
		{
			name: "empty means auto", backend: "", facts: goodLinux(),
			chosen: "bubblewrap", why: "bubblewrap 0.8.0 at /usr/bin/bwrap with unprivileged user namespaces",
		},
		{
			name: "auto linux without bwrap", backend: "auto", facts: with(missing),
			chosen: "none", why: "bubblewrap unusable: bwrap not found in PATH; " + install,
		},
		{
			name: "auto linux too old", backend: "auto", facts: with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.4.0" }),
			chosen: "none", why: "bubblewrap unusable: bubblewrap 0.4.0 is too old; want 0.5.0 or later; " + remedyUpgrade,
		},
		{
			name: "auto darwin", backend: "auto", facts: Facts{GOOS: "darwin", SandboxExecFound: true},
			chosen: "seatbelt", why: "sandbox-exec found at /usr/bin/sandbox-exec",
		},
		{
			name: "auto darwin without sandbox-exec", backend: "auto", facts: Facts{GOOS: "darwin"},
			chosen: "none", why: "Seatbelt unusable: sandbox-exec not found at /usr/bin/sandbox-exec; restore /usr/bin/sandbox-exec, which is part of macOS, or set exec.sandbox.backend: none with policy.sandbox_required: false to run without isolation",
		},
		{
			name: "auto windows", backend: "auto", facts: Facts{GOOS: "windows"},
			chosen: "none", why: "no sandbox backend on windows",
		},
		{
			name: "bubblewrap", backend: "bubblewrap", facts: goodLinux(),
			chosen: "bubblewrap", why: "bubblewrap 0.8.0 at /usr/bin/bwrap with unprivileged user namespaces",
		},
		{
			name: "bubblewrap missing", backend: "bubblewrap", facts: with(missing),
			err: "sandbox unavailable: bwrap not found in PATH; " + install, unavail: true,
		},
		{
			name: "bubblewrap too old", backend: "bubblewrap", facts: with(func(f *Facts) { f.BwrapVersion = "bubblewrap 0.4.0" }),
			err: "sandbox unavailable: bubblewrap 0.4.0 is too old; want 0.5.0 or later; " + remedyUpgrade, unavail: true,
		},
		{
			name: "bubblewrap setuid", backend: "bubblewrap", facts: with(func(f *Facts) { f.BwrapSetuid = true }),
			err: "sandbox unavailable: /usr/bin/bwrap is setuid root; Gatehouse refuses it: it would run privileged code on behalf of the agent, " +
				"and setuid mode changes how namespaces are set up; " +
				"enable unprivileged user namespaces, then remove the setuid bit: sudo chmod u-s /usr/bin/bwrap",
			unavail: true,
		},
		{
			name: "bubblewrap max_user_namespaces 0", backend: "bubblewrap", facts: with(func(f *Facts) { f.MaxUserNamespaces = intp(0) }),
			err: "sandbox unavailable: user.max_user_namespaces = 0: user namespaces are disabled; " + remedySysctlMaxUserns, unavail: true,
		},
		{
			name: "bubblewrap userns_clone 0", backend: "bubblewrap", facts: with(func(f *Facts) { f.UnprivUsernsClone = intp(0) }),
			err: "sandbox unavailable: kernel.unprivileged_userns_clone = 0: unprivileged user namespaces are disabled; " + remedySysctlUsernsClone, unavail: true,
		},
		{
			// The error carries the remedy's one-line summary, not the
			// profile text.
			name: "bubblewrap apparmor", backend: "bubblewrap", facts: with(func(f *Facts) { f.AppArmorRestrictUserns = intp(1) }),
			err: "sandbox unavailable: kernel.apparmor_restrict_unprivileged_userns = 1: AppArmor denies user namespaces to programs without a profile granting them; " +
				"allow bwrap to create user namespaces: install an AppArmor profile granting userns, to bwrap, " +
				"or turn the restriction off for every program with sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
			unavail: true,
		},
		{
			name: "bubblewrap two causes", backend: "bubblewrap", facts: with(func(f *Facts) {
				missing(f)
				f.MaxUserNamespaces = intp(0)
			}),
			err: "sandbox unavailable: bwrap not found in PATH; " + install +
				"; user.max_user_namespaces = 0: user namespaces are disabled; " + remedySysctlMaxUserns,
			unavail: true,
		},
		{
			name: "bubblewrap on darwin", backend: "bubblewrap", facts: Facts{GOOS: "darwin", SandboxExecFound: true},
			err: "sandbox unavailable: bubblewrap is Linux-only (this is darwin)", unavail: true,
		},
		{
			name: "seatbelt on linux", backend: "seatbelt", facts: goodLinux(),
			err: "sandbox unavailable: seatbelt is macOS-only (this is linux)", unavail: true,
		},
		{
			name: "seatbelt without sandbox-exec", backend: "seatbelt", facts: Facts{GOOS: "darwin"},
			err: "sandbox unavailable: sandbox-exec not found at /usr/bin/sandbox-exec; restore /usr/bin/sandbox-exec, which is part of macOS, or set exec.sandbox.backend: none with policy.sandbox_required: false to run without isolation", unavail: true,
		},
		{
			name: "seatbelt", backend: "seatbelt", facts: Facts{GOOS: "darwin", SandboxExecFound: true},
			chosen: "seatbelt", why: "sandbox-exec found at /usr/bin/sandbox-exec",
		},
		{
			name: "none", backend: "none", facts: goodLinux(),
			chosen: "none", why: "backend none configured: no kernel isolation",
		},
		{
			name: "unknown", backend: "firejail", facts: goodLinux(),
			err: `unknown sandbox backend "firejail"; want one of none, auto, bubblewrap, seatbelt`,
		},
		{
			name: "case matters", backend: "Bubblewrap", facts: goodLinux(),
			err: `unknown sandbox backend "Bubblewrap"; want one of none, auto, bubblewrap, seatbelt`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			chosen, why, err := Select(tt.backend, tt.facts)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("got chosen %q, why %q, want error %q", chosen, why, tt.err)
				}
				if got := err.Error(); got != tt.err {
					t.Errorf("error: got %q, want %q", got, tt.err)
				}
				if got := errors.Is(err, sandbox.ErrUnavailable); got != tt.unavail {
					t.Errorf("errors.Is(err, ErrUnavailable) = %v, want %v", got, tt.unavail)
				}
				if chosen != "" || why != "" {
					t.Errorf("on error got chosen %q, why %q, want both empty", chosen, why)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %q", err)
			}
			if chosen != tt.chosen {
				t.Errorf("chosen: got %q, want %q", chosen, tt.chosen)
			}
			if why != tt.why {
				t.Errorf("why: got %q, want %q", why, tt.why)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // empty means an error
	}{
		{"0.8.0", "0.8.0"},
		{"0.10.0", "0.10.0"},
		{"1", "1.0.0"},
		{"1.2", "1.2.0"},
		{"0.9.0rc1", "0.9.0"},
		{"0.11.0-2", "0.11.0"},
		{"", ""},
		{"v0.8.0", ""},
		{"0..1", ""},
		{"0.8x.0", ""},
		{"0.8.0.1", ""},
		{"99999999999999999999.0", ""},
	}
	for _, tt := range tests {
		v, err := parseVersion(tt.in)
		got := ""
		if err == nil {
			got = v.String()
		}
		if got != tt.want {
			t.Errorf("parseVersion(%q) = %q (err %v), want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSysctl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "nil" for nil
	}{
		{"1\n", "1"},
		{"0\n", "0"},
		{" 96365 \n", "96365"},
		{"", "nil"},
		{"yes\n", "nil"},
	}
	for _, tt := range tests {
		got := "nil"
		if p := parseSysctl(tt.in); p != nil {
			got = fmt.Sprint(*p)
		}
		if got != tt.want {
			t.Errorf("parseSysctl(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleAppArmorProfile() {
	fmt.Print(AppArmorProfile("/usr/bin/bwrap"))
	// Output:
	// abi <abi/4.0>,
	// include <tunables/global>
	//
	// profile gatehouse-bwrap /usr/bin/bwrap flags=(unconfined) {
	//   userns,
	//
	//   # Site-specific additions and overrides. See local/README for details.
	//   include if exists <local/gatehouse-bwrap>
	// }
}

func ExampleSelect() {
	f := Facts{GOOS: "linux", Uid: 1000, BwrapError: "bwrap not found in PATH", MaxUserNamespaces: new(int)}
	*f.MaxUserNamespaces = 15000
	chosen, why, _ := Select("auto", f)
	fmt.Println(chosen)
	fmt.Println(why)
	_, _, err := Select("bubblewrap", f)
	fmt.Println(err)
	// Output:
	// none
	// bubblewrap unusable: bwrap not found in PATH; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)
	// sandbox unavailable: bwrap not found in PATH; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)
}

func TestBwrapAtLeast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version             string
		major, minor, patch int
		want                bool
	}{
		{"bubblewrap 0.8.0", 0, 8, 0, true},
		{"bubblewrap 0.8.0", 0, 9, 0, false},
		{"bubblewrap 0.10.0", 0, 9, 0, true},
		{"bubblewrap 0.7.1", 0, 8, 0, false},
		{"bubblewrap 1.0", 0, 8, 0, true},
		{"", 0, 0, 0, false},
		{"garbage", 0, 0, 0, false},
	}
	for _, tt := range tests {
		got := BwrapAtLeast(Facts{BwrapVersion: tt.version}, tt.major, tt.minor, tt.patch)
		if got != tt.want {
			t.Errorf("BwrapAtLeast(%q, %d.%d.%d) = %v, want %v", tt.version, tt.major, tt.minor, tt.patch, got, tt.want)
		}
	}
}

func TestSeatbeltChecks(t *testing.T) {
	t.Parallel()
	ok, checks := Seatbelt(Facts{GOOS: "darwin", SandboxExecFound: true})
	if !ok || len(checks) != 1 || !checks[0].OK {
		t.Errorf("with sandbox-exec: ok %v, checks %+v", ok, checks)
	}
	ok, checks = Seatbelt(Facts{GOOS: "darwin"})
	if ok || len(checks) != 1 || checks[0].OK || !strings.Contains(checks[0].Remedy, "exec.sandbox.backend: none") {
		t.Errorf("without sandbox-exec: ok %v, checks %+v; want a failed check with a remedy", ok, checks)
	}
	if ok, _ := Seatbelt(Facts{GOOS: "linux", SandboxExecFound: true}); ok {
		t.Error("Seatbelt passed on linux")
	}
	if c := Checks(Facts{GOOS: "darwin"}); len(c) != 1 || c[0].Name != "sandbox-exec" {
		t.Errorf("Checks on darwin = %+v, want Seatbelt's", c)
	}
	if c := Checks(goodLinux()); len(c) == 0 || c[0].Name != "bwrap" {
		t.Errorf("Checks on linux = %+v, want bubblewrap's", c)
	}
	if c := Checks(Facts{GOOS: "windows"}); len(c) != 0 {
		t.Errorf("Checks on windows = %+v, want none", c)
	}
}

func TestExpected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ backend, goos, want string }{
		{"auto", "linux", "bubblewrap"}, {"", "darwin", "seatbelt"}, {"auto", "windows", "none"},
		{"none", "linux", "none"}, {"bubblewrap", "darwin", "bubblewrap"},
	} {
		if got := Expected(tc.backend, tc.goos); string(got) != tc.want {
			t.Errorf("Expected(%q, %q) = %q, want %q", tc.backend, tc.goos, got, tc.want)
		}
	}
}
