// Package probe gathers the host facts that decide which sandbox backend
// Gatehouse can use, and explains them for `gatehouse doctor`.
//
// Gather is the only part that touches the host. Bubblewrap and Select are
// pure: they take a Facts value and return a verdict, so every branch (and
// every remedy text) is table-tested on every OS.
package probe

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// MinBwrapVersion is the oldest bubblewrap Gatehouse runs. 0.5.0 added
// --clearenv, which the command's constructed environment relies on.
const MinBwrapVersion = "0.5.0"

// Facts are what Gather found on the host. A pointer field is nil when the
// file behind it does not exist (the kernel has no such knob).
type Facts struct {
	GOOS string
	Uid  int

	// BwrapPath is the resolved bwrap binary; empty when not found.
	BwrapPath  string
	BwrapFound bool
	// BwrapVersion is the trimmed output of `bwrap --version`, e.g.
	// "bubblewrap 0.8.0"; empty when it could not be run.
	BwrapVersion string
	BwrapSetuid  bool
	// BwrapError says why bwrap was not found or `bwrap --version` failed,
	// e.g. "bwrap not found in PATH".
	BwrapError string

	// UnprivUsernsClone is /proc/sys/kernel/unprivileged_userns_clone
	// (Debian's and older Ubuntu's out-of-tree knob).
	UnprivUsernsClone *int
	// MaxUserNamespaces is /proc/sys/user/max_user_namespaces.
	MaxUserNamespaces *int
	// AppArmorRestrictUserns is
	// /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu 23.10+).
	AppArmorRestrictUserns *int

	// SandboxExecFound reports whether /usr/bin/sandbox-exec exists (macOS).
	SandboxExecFound bool
}

// A Check is one line of doctor output.
type Check struct {
	Name   string // short stable label, e.g. "bwrap version" or a sysctl name
	OK     bool
	Detail string // what was found
	// Remedy says how to fix a failed check; empty when OK. Its first line
	// is a one-line summary; further lines (an AppArmor profile) are for
	// doctor to print as they are.
	Remedy string
}

// Remedy texts, kept as values so tests and docs can quote them.
const (
	remedyInstall         = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
	remedyUpgrade         = "upgrade bubblewrap to " + MinBwrapVersion + " or later (it added --clearenv, which Gatehouse uses to give the command only its constructed environment)"
	remedySysctlMaxUserns = "enable user namespaces: sudo sysctl -w user.max_user_namespaces=16384, " +
		"and persist it with a line user.max_user_namespaces=16384 in /etc/sysctl.d/60-gatehouse-userns.conf"
	remedySysctlUsernsClone = "allow unprivileged user namespaces: sudo sysctl -w kernel.unprivileged_userns_clone=1, " +
		"and persist it with a line kernel.unprivileged_userns_clone=1 in /etc/sysctl.d/60-gatehouse-userns.conf"
)

// AppArmorProfile returns an AppArmor profile that lets the bubblewrap
// binary at bwrapPath create user namespaces under Ubuntu's
// kernel.apparmor_restrict_unprivileged_userns=1, without lifting the
// restriction for every other program. It follows the shape of the profiles
// Ubuntu itself ships for browsers: unconfined except for the grant.
//
// Install it as /etc/apparmor.d/gatehouse-bwrap and load it with
// `sudo apparmor_parser -r /etc/apparmor.d/gatehouse-bwrap`.
func AppArmorProfile(bwrapPath string) string {
	if bwrapPath == "" {
		bwrapPath = "/usr/bin/bwrap"
	}
	return `abi <abi/4.0>,
include <tunables/global>

profile gatehouse-bwrap ` + bwrapPath + ` flags=(unconfined) {
  userns,

  # Site-specific additions and overrides. See local/README for details.
  include if exists <local/gatehouse-bwrap>
}
`
}

