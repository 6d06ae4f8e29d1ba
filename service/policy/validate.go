package policy

// This file judges values: each check below looks at one field and says
// what is wrong with it and what is allowed. Checks are per field, so
// validating each file's values where they were written covers the
// effective configuration too.

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/scale"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

// A numberRule bounds a numeric field. max 0 means unbounded.
type numberRule struct {
	min, max int64
	size     bool // the field is a ByteSize: print bounds with units
}

func (r numberRule) format(n int64) string {
	if r.size {
		return ByteSize(n).String()
	}
	return strconv.FormatInt(n, 10)
}

// numberRules bounds every numeric field.
var numberRules = map[string]numberRule{
	"exec.limits.max_timeout_seconds":        {min: 1, max: 86400},
	"exec.limits.stdin_max_bytes":            {min: 1, max: int64(64 * MiB), size: true},
	"exec.limits.output_max_bytes":           {min: int64(KiB), size: true},
	"exec.limits.memory_max":                 {min: 1, size: true},
	"exec.limits.pids_max":                   {min: 16},
	"exec.limits.tmpfs_size":                 {min: int64(MiB), size: true},
	"exec.sandbox.cache_max":                 {min: int64(64 * MiB), size: true},
	"exec.sandbox.warm_pool":                 {min: 0, max: 16},
	"exec.sandbox.session_idle_seconds":      {min: 0, max: 86400},
	"exec.limits.file_size_max":              {min: 1, size: true},
	"exec.limits.max_concurrent":             {min: 1, max: 256},
	"exec.limits.ticket_ttl_seconds":         {min: 5, max: 3600},
	"exec.limits.max_pending_tickets":        {min: 1, max: 4096},
	"policy.exec_timeout_seconds":            {min: 1, max: 3600},
	"policy.approval_timeout_seconds":        {min: 5, max: 600},
	"policy.egress_approval_timeout_seconds": {min: 5, max: 600},
	"exec.audit.retention_days":              {min: 1, max: 36500},
	"exec.audit.retention_events":            {min: 100},
	"exec.audit.output_max_bytes":            {min: 0, max: int64(64 * MiB), size: true},

	"exec.audit.export.otlp.batch_size":               {min: 1, max: 10000},
	"exec.audit.export.otlp.timeout_seconds":          {min: 1, max: 300},
	"exec.audit.export.otlp.retry_initial_backoff_ms": {min: 10, max: 600000},
	"exec.audit.export.otlp.retry_max_backoff_ms":     {min: 100, max: 3600000},
	"exec.dashboard.port":                             {min: 0, max: 65535},
}

// Limits on lists.
const maxWorkspaceRoots = 32

// The enumerated fields' vocabularies, each an ordered table from the
// widest value to the narrowest: messages list them in this order and
// managed narrowing ranks by it (narrow.go). The sandbox's are the
// sandbox package's (sandbox.Backends, SeccompLevels, ReadPostures), the
// actions are Actions (rules.go).
var (
	routings      = scale.Of(scale.Step{"framework"}, scale.Step{"governed_shell"})
	analysisModes = scale.Of(scale.Step{"off"}, scale.Step{"enforce"})
	termControls  = scale.Of(scale.Step{"keep"}, scale.Step{"escape"})
)

// enums are the fields whose value is one of a scale.
var enums = map[string]scale.Scale{
	"exec.sandbox.backend":          sandbox.Backends,
	"exec.sandbox.seccomp":          sandbox.SeccompLevels,
	"exec.sandbox.read":             sandbox.ReadPostures,
	"policy.builtin_exec_routing":   routings,
	"policy.command_analysis_mode":  analysisModes,
	"policy.default_action":         Actions,
	"policy.dynamic_action":         Actions,
	"exec.output.terminal_controls": termControls,
	"policy.credential_mode":        credentialModes,
	"policy.egress_unknown":         EgressUnknownModes,
}

// envName is a portable environment variable name.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// reservedEnv are variables an agent may never set: they decide what the
// shell runs before the command, where programs and libraries are found,
// or belong to Gatehouse itself.
var reservedEnv = []string{
	"PATH", "HOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "BASH_ENV", "ENV",
	"SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PROMPT_COMMAND", "CDPATH",
	"GLOBIGNORE", "BASH_XTRACEFD", "BASH_LOADABLES_PATH",
}

