// Package seatbelt runs an execution under macOS Seatbelt: sandbox-exec
// with a profile generated from the Spec.
//
// Generating the profile (Profile) and rewriting a command line to the
// pinned copies of its scripts (Rewrite) are portable and tested on every
// OS; running is darwin-only (run_darwin.go).
//
// # The profile
//
// (deny default), then: processes may fork and exec, and signal and
// inspect only processes of the same sandbox; sysctl and user preferences
// may be read; the mach services of MachServices may be looked up; ptys the
// command opens may be used. Every file may be read but the deny-read set
// (which holds Gatehouse's own configuration and state), except the
// execution's credential directory. Files may be written only under the
// workspace roots and the execution's private temporary directory, minus
// the write-deny set and the deny-read set, plus a few devices. The network
// is refused but for TCP to the execution's egress proxy on localhost.
//
// Filters never depend on the order of the rules: an exception is written
// into the rule it is an exception to, (require-not …), so the profile
// means the same whichever precedence sandbox-exec gives to later rules.
package seatbelt

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// MachServices are the global mach services a command may look up: what
// git, curl, python3 and node need to run and check a TLS certificate.
// Deliberately absent: com.apple.SecurityServer and securityd (the login
// keychain: git's credential helper would read the user's tokens through
// them), cfprefsd (it writes preferences on the command's behalf, outside
// the sandbox), launchservicesd (`open` would start applications outside
// the sandbox), FSEvents (it reports changes in hidden directories) and
// configd.
var MachServices = []string{
	"com.apple.system.opendirectoryd.libinfo",    // users and groups: getpwuid, ~ expansion, ssh, git
	"com.apple.system.opendirectoryd.membership", // group membership checks
	"com.apple.system.logger",                    // asl logging from libraries
	"com.apple.logd",                             // os_log from libraries
	"com.apple.trustd",                           // TLS certificate evaluation (curl, git over https)
	"com.apple.trustd.agent",                     // the same, per user
	"com.apple.ocspd",                            // certificate revocation checks
	"com.apple.bsd.dirhelper",                    // confstr(_CS_DARWIN_USER_TEMP_DIR)
	"com.apple.system.notification_center",       // notify(3): time zone and similar changes
	"com.apple.PowerManagement.control",          // node's and python's power queries
}

// Devices every tool writes to; reads are allowed with the rest of /dev.
var writableDevices = []string{"/dev/null", "/dev/zero", "/dev/dtracehelper", "/dev/tty"}

// Plan is what Profile needs beyond the Spec: the places that exist only
// for this execution.
type Plan struct {
	// TempDir is the execution's private temporary directory (TMPDIR),
	// writable; "" for none.
	TempDir string
	// ProxyPort is the egress proxy's port on localhost, from
	// Spec.Egress.Addr; 0 means no network at all.
	ProxyPort int
}

// PlanFor returns the Plan of spec with its private temporary directory
// tmp. It fails when spec's egress address is not a loopback TCP address.
func PlanFor(spec *sandbox.Spec, tmp string) (Plan, error) {
	p := Plan{TempDir: tmp}
	if spec.Egress != nil && spec.Egress.Addr != "" {
		ap, err := netip.ParseAddrPort(spec.Egress.Addr)
		if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
			return p, fmt.Errorf("egress proxy address %q: want 127.0.0.1:PORT", spec.Egress.Addr)
		}
		p.ProxyPort = int(ap.Port())
	}
	return p, nil
}