// remedyAppArmor is the remedy for the AppArmor restriction: the narrow fix
// (a profile for bwrap alone) first, the system-wide sysctl second.
func remedyAppArmor(bwrapPath string) string {
	return "allow bwrap to create user namespaces: install an AppArmor profile granting userns, to bwrap, " +
		"or turn the restriction off for every program with sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\n" +
		"The profile (narrower; preferred), as /etc/apparmor.d/gatehouse-bwrap, then run sudo apparmor_parser -r /etc/apparmor.d/gatehouse-bwrap:\n" +
		AppArmorProfile(bwrapPath) +
		"The sysctl lasts until reboot; persist it with a line kernel.apparmor_restrict_unprivileged_userns=0 in /etc/sysctl.d/60-gatehouse-userns.conf."
}

// Bubblewrap judges whether bubblewrap can run Gatehouse's sandbox on a host
// with facts f. It returns every check it made, failed or not, in a fixed
// order; ok is true when all of them passed.
func Bubblewrap(f Facts) (ok bool, checks []Check) {
	if f.GOOS != "linux" {
		return false, []Check{{
			Name:   "bwrap",
			Detail: fmt.Sprintf("bubblewrap is Linux-only (this is %s)", f.GOOS),
		}}
	}

	checks = append(checks, bwrapChecks(f)...)
	checks = append(checks, usernsChecks(f)...)
	ok = true
	for _, c := range checks {
		ok = ok && c.OK
	}
	return ok, checks
}

// bwrapChecks judges the binary itself.
func bwrapChecks(f Facts) []Check {
	if !f.BwrapFound {
		detail := f.BwrapError
		if detail == "" {
			detail = "bwrap not found in PATH"
		}
		return []Check{{Name: "bwrap", Detail: detail, Remedy: remedyInstall}}
	}
	checks := []Check{{Name: "bwrap", OK: true, Detail: "found at " + f.BwrapPath}}

	version := Check{Name: "bwrap version"}
	switch v, err := parseBwrapVersion(f.BwrapVersion); {
	case f.BwrapVersion == "":
		version.Detail = "could not run bwrap --version"
		if f.BwrapError != "" {
			version.Detail += ": " + f.BwrapError
		}
		version.Remedy = remedyInstall
	case err != nil:
		version.Detail = err.Error()
		version.Remedy = remedyUpgrade
	case v.less(mustVersion(MinBwrapVersion)):
		version.Detail = fmt.Sprintf("bubblewrap %s is too old; want %s or later", v, MinBwrapVersion)
		version.Remedy = remedyUpgrade
	default:
		version.OK = true
		version.Detail = fmt.Sprintf("bubblewrap %s (want %s or later)", v, MinBwrapVersion)
	}
	checks = append(checks, version)

	// A setuid bwrap starts as root and drops privileges itself: the code
	// that sets up the agent's sandbox runs privileged on the agent's
	// behalf, and in that mode bwrap builds namespaces differently (the
	// user namespace is optional and several options are refused), so the
	// sandbox would not be the one Gatehouse describes on the event.
	setuid := Check{Name: "bwrap setuid", OK: !f.BwrapSetuid}
	if f.BwrapSetuid {
		setuid.Detail = f.BwrapPath + " is setuid root; Gatehouse refuses it: it would run privileged code on behalf of the agent, " +
			"and setuid mode changes how namespaces are set up"
		setuid.Remedy = "enable unprivileged user namespaces, then remove the setuid bit: sudo chmod u-s " + f.BwrapPath
	} else {
		setuid.Detail = "not setuid (runs unprivileged, in a user namespace)"
	}
	return append(checks, setuid)
}