// reservedEnvPrefixes extend reservedEnv to whole families: Gatehouse's own
// variables, exported bash functions, and the dynamic loaders' knobs
// (LD_AUDIT, DYLD_INSERT_LIBRARIES...).
var reservedEnvPrefixes = []string{"GATEHOUSE_", "BASH_FUNC_", "LD_", "DYLD_"}

func isReservedEnv(name string) bool {
	return slices.Contains(reservedEnv, name) ||
		slices.ContainsFunc(reservedEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// Validate checks c on its own, without files: errors name the field but
// no file or line. Configurations from Load are already validated; this is
// for a Config built in code.
func (c *Config) Validate() error {
	errs := validate(c, func(string) Source { return Source{} }, func(string, int) Source { return Source{} },
		func(string) bool { return true })
	for _, err := range errs {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.File = ""
		}
	}
	if len(errs) == 0 {
		errs = checkCredentialBindings(c, func(string) Source { return Source{} })
		for _, err := range errs {
			var fe *FieldError
			if errors.As(err, &fe) {
				fe.File, fe.Line = "", 0
			}
		}
	}
	return errors.Join(errs...)
}

// validator runs the checks over one Config.
type validator struct {
	src     func(p string) Source        // where field p was set
	itemSrc func(p string, i int) Source // where entry i of list p was set
	errs    []error
}

func (v *validator) failf(p, format string, args ...any) {
	v.errs = append(v.errs, errAt(v.src(p), p, format, args...))
}

func (v *validator) failItemf(p string, i int, format string, args ...any) {
	v.errs = append(v.errs, errAt(v.itemSrc(p, i), fmt.Sprintf("%s[%d]", p, i), format, args...))
}

// validate checks the fields of c for which include is true, locating
// errors with src and itemSrc, and returns one *FieldError per problem, in
// field order.
func validate(c *Config, src func(string) Source, itemSrc func(string, int) Source, include func(string) bool) []error {
	v := &validator{src: src, itemSrc: itemSrc}
	for _, lf := range leaves() {
		if include(lf.path) {
			v.check(lf.path, leafValue(c, lf.path))
		}
	}
	return v.errs
}

// check validates the value val of the leaf field p.
func (v *validator) check(p string, val any) {
	if r, ok := numberRules[p]; ok {
		n := toInt64(val)
		switch {
		case r.max != 0 && (n < r.min || n > r.max):
			v.failf(p, "%s is out of range; want %s to %s", r.format(n), r.format(r.min), r.format(r.max))
		case n < r.min:
			v.failf(p, "%s is too small; want at least %s", r.format(n), r.format(r.min))
		}
		return
	}
	if strings.HasPrefix(p, exportPrefix) {
		v.validateExport(p, val)
		return
	}
	if e, ok := enums[p]; ok {
		if s := val.(string); !e.Has(s) {
			v.failf(p, "%q is not one of %s", s, e)
		}
		return
	}
	switch p {
	case "exec.shell":
		s := val.(string)
		switch base := path.Base(s); {
		case !path.IsAbs(s):
			v.failf(p, "%q: must be an absolute path, like /bin/bash", s)
		case base != "bash" && base != "sh":
			v.failf(p, "%q: basename must be bash or sh", s)
		}
	case "exec.default_cwd":
		if s := val.(string); !path.IsAbs(s) {
			v.failf(p, "%s", notAbsolute(s))
		}
	case "policy.rules":
		v.validateRules(p, val.(Rules))
	case "exec.credentials.env":
		v.validateMap(p, val.(CredentialEnv).problems())
	case "exec.credentials.files":
		v.validateMap(p, val.(CredentialFiles).problems())
	case "policy.credential_grants":
		v.validateMap(p, val.(CredentialGrants).problems())
	case "policy.egress_allowlist_by_agent":
		v.validateMap(p, val.(EgressByAgent).problems())
	case "policy.dlp_patterns":
		v.validateMap(p, val.(DLPPatterns).problems())
	case "policy.disabled_builtin_rules":
		v.validateDisabledBuiltins(p, val.([]string))
	case "exec.egress.allowed_ports":
		for i, port := range val.([]int) {
			if port < 1 || port > 65535 {
				v.failItemf(p, i, "%d is not a port; want 1 to 65535", port)
			}
		}
	case "exec.egress.denied_cidrs":
		for i, s := range val.([]string) {
			c, err := netip.ParsePrefix(s)
			switch {
			case err != nil:
				v.failItemf(p, i, "%q is not a CIDR; want a range like 10.0.0.0/8 or fd00::/8 (a single address is 192.0.2.7/32)", s)
			case c.Addr().Zone() != "":
				v.failItemf(p, i, "%q carries a zone; zones are not supported", s)
			case c.Masked() != c:
				v.failItemf(p, i, "%q has bits set past the prefix length; write %q", s, c.Masked().String())
			}
		}
	case "policy.egress_allowlist", "policy.egress_denylist":
		for i, s := range val.([]string) {
			if _, err := egress.ParseEntry(s); err != nil {
				v.failItemf(p, i, "%q %v", s, err)
			}
		}
	case "exec.sandbox.bwrap_path":
		if s := val.(string); s != "" && !path.IsAbs(s) {
			v.failf(p, `%q is not an absolute path; want a path like /usr/bin/bwrap, or "" to find bwrap in PATH`, s)
		}
	case "exec.sandbox.init_path":
		if s := val.(string); s != "" && !path.IsAbs(s) {
			v.failf(p, `%q is not an absolute path; want a path like /usr/lib/gatehouse/gatehouse-init, or "" to find gatehouse-init next to gatehouse`, s)
		}
	case "exec.sandbox.deny_read", "policy.script_inspection_roots", "exec.egress.upstream_ca_files":
		for i, s := range val.([]string) {
			if !path.IsAbs(s) {
				v.failItemf(p, i, "%s", notAbsolute(s))
			}
		}
	case "exec.sandbox.read_allow":
		for i, s := range val.([]string) {
			switch {
			case !path.IsAbs(s):
				v.failItemf(p, i, "%s", notAbsolute(s))
			case s == "/":
				v.failItemf(p, i, `"/" is the whole filesystem; that is read: host`)
			}
		}
	case "exec.sandbox.settings_file":
		if s := val.(string); s != "" && !path.IsAbs(s) {
			v.failf(p, "%s", notAbsolute(s))
		}
	case "exec.sandbox.write_deny":
		for i, s := range val.([]string) {
			if msg := notLocal(s); msg != "" {
				v.failItemf(p, i, "%s", msg)
			}
		}
	case "exec.env.agent_settable":
		for i, s := range val.([]string) {
			switch {
			case !envName().MatchString(s):
				v.failItemf(p, i, "%q is not an environment variable name; want letters, digits and _, not starting with a digit", s)
			case isReservedEnv(s):
				v.failItemf(p, i, "%q is reserved: it changes how the shell starts or programs load, so agents may never set it", s)
			}
		}
	case "policy.workspace_roots":
		roots := val.([]string)
		if len(roots) > maxWorkspaceRoots {
			v.failf(p, "%d entries is too many; want at most %d", len(roots), maxWorkspaceRoots)
		}
		for i, s := range roots {
			switch {
			case !path.IsAbs(s):
				v.failItemf(p, i, "%s", notAbsolute(s))
			case s == "/":
				v.failItemf(p, i, `"/" is the whole filesystem; want a directory like ~/src`)
			case slices.Contains(roots[:i], s):
				v.failItemf(p, i, "%q is listed twice; remove one", s)
			}
		}
	}
}

// notAbsolute explains why s, which is not absolute, is refused.
func notAbsolute(s string) string {
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		return fmt.Sprintf(`%q is not an absolute path: "~" cannot be expanded without a home directory`, s)
	case strings.HasPrefix(s, "~"):
		return fmt.Sprintf(`%q is not an absolute path; only "~" and "~/" expand, to your home directory`, s)
	}
	return fmt.Sprintf("%q is not an absolute path; want one starting with / or ~/", s)
}

// notLocal explains why s is not a clean relative path inside a root, or
// returns "" when it is one.
func notLocal(s string) string {
	const want = "want a clean relative path like .git/hooks"
	switch {
	case s == "" || s == ".":
		return fmt.Sprintf("%q names the root itself; %s", s, want)
	case path.IsAbs(s):
		return fmt.Sprintf("%q is absolute; %s", s, want)
	case slices.Contains(strings.Split(s, "/"), ".."):
		return fmt.Sprintf("%q contains \"..\"; %s", s, want)
	case path.Clean(s) != s:
		return fmt.Sprintf("%q is not clean; write %q", s, path.Clean(s))
	}
	return ""
}