// Profile returns the SBPL profile of spec under plan. Every path in it
// is a string literal, escaped: no path can change the profile's
// structure. A path holding a control character (a newline among them),
// or one that is not absolute, is refused with an error naming it: the
// execution then does not start.
//
// spec.WriteDeny entries that are relative (names, as in
// sandbox.DefaultWriteDeny) are applied at each workspace root; absolute
// ones (the runner adds the names found in each repository below a root)
// as they are.
func Profile(spec *sandbox.Spec, plan Plan) (string, error) {
	var errs []error
	lits := func(field string, paths []string) []string {
		var out []string
		for i, p := range paths {
			s, err := pathLiteral(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
				continue
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	roots := lits("workspace_roots", spec.WorkspaceRoots)
	var writeDeny []string
	for _, name := range spec.WriteDeny {
		if filepath.IsAbs(name) {
			writeDeny = append(writeDeny, filepath.Clean(name))
			continue
		}
		rel := filepath.Clean(name)
		if rel == "." || strings.HasPrefix(rel, "..") {
			errs = append(errs, fmt.Errorf("write_deny: %q does not name a path inside a workspace root", name))
			continue
		}
		for _, r := range spec.WorkspaceRoots {
			writeDeny = append(writeDeny, filepath.Join(r, rel))
		}
	}
	denyWrite := lits("write_deny", writeDeny)
	denyRead := lits("deny_read", spec.DenyRead)
	var readable []string
	if spec.CredDir != "" {
		readable = append(readable, spec.CredDir)
	}
	for _, p := range spec.Pins {
		readable = append(readable, p.Source)
	}
	exceptions := lits("readable", readable)
	writable := slices.Clone(roots)
	if plan.TempDir != "" {
		writable = append(writable, lits("tmpdir", []string{plan.TempDir})...)
	}
	if tc := spec.ToolCache; tc != nil {
		writable = append(writable, lits("tool_cache", []string{tc.Dir})...)
		// The other agents' caches are not this one's to read.
		if cache := lits("tool_cache", []string{tc.Root}); len(cache) > 0 {
			denyRead = append(denyRead, cache...)
			exceptions = append(exceptions, lits("tool_cache", []string{tc.Dir})...)
		}
	}
	if plan.ProxyPort < 0 || plan.ProxyPort > 65535 {
		errs = append(errs, fmt.Errorf("proxy port %d out of range", plan.ProxyPort))
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}

	var b strings.Builder
	w := func(s ...string) {
		for _, x := range s {
			b.WriteString(x)
		}
		b.WriteByte('\n')
	}
	// rule writes a rule: head, then each of items as filter makes it, one
	// a line, then the closing parenthesis.
	rule := func(head string, items []string, filter func(string) string) {
		w(head)
		for _, it := range items {
			w("  ", filter(it))
		}
		w(")")
	}
	// named is the filter (KIND "item").
	named := func(kind string) func(string) string {
		return func(s string) string { return "(" + kind + " " + quote(s) + ")" }
	}
	w("(version 1)")
	w("(deny default)")
	w()
	w("; Processes: the command and what it starts, among themselves.")
	w("(allow process-fork)")
	w("(allow process-exec)")
	w("(allow process-info* (target same-sandbox))")
	w("(allow signal (target same-sandbox))")
	w()
	w("; Host facts common tools read.")
	w("(allow sysctl-read)")
	w("(allow user-preference-read)")
	w("(allow mach-host*)")
	w("(allow ipc-posix-sem)")
	w()
	w("; Mach services (seatbelt.MachServices).")
	rule("(allow mach-lookup", MachServices, named("global-name"))
	w()
	w("; Terminals: ptys the command opens itself.")
	w("(allow pseudo-tty)")
	w(`(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))`)
	w(`(allow file-read* file-write* file-ioctl (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))`)
	w()
	w("; Reads: everything but the deny-read set, which may not be written either.")
	w("(allow file-read*)")
	// A deny-read path, less the execution's own places inside it.
	hidden := func(d string) string {
		f := "(subpath " + quote(d) + ")"
		var except []string
		for _, e := range exceptions {
			if e != d && sandbox.Within(e, d) {
				except = append(except, "(require-not (subpath "+quote(e)+"))")
			}
		}
		if len(except) == 0 {
			return f
		}
		return "(require-all " + f + " " + strings.Join(except, " ") + ")"
	}
	if len(denyRead) > 0 {
		rule("(deny file-read* file-write*", denyRead, hidden)
	}
	if len(exceptions) > 0 {
		w("; The execution's own credential files, pinned copies and tool cache.")
		rule("(allow file-read*", exceptions, named("subpath"))
	}
	w()
	w("; Writes: the workspace roots and the private temporary directory,")
	w("; never the write-deny or the deny-read set.")
	if len(writable) > 0 {
		w("(allow file-write*")
		w("  (require-all")
		w("    (require-any")
		for _, r := range writable {
			w("      (subpath ", quote(r), ")")
		}
		w("    )")
		anchors := anchorsOf(writable, append(slices.Clone(denyWrite), denyRead...))
		if len(denyWrite)+len(denyRead)+len(anchors) > 0 {
			w("    (require-not")
			w("      (require-any")
			for _, d := range denyWrite {
				w("        (subpath ", quote(d), ")")
			}
			for _, a := range anchors {
				w("        (literal ", quote(a), ")")
			}
			for _, d := range denyRead {
				w("        ", hidden(d))
			}
			w("      )")
			w("    )")
		}
		w("  )")
		w(")")
	}
	rule("(allow file-write-data file-ioctl", writableDevices, named("literal"))
	w()
	if plan.ProxyPort > 0 {
		w("; Network: the execution's egress proxy, nothing else.")
		w("(allow network-outbound (remote tcp ", quote("localhost:"+strconv.Itoa(plan.ProxyPort)), "))")
	} else {
		w("; Network: none (no egress proxy).")
	}
	return b.String(), nil
}

// anchorsOf returns the directories from each writable root down to each
// denied path inside it (the root included, the path not): they may not be
// renamed, removed or replaced themselves, or a command could move a
// protected directory aside, change what is in it where it is writable,
// and move it back. What is inside them stays writable.
func anchorsOf(writable, denied []string) []string {
	var out []string
	for _, d := range denied {
		for _, w := range writable {
			if d == w || !sandbox.Within(d, w) {
				continue
			}
			for a := filepath.Dir(d); sandbox.Within(a, w); a = filepath.Dir(a) {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
				if a == w {
					break
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// pathLiteral checks that p can be named in a profile and returns it
// cleaned.
func pathLiteral(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%q holds a control character, which a sandbox profile cannot name safely", p)
		}
	}
	return filepath.Clean(p), nil
}

// quote returns s as an SBPL (Scheme) string literal: in one, only the
// backslash and the double quote are special, and both are escaped.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