// usernsChecks judges the kernel knobs that decide whether an unprivileged
// process may create a user namespace.
func usernsChecks(f Facts) []Check {
	var checks []Check

	c := Check{Name: "user.max_user_namespaces", OK: true}
	switch {
	case f.MaxUserNamespaces == nil:
		c.Detail = "not present; user namespace support not confirmed"
	case *f.MaxUserNamespaces <= 0:
		c.OK = false
		c.Detail = fmt.Sprintf("user.max_user_namespaces = %d: user namespaces are disabled", *f.MaxUserNamespaces)
		c.Remedy = remedySysctlMaxUserns
	default:
		c.Detail = fmt.Sprintf("user.max_user_namespaces = %d", *f.MaxUserNamespaces)
	}
	checks = append(checks, c)

	// The next two knobs restrict only processes without CAP_SYS_ADMIN, so
	// root is exempt. Say so rather than fail, but say too that the user
	// service (which is not root) would be refused.
	c = Check{Name: "kernel.unprivileged_userns_clone", OK: true}
	switch v := f.UnprivUsernsClone; {
	case v == nil:
		c.Detail = "not present (mainline kernel; no such restriction)"
	case *v == 0 && f.Uid == 0:
		c.Detail = "kernel.unprivileged_userns_clone = 0; root is exempt, but Gatehouse running as a user would be refused"
	case *v == 0:
		c.OK = false
		c.Detail = "kernel.unprivileged_userns_clone = 0: unprivileged user namespaces are disabled"
		c.Remedy = remedySysctlUsernsClone
	default:
		c.Detail = fmt.Sprintf("kernel.unprivileged_userns_clone = %d", *v)
	}
	checks = append(checks, c)

	c = Check{Name: "kernel.apparmor_restrict_unprivileged_userns", OK: true}
	switch v := f.AppArmorRestrictUserns; {
	case v == nil:
		c.Detail = "not present (no AppArmor user namespace restriction)"
	case *v == 1 && f.Uid == 0:
		c.Detail = "kernel.apparmor_restrict_unprivileged_userns = 1; root is exempt, but Gatehouse running as a user would be refused"
	case *v == 1:
		c.OK = false
		c.Detail = "kernel.apparmor_restrict_unprivileged_userns = 1: AppArmor denies user namespaces to programs without a profile granting them"
		c.Remedy = remedyAppArmor(f.BwrapPath)
	default:
		c.Detail = fmt.Sprintf("kernel.apparmor_restrict_unprivileged_userns = %d", *v)
	}
	return append(checks, c)
}

// remedySeatbelt is the remedy for a macOS without sandbox-exec.
const remedySeatbelt = "restore /usr/bin/sandbox-exec, which is part of macOS, " +
	"or set exec.sandbox.backend: none with policy.sandbox_required: false to run without isolation"

// Seatbelt judges whether Seatbelt can run Gatehouse's sandbox on a host
// with facts f, with the same shape of answer as Bubblewrap.
func Seatbelt(f Facts) (ok bool, checks []Check) {
	if f.GOOS != "darwin" {
		return false, []Check{{Name: "sandbox-exec", Detail: fmt.Sprintf("Seatbelt is macOS-only (this is %s)", f.GOOS)}}
	}
	if !f.SandboxExecFound {
		return false, []Check{{Name: "sandbox-exec", Detail: "sandbox-exec not found at /usr/bin/sandbox-exec", Remedy: remedySeatbelt}}
	}
	return true, []Check{{Name: "sandbox-exec", OK: true, Detail: "found at /usr/bin/sandbox-exec (Seatbelt: no memory or process limit; a setsid daemon outlives its command)"}}
}

// Checks are the checks of the backend auto looks for on f's system:
// bubblewrap's on Linux, Seatbelt's on macOS, none elsewhere.
func Checks(f Facts) []Check {
	var checks []Check
	switch f.GOOS {
	case "linux":
		_, checks = Bubblewrap(f)
	case "darwin":
		_, checks = Seatbelt(f)
	}
	return checks
}

// Select chooses the backend for the configured name backend (one of
// sandbox.Backends; empty means auto) on a host with facts
// f. why is one line for logs and doctor.
//
// auto never fails: with no usable backend it chooses "none" and why says
// what was missing; whether that is allowed (sandbox_required) is the
// caller's decision. An explicitly named backend that cannot run returns an
// error wrapping sandbox.ErrUnavailable with the cause, e.g.
// "sandbox unavailable: bwrap not found in PATH; install bubblewrap (…)".
func Select(backend string, f Facts) (chosen sandbox.Backend, why string, err error) {
	switch sandbox.Backend(backend) {
	case "", sandbox.BackendAuto:
		switch f.GOOS {
		case "linux":
			ok, checks := Bubblewrap(f)
			if ok {
				return sandbox.BackendBubblewrap, bubblewrapWhy(f), nil
			}
			return sandbox.BackendNone, "bubblewrap unusable: " + cause(checks), nil
		case "darwin":
			ok, checks := Seatbelt(f)
			if ok {
				return sandbox.BackendSeatbelt, "sandbox-exec found at /usr/bin/sandbox-exec", nil
			}
			return sandbox.BackendNone, "Seatbelt unusable: " + cause(checks), nil
		default:
			return sandbox.BackendNone, fmt.Sprintf("no sandbox backend on %s", f.GOOS), nil
		}

	case sandbox.BackendBubblewrap:
		ok, checks := Bubblewrap(f)
		if !ok {
			return "", "", fmt.Errorf("%w: %s", sandbox.ErrUnavailable, cause(checks))
		}
		return sandbox.BackendBubblewrap, bubblewrapWhy(f), nil

	case sandbox.BackendSeatbelt:
		if f.GOOS != "darwin" {
			return "", "", fmt.Errorf("%w: seatbelt is macOS-only (this is %s)", sandbox.ErrUnavailable, f.GOOS)
		}
		if ok, checks := Seatbelt(f); !ok {
			return "", "", fmt.Errorf("%w: %s", sandbox.ErrUnavailable, cause(checks))
		}
		return sandbox.BackendSeatbelt, "sandbox-exec found at /usr/bin/sandbox-exec", nil

	case sandbox.BackendNone:
		return sandbox.BackendNone, "backend none configured: no kernel isolation", nil
	}
	return "", "", fmt.Errorf("unknown sandbox backend %q; want one of %s", backend, sandbox.Backends)
}

func bubblewrapWhy(f Facts) string {
	return fmt.Sprintf("%s at %s with unprivileged user namespaces", f.BwrapVersion, f.BwrapPath)
}

// cause joins the failed checks as "detail; remedy summary" pairs.
func cause(checks []Check) string {
	var parts []string
	for _, c := range checks {
		if c.OK {
			continue
		}
		s := c.Detail
		if c.Remedy != "" {
			summary, _, _ := strings.Cut(c.Remedy, "\n")
			s += "; " + summary
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// version is a parsed major.minor.patch.
type version [3]int

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

func mustVersion(s string) version {
	v, err := parseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// parseBwrapVersion parses the output of `bwrap --version`, e.g.
// "bubblewrap 0.8.0".
func parseBwrapVersion(out string) (version, error) {
	fields := strings.Fields(out)
	if len(fields) != 2 || fields[0] != "bubblewrap" {
		return version{}, fmt.Errorf("cannot parse bwrap --version output %q; want \"bubblewrap X.Y.Z\"", out)
	}
	v, err := parseVersion(fields[1])
	if err != nil {
		return version{}, fmt.Errorf("cannot parse bwrap --version output %q: %v", out, err)
	}
	return v, nil
}

// parseVersion parses "X", "X.Y" or "X.Y.Z"; anything after the digits of
// a component ("0.9.0rc1", "0.10.0-2") is ignored.
func parseVersion(s string) (version, error) {
	var v version
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return v, fmt.Errorf("version %q has more than three components", s)
	}
	for i, p := range parts {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 || (end < len(p) && i < len(parts)-1) {
			return v, fmt.Errorf("malformed version %q", s)
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			return v, fmt.Errorf("malformed version %q", s)
		}
		v[i] = n
	}
	return v, nil
}

// Expected is the backend the configured name backend selects on a host
// of goos where that backend works: what an execution decided now will
// most likely run under (the run probes again).
func Expected(backend, goos string) sandbox.Backend {
	if b := sandbox.Backend(backend); b != "" && b != sandbox.BackendAuto {
		return b
	}
	switch goos {
	case "linux":
		return sandbox.BackendBubblewrap
	case "darwin":
		return sandbox.BackendSeatbelt
	}
	return sandbox.BackendNone
}
